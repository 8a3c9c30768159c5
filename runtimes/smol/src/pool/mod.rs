//! [`Pool`]: several MCP connections behind one handle, with the typed API of a single
//! [`Client`] ([`ClientApi`](crate::ClientApi)).
//!
//! Each member is added with a *connector*, a closure that makes a new [`Client`], so that a
//! member whose connection dies can be restarted (the MCP specification says a client SHOULD
//! restart a crashed stdio server). One supervisor task per member waits for its connection to
//! end; it holds only a `Weak` reference to the pool, so dropping the last [`Pool`] handle stops
//! the supervisors and closes the members.
//!
//! The pool's mutex is only ever held for short synchronous sections, never across an await.
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | the public types ([`Pool`], [`PoolBuilder`], [`Strategy`], the reports) and the pool's own methods |
//! | `api.rs` | [`ClientApi`] for [`Pool`]: each request sent through one member |
//! | `routing.rs` | choosing a member for a request by the strategy, counting it busy ([`Checkout`](routing::Checkout)), a refusal sent to another member |
//! | `supervisor.rs` | a member's life after its first connection: its end noticed, restarts with backoff, removal |
//!
//! Time (a member's connection time, the restart backoff) comes from the pool's
//! [`Clock`](crate::Clock) ([`PoolBuilder::clock`]).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_sansio::Status;

use crate::ClientBuilder;
use crate::Error;
use crate::call::CallOptions;
use crate::client::Client;
use crate::clock::{AsyncIoClock, Clock};
use crate::locks::{self, OrderedMutex};
use crate::stdio::ServerCommand;

mod api;
mod routing;
mod supervisor;

use routing::pool_closed;
use supervisor::{connect_once, supervise};

/// A restarted member that stays connected this long (or the maximal restart backoff, if
/// longer) counts as recovered: its count of restart attempts in a row starts again from zero.
const STABLE_AFTER: Duration = Duration::from_secs(10);

/// How a [`Pool`] picks the member for each request.
///
/// ```
/// use mcp_smol::{Pool, Strategy};
///
/// let pool = Pool::new(Strategy::LeastBusy);
/// assert_eq!(Strategy::default(), Strategy::RoundRobin);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Strategy {
    /// Each live member in turn.
    #[default]
    RoundRobin,
    /// A live member chosen at random (uniformly).
    Random,
    /// The live member with the fewest requests in flight through the pool (a running
    /// [`transaction`](Pool::transaction) counts as one); ties go round-robin.
    LeastBusy,
}

/// The identity of a member of a [`Pool`]; it stays the same across restarts.
///
/// ```no_run
/// # smol::block_on(async {
/// # let pool = mcp_smol::Pool::default();
/// # let command = mcp_smol::ServerCommand::new("mcp-demo-server");
/// use mcp_smol::ClientBuilder;
/// use mcp_smol::mcp_sansio::schema::Implementation;
///
/// let id = pool.add_stdio(|| ClientBuilder::new(Implementation::new("app", "1.0.0")), &command).await?;
/// println!("added member {id}");
/// # Ok::<(), mcp_smol::Error>(()) });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MemberId(u64);

impl fmt::Display for MemberId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Where a member of a [`Pool`] is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MemberStatus {
    /// Connected: it takes requests.
    Live,
    /// Its connection just ended; it takes no requests and is about to be restarted (or removed,
    /// when restarting is off).
    Dead,
    /// Its connection ended and it is being reconnected (waiting for its backoff, or connecting);
    /// it takes no requests meanwhile.
    Restarting,
}

/// What [`Pool::members`] reports about one member.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct MemberInfo {
    /// The member's identity.
    pub id: MemberId,
    /// Whether it takes requests.
    pub status: MemberStatus,
    /// Requests in flight through the pool on it now (a running transaction counts as one).
    pub in_flight: usize,
    /// Requests the pool sent to it that have finished, successful or not (calls made inside a
    /// transaction are not seen by the pool: see [`transactions`](MemberInfo::transactions)).
    pub requests: u64,
    /// Of those, the ones that failed (an `Err`; a tool's own error result is a success here).
    pub failed: u64,
    /// Transactions that checked it out.
    pub transactions: u64,
    /// Times it was restarted after its connection ended.
    pub restarts: u64,
    /// The server's process id, for stdio servers, while connected.
    pub server_pid: Option<u32>,
    /// The engine's counters of the current connection ([`Client::stats`]), while connected.
    pub connection: Option<mcp_sansio::Stats>,
}

/// The counters of a [`Pool`], from [`Pool::stats`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PoolStats {
    /// Members taking requests now.
    pub live: usize,
    /// Members whose connection ended, not yet restarted.
    pub down: usize,
    /// Requests the pool was asked for and finished (successful or not), transactions excluded.
    pub requests: u64,
    /// Of those, the ones that failed, including those that found no live member.
    pub failed: u64,
    /// Requests refused by a member that was closing before anything was sent, and sent to
    /// another member instead.
    pub retried: u64,
    /// Transactions run.
    pub transactions: u64,
    /// Member connections that ended without being removed or closed by the application.
    pub deaths: u64,
    /// Successful restarts.
    pub restarts: u64,
    /// Members removed by the pool itself: their connection ended while restarting was off, or
    /// every one of their restart attempts in a row failed.
    pub lost: u64,
    /// Every member, by id.
    pub members: Vec<MemberInfo>,
}

/// Configures a [`Pool`]: the selection [`Strategy`] and what happens when a member's
/// connection ends.
///
/// ```
/// use std::time::Duration;
/// use mcp_smol::{Pool, Strategy};
///
/// let pool = Pool::builder()
///     .strategy(Strategy::Random)
///     .restart_backoff(Duration::from_millis(50), Duration::from_secs(2))
///     .max_restart_attempts(3)
///     .build();
/// ```
#[derive(Debug, Clone)]
pub struct PoolBuilder {
    config: Config,
    clock: Arc<dyn Clock>,
}

#[derive(Debug, Clone, Copy)]
struct Config {
    strategy: Strategy,
    restart: bool,
    backoff_initial: Duration,
    backoff_max: Duration,
    max_restart_attempts: u32,
}

impl Default for PoolBuilder {
    fn default() -> Self {
        Self {
            config: Config {
                strategy: Strategy::RoundRobin,
                restart: true,
                backoff_initial: Duration::from_millis(100),
                backoff_max: Duration::from_secs(5),
                max_restart_attempts: 5,
            },
            clock: Arc::new(AsyncIoClock),
        }
    }
}

impl PoolBuilder {
    /// How members are picked (default [`Strategy::RoundRobin`]).
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.config.strategy = strategy;
        self
    }

    /// Whether a member whose connection ended is reconnected through its connector (default
    /// `true`). When `false`, it is removed at once.
    pub fn restart(mut self, restart: bool) -> Self {
        self.config.restart = restart;
        self
    }

    /// The wait before the first restart attempt (default 100 ms), doubled after each failed
    /// attempt up to `max` (default 5 s).
    pub fn restart_backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.config.backoff_initial = initial;
        self.config.backoff_max = max.max(initial);
        self
    }

    /// Restart attempts in a row after which a member is removed (default 5). An attempt that
    /// connects but whose connection ends again within 10 s (or the maximal backoff, if longer)
    /// counts towards them too, so a server that crashes at once is not restarted forever.
    pub fn max_restart_attempts(mut self, attempts: u32) -> Self {
        self.config.max_restart_attempts = attempts;
        self
    }

    /// Where the pool gets the time and its timers: [`AsyncIoClock`] by default. The restart
    /// backoff and the time a restarted member must stay connected to count as recovered are
    /// measured in it. (Each member's connection has its own clock, set by its builder.)
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The pool, with no member yet.
    pub fn build(self) -> Pool {
        let seed = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        static POOLS: AtomicU64 = AtomicU64::new(0);
        let seed = seed ^ POOLS.fetch_add(1, Ordering::Relaxed).wrapping_mul(0xA076_1D64_78BD_642F);
        Pool {
            inner: Arc::new(Inner {
                config: self.config,
                clock: self.clock,
                state: OrderedMutex::new(State::default()),
                counters: Arc::new(PoolCounters::default()),
                rng: AtomicU64::new(seed),
            }),
            defaults: None,
        }
    }
}

/// Several MCP connections behind one handle: to one server several times, or to several
/// servers. It offers the typed API of a single client ([`ClientApi`](crate::ClientApi)), routing each request to
/// one live member by its [`Strategy`].
///
/// - **Members** are added with a connector ([`add`](Self::add), [`add_stdio`](Self::add_stdio))
///   and removed with [`remove`](Self::remove), at any time.
/// - **A dead member** (its connection ended: the server crashed, was killed, or the transport
///   broke) is never picked again. Calls that were in flight on it fail with its error; nobody
///   else notices. It is restarted through its connector with backoff, or removed after too many
///   failed attempts in a row, or at once when restarting is off ([`PoolBuilder`]). A request
///   that a closing member refused before sending anything is sent to another member.
/// - **Listings** (`list_all_*`) fetch every page from one member: cursors belong to a server.
///   A single page asked for with a cursor ([`list_tools`](crate::ClientApi::list_tools), …) may go to
///   another member than the page before; use [`transaction`](Self::transaction) to page by hand.
/// - [`transaction`](Self::transaction) runs several calls on one member. Subscriptions and
///   notifications belong to one connection too: make them through a transaction's client or
///   [`client`](Self::client).
/// - [`stats`](Self::stats) and [`members`](Self::members) report what happened.
///
/// `Pool` is a cheap `Clone + Send + Sync` handle. [`close`](Self::close) closes every member;
/// dropping the last handle does the same without waiting.
///
/// ```no_run
/// use mcp_smol::{ClientApi, ClientBuilder, Pool, ServerCommand, Strategy};
/// use mcp_smol::mcp_sansio::schema::Implementation;
///
/// fn main() -> Result<(), mcp_smol::Error> {
///     smol::block_on(async {
///         let pool = Pool::new(Strategy::LeastBusy);
///         let command = ServerCommand::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]);
///         for _ in 0..3 {
///             pool.add_stdio(|| ClientBuilder::new(Implementation::new("my-app", "1.0.0")), &command).await?;
///         }
///         let result = pool.call_tool("echo", serde_json::json!({"message": "hi"})).await?;
///         println!("{:?}", result.content[0].as_text());
///         println!("{:?}", pool.stats());
///         pool.close().await;
///         Ok(())
///     })
/// }
/// ```
#[derive(Clone)]
pub struct Pool {
    inner: Arc<Inner>,
    /// Options for every call of this handle, under the call's own ([`Pool::with_options`]).
    defaults: Option<Arc<CallOptions>>,
}

impl Default for Pool {
    /// A round-robin pool with the default restart policy.
    fn default() -> Self {
        PoolBuilder::default().build()
    }
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.lock();
        f.debug_struct("Pool")
            .field("strategy", &self.inner.config.strategy)
            .field("members", &state.members.len())
            .field("closed", &state.closed)
            .finish_non_exhaustive()
    }
}

type ConnectFuture = Pin<Box<dyn Future<Output = Result<Client, Error>> + Send>>;
type ConnectFn = dyn Fn() -> ConnectFuture + Send + Sync;

struct Inner {
    config: Config,
    /// Where the pool gets the time and its timers ([`PoolBuilder::clock`]).
    clock: Arc<dyn Clock>,
    state: OrderedMutex<State, { locks::POOL }>,
    counters: Arc<PoolCounters>,
    rng: AtomicU64,
}

#[derive(Default)]
struct State {
    members: Vec<Member>,
    next_id: u64,
    /// Turns for round-robin (and the tie-break of least-busy).
    cursor: usize,
    closed: bool,
    deaths: u64,
    restarts: u64,
    lost: u64,
}

struct Member {
    id: MemberId,
    connect: Arc<ConnectFn>,
    /// The current connection; `None` while restarting.
    client: Option<Client>,
    /// Counts connections, so that a supervisor reports only the death of its own.
    generation: u64,
    connected_at: Instant,
    /// Restart attempts in a row before the current connection.
    attempts: u32,
    restarts: u64,
    counters: Arc<MemberCounters>,
    /// Dropped with the member: its supervisor task sees the channel close and ends.
    _stop: async_channel::Sender<()>,
}

#[derive(Default)]
struct MemberCounters {
    in_flight: AtomicUsize,
    requests: AtomicU64,
    failed: AtomicU64,
    transactions: AtomicU64,
}

#[derive(Default)]
struct PoolCounters {
    requests: AtomicU64,
    failed: AtomicU64,
    retried: AtomicU64,
    transactions: AtomicU64,
}

impl Pool {
    /// An empty pool picking members by `strategy`, with the default restart policy (see
    /// [`PoolBuilder`]).
    ///
    /// ```
    /// let pool = mcp_smol::Pool::new(mcp_smol::Strategy::RoundRobin);
    /// assert!(pool.members().is_empty());
    /// ```
    pub fn new(strategy: Strategy) -> Self {
        PoolBuilder::default().strategy(strategy).build()
    }

    /// A builder for a pool with a restart policy of its own.
    ///
    /// ```
    /// let pool = mcp_smol::Pool::builder().restart(false).build();
    /// ```
    pub fn builder() -> PoolBuilder {
        PoolBuilder::default()
    }

    /// Another handle to the same pool whose calls all use `options`, on whichever member they
    /// go to: every typed method of [`ClientApi`](crate::ClientApi), and the client a
    /// [`transaction`](Self::transaction) gets. A call's own options win where they set
    /// something (see [`Client::with_options`]).
    ///
    /// ```no_run
    /// # smol::block_on(async {
    /// # let pool = mcp_smol::Pool::default();
    /// use std::time::Duration;
    /// use mcp_smol::prelude::*;
    ///
    /// let quick = pool.with_options(CallOptions::default().timeout(Duration::from_secs(2)));
    /// quick.ping().await?;
    /// # Ok::<(), mcp_smol::Error>(()) });
    /// ```
    pub fn with_options(&self, options: CallOptions) -> Pool {
        Pool { inner: self.inner.clone(), defaults: Some(Arc::new(self.options(options))) }
    }

    /// The options a call is made with: its own, over this handle's.
    fn options(&self, options: CallOptions) -> CallOptions {
        match &self.defaults {
            Some(defaults) => options.over(defaults),
            None => options,
        }
    }

    /// Adds a member made by `connect`, which is called now and again for each restart. Fails,
    /// adding nothing, if this first connection fails (it waits for the handshake).
    ///
    /// Any transport works: this adds an HTTP server through `mcp_hyper`.
    ///
    /// ```no_run
    /// # smol::block_on(async {
    /// # fn transport() -> impl mcp_smol::HttpTransport { unimplemented!() as std::sync::Arc<dyn mcp_smol::HttpTransport> }
    /// use mcp_smol::{ClientBuilder, Pool};
    /// use mcp_smol::mcp_sansio::http::HttpConfig;
    /// use mcp_smol::mcp_sansio::schema::Implementation;
    ///
    /// let pool = Pool::default();
    /// // `transport()` stands for `mcp_hyper::HyperTransport::new()`.
    /// pool.add(|| {
    ///     ClientBuilder::new(Implementation::new("my-app", "1.0.0"))
    ///         .spawn_http(HttpConfig::new("http://127.0.0.1:3000/mcp"), transport())
    /// })
    /// .await?;
    /// # Ok::<(), mcp_smol::Error>(()) });
    /// ```
    pub async fn add<F, Fut>(&self, connect: F) -> Result<MemberId, Error>
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Client, Error>> + Send + 'static,
    {
        if self.inner.lock().closed {
            return Err(pool_closed());
        }
        let connect: Arc<ConnectFn> = Arc::new(move || -> ConnectFuture { Box::pin(connect()) });
        let client = connect_once(&connect).await?;
        let (stop, stopped) = async_channel::bounded(1);
        let added = {
            let mut state = self.inner.lock();
            if state.closed {
                None
            } else {
                let id = MemberId(state.next_id);
                state.next_id += 1;
                state.members.push(Member {
                    id,
                    connect,
                    client: Some(client.clone()),
                    generation: 0,
                    connected_at: self.inner.clock.now(),
                    attempts: 0,
                    restarts: 0,
                    counters: Arc::default(),
                    _stop: stop,
                });
                Some(id)
            }
        };
        let Some(id) = added else {
            client.close().await;
            return Err(pool_closed());
        };
        tracing::debug!(member = %id, pid = ?client.server_pid(), "pool member added");
        smol::spawn(supervise(Arc::downgrade(&self.inner), id, 0, client, stopped)).detach();
        Ok(id)
    }

    /// Adds a stdio server as a member: `builder()` makes a fresh [`ClientBuilder`] for each
    /// (re)start ([`ClientBuilder::spawn_stdio`], the driver runs on a thread of its own).
    ///
    /// ```no_run
    /// # smol::block_on(async {
    /// use mcp_smol::{ClientBuilder, Pool, ServerCommand};
    /// use mcp_smol::mcp_sansio::schema::Implementation;
    ///
    /// let pool = Pool::default();
    /// let command = ServerCommand::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]);
    /// let id = pool.add_stdio(|| ClientBuilder::new(Implementation::new("my-app", "1.0.0")), &command).await?;
    /// # Ok::<(), mcp_smol::Error>(()) });
    /// ```
    pub async fn add_stdio(
        &self,
        builder: impl Fn() -> ClientBuilder + Send + Sync + 'static,
        command: &ServerCommand,
    ) -> Result<MemberId, Error> {
        let command = command.clone();
        self.add(move || {
            let builder = builder();
            let command = command.clone();
            async move { builder.spawn_stdio(&command).await }
        })
        .await
    }

    /// Removes a member: it takes no more requests from now on, its connection is closed (calls
    /// still in flight on it fail, as with [`Client::close`]), and this waits until its server
    /// process is gone. `false` if there is no such member.
    ///
    /// ```no_run
    /// # smol::block_on(async {
    /// # let pool = mcp_smol::Pool::default();
    /// for member in pool.members() {
    ///     if member.failed > 100 {
    ///         pool.remove(member.id).await;
    ///     }
    /// }
    /// # });
    /// ```
    pub async fn remove(&self, id: MemberId) -> bool {
        let member = {
            let mut state = self.inner.lock();
            let Some(index) = state.members.iter().position(|m| m.id == id) else { return false };
            state.members.remove(index)
        };
        tracing::debug!(member = %id, "pool member removed");
        if let Some(client) = &member.client {
            client.close().await;
        }
        true
    }

    /// Every member, by id.
    ///
    /// ```no_run
    /// # let pool = mcp_smol::Pool::default();
    /// for member in pool.members() {
    ///     println!("{} {:?}: {} requests, pid {:?}", member.id, member.status, member.requests, member.server_pid);
    /// }
    /// ```
    pub fn members(&self) -> Vec<MemberInfo> {
        self.inner.lock().members.iter().map(Member::info).collect()
    }

    /// The current connection of member `id` (it changes when the member is restarted), e.g. to
    /// read its [`server_info`](Client::server_info). `None` if there is no such member or it is
    /// restarting. Requests made through it bypass the pool's counters.
    ///
    /// ```no_run
    /// # let pool = mcp_smol::Pool::default();
    /// for member in pool.members() {
    ///     if let Some(client) = pool.client(member.id) {
    ///         println!("{} is {:?}", member.id, client.server_info());
    ///     }
    /// }
    /// ```
    pub fn client(&self, id: MemberId) -> Option<Client> {
        self.inner.lock().members.iter().find(|m| m.id == id)?.client.clone()
    }

    /// The pool's counters, with every member's.
    ///
    /// ```no_run
    /// # let pool = mcp_smol::Pool::default();
    /// let stats = pool.stats();
    /// println!("{} live, {} requests, {} failed, {} restarts", stats.live, stats.requests, stats.failed, stats.restarts);
    /// ```
    pub fn stats(&self) -> PoolStats {
        let (members, deaths, restarts, lost) = {
            let state = self.inner.lock();
            let members: Vec<MemberInfo> = state.members.iter().map(Member::info).collect();
            (members, state.deaths, state.restarts, state.lost)
        };
        let counters = &self.inner.counters;
        let live = members.iter().filter(|m| m.status == MemberStatus::Live).count();
        PoolStats {
            live,
            down: members.len() - live,
            requests: counters.requests.load(Ordering::Relaxed),
            failed: counters.failed.load(Ordering::Relaxed),
            retried: counters.retried.load(Ordering::Relaxed),
            transactions: counters.transactions.load(Ordering::Relaxed),
            deaths,
            restarts,
            lost,
            members,
        }
    }

    /// Runs `f` with one live member's [`Client`], so that all its calls go to the same server
    /// (a listing paged by hand, a resource subscribed and then read, a server with session
    /// state). The member counts as busy while `f` runs. Fails with the pool's error, without
    /// calling `f`, if no member is live.
    ///
    /// Do not keep the client beyond `f`: it would keep that connection open, and after a restart
    /// it is no longer the member's.
    ///
    /// ```no_run
    /// # smol::block_on(async {
    /// # let pool = mcp_smol::Pool::default();
    /// use mcp_smol::ClientApi;
    ///
    /// let (first, second) = pool
    ///     .transaction(|client| async move {
    ///         let first = client.list_tools(None).await?;
    ///         let second = match first.next_cursor.clone() {
    ///             Some(cursor) => Some(client.list_tools(Some(cursor)).await?),
    ///             None => None,
    ///         };
    ///         Ok::<_, mcp_smol::Error>((first, second))
    ///     })
    ///     .await?;
    /// # Ok::<(), mcp_smol::Error>(()) });
    /// ```
    pub async fn transaction<F, Fut, T, E>(&self, f: F) -> Result<T, E>
    where
        F: FnOnce(Client) -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: From<Error>,
    {
        let checkout = self.inner.checkout(None)?;
        checkout.member.transactions.fetch_add(1, Ordering::Relaxed);
        self.inner.counters.transactions.fetch_add(1, Ordering::Relaxed);
        let client = match &self.defaults {
            Some(defaults) => checkout.client.with_options(CallOptions::clone(defaults)),
            None => checkout.client.clone(),
        };
        let result = f(client).await;
        drop(checkout);
        result
    }

    /// Closes every member and stops restarting; waits until their server processes are gone.
    /// Later requests and [`add`](Self::add) fail.
    ///
    /// ```no_run
    /// # smol::block_on(async {
    /// # let pool = mcp_smol::Pool::default();
    /// pool.close().await;
    /// # });
    /// ```
    pub async fn close(&self) {
        let members = {
            let mut state = self.inner.lock();
            state.closed = true;
            std::mem::take(&mut state.members)
        };
        let closing: Vec<_> = members
            .into_iter()
            .filter_map(|member| member.client)
            .map(|client| smol::spawn(async move { client.close().await }))
            .collect();
        for task in closing {
            task.await;
        }
    }
}

impl Member {
    pub(super) fn status(&self) -> MemberStatus {
        match &self.client {
            None => MemberStatus::Restarting,
            Some(client) => match client.status() {
                Status::Ready => MemberStatus::Live,
                // A connector may hand over a client still in its handshake: not live yet.
                Status::Initializing => MemberStatus::Restarting,
                Status::Closed(_) => MemberStatus::Dead,
                _ => MemberStatus::Restarting,
            },
        }
    }

    pub(super) fn info(&self) -> MemberInfo {
        MemberInfo {
            id: self.id,
            status: self.status(),
            in_flight: self.counters.in_flight.load(Ordering::Relaxed),
            requests: self.counters.requests.load(Ordering::Relaxed),
            failed: self.counters.failed.load(Ordering::Relaxed),
            transactions: self.counters.transactions.load(Ordering::Relaxed),
            restarts: self.restarts,
            server_pid: self.client.as_ref().and_then(Client::server_pid),
            connection: self.client.as_ref().map(Client::stats),
        }
    }
}
