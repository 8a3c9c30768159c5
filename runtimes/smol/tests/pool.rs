//! `Pool` against real demo server processes: strategies, members added and removed at run
//! time, a member killed mid-run (failover and restart), restarts giving up, transactions,
//! and the pool behind generic `ClientApi` code.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_io::Timer;
use common::{default_builder, demo_server, demo_server_path, process_gone};
use mcp_smol::mcp_sansio::{CloseReason, UsageError};
use mcp_smol::{ClientApi, Error, MemberId, MemberInfo, MemberStatus, Pool, ServerCommand, Strategy};
use serde_json::json;

/// Runs a test body, failing it (rather than hanging) after `limit`.
fn run<T>(limit: Duration, test: impl Future<Output = T>) -> T {
    smol::block_on(futures_lite::future::or(test, async {
        Timer::after(limit).await;
        panic!("the test did not finish within {limit:?}");
    }))
}

/// Waits up to `limit` for `condition`, without blocking the executor.
async fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while !condition() {
        if start.elapsed() > limit {
            return false;
        }
        Timer::after(Duration::from_millis(5)).await;
    }
    true
}

/// Adds `n` demo servers to the pool.
async fn add_members(pool: &Pool, n: usize) -> Vec<MemberId> {
    let mut ids = Vec::new();
    for _ in 0..n {
        ids.push(pool.add_stdio(default_builder, &demo_server()).await.expect("add a demo server"));
    }
    ids
}

/// `echo` through any `ClientApi`; the echoed text.
async fn echo(api: &impl ClientApi, message: &str) -> Result<String, Error> {
    let result = api.call_tool("echo", json!({ "message": message })).await?;
    Ok(result.content.first().and_then(|block| block.as_text()).unwrap_or_default().to_owned())
}

fn member(pool: &Pool, id: MemberId) -> MemberInfo {
    pool.members().into_iter().find(|m| m.id == id).unwrap_or_else(|| panic!("no member {id}"))
}

fn requests_by_member(pool: &Pool) -> BTreeMap<MemberId, u64> {
    pool.members().into_iter().map(|m| (m.id, m.requests)).collect()
}

fn pid_of(pool: &Pool, id: MemberId) -> u32 {
    member(pool, id).server_pid.expect("a stdio member has a pid")
}

fn kill_9(pid: u32) {
    let pid = rustix::process::Pid::from_raw(pid as i32).expect("a valid pid");
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).expect("kill -9");
}

/// The tools the demo server behind member `id` was given by `add_tool`, by prefix.
async fn added_tools(pool: &Pool, id: MemberId, prefix: &str) -> BTreeSet<String> {
    let client = pool.client(id).expect("a live member");
    let tools = client.list_all_tools().await.expect("tools/list");
    tools.into_iter().map(|tool| tool.name).filter(|name| name.starts_with(prefix)).collect()
}

#[test]
fn round_robin_spreads_calls_evenly_over_distinct_servers() {
    run(Duration::from_secs(30), async {
        let pool = Pool::new(Strategy::RoundRobin);
        let ids = add_members(&pool, 3).await;
        let pids: BTreeSet<u32> = ids.iter().map(|&id| pid_of(&pool, id)).collect();
        assert_eq!(pids.len(), 3, "three distinct server processes: {pids:?}");

        for i in 0..30 {
            assert_eq!(echo(&pool, &format!("m{i}")).await.unwrap(), format!("m{i}"));
        }
        let counts = requests_by_member(&pool);
        assert!(counts.values().all(|&n| n == 10), "30 calls over 3 members: {counts:?}");

        // The server side agrees: each process received its own third of the add_tool calls.
        for i in 0..30 {
            pool.call_tool("add_tool", json!({ "name": format!("rr_{i}") })).await.unwrap();
        }
        let mut seen = BTreeSet::new();
        for &id in &ids {
            let added = added_tools(&pool, id, "rr_").await;
            assert_eq!(added.len(), 10, "member {id} got {added:?}");
            seen.extend(added);
        }
        assert_eq!(seen.len(), 30, "every call reached exactly one server: {seen:?}");

        let stats = pool.stats();
        assert_eq!((stats.live, stats.down, stats.requests, stats.failed), (3, 0, 60, 0), "{stats:?}");
        pool.close().await;
        assert!(pids.iter().all(|&pid| process_gone(pid, false)), "close leaves no process: {pids:?}");
    });
}

#[test]
fn random_hits_every_member() {
    run(Duration::from_secs(60), async {
        let pool = Pool::new(Strategy::Random);
        add_members(&pool, 3).await;
        let tasks: Vec<_> = (0..10)
            .map(|task| {
                let pool = pool.clone();
                smol::spawn(async move {
                    for i in 0..30 {
                        echo(&pool, &format!("{task}/{i}")).await.unwrap();
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await;
        }
        let counts = requests_by_member(&pool);
        assert_eq!(counts.values().sum::<u64>(), 300, "{counts:?}");
        // 100 expected each; below 40 would be about 8 standard deviations off.
        assert!(counts.values().all(|&n| n >= 40), "300 random picks over 3 members: {counts:?}");
        pool.close().await;
    });
}

#[test]
fn least_busy_sends_new_calls_to_the_idle_member() {
    run(Duration::from_secs(30), async {
        let pool = Pool::new(Strategy::LeastBusy);
        add_members(&pool, 3).await;
        // Two long calls occupy two members (a tie goes round-robin, then the idle one wins).
        let sleepers: Vec<_> = (0..2)
            .map(|_| {
                let pool = pool.clone();
                smol::spawn(async move { pool.call_tool("sleep", json!({ "ms": 20_000 })).await })
            })
            .collect();
        let busy = || pool.members().iter().filter(|m| m.in_flight == 1).count() == 2;
        assert!(eventually(Duration::from_secs(5), busy).await, "{:?}", pool.members());
        let idle = pool.members().into_iter().find(|m| m.in_flight == 0).expect("an idle member").id;

        for i in 0..20 {
            echo(&pool, &format!("{i}")).await.unwrap();
        }
        let members = pool.members();
        for m in &members {
            if m.id == idle {
                assert_eq!(m.requests, 20, "the idle member takes every new call: {members:?}");
            } else {
                assert_eq!((m.requests, m.in_flight), (0, 1), "busy members get nothing: {members:?}");
            }
        }
        drop(sleepers); // cancels the sleeps
        assert!(eventually(Duration::from_secs(5), || pool.members().iter().all(|m| m.in_flight == 0)).await);
        pool.close().await;
    });
}

#[test]
fn members_can_be_added_and_removed_at_run_time() {
    run(Duration::from_secs(30), async {
        let pool = Pool::new(Strategy::RoundRobin);
        let mut ids = add_members(&pool, 3).await;
        for i in 0..9 {
            echo(&pool, &format!("{i}")).await.unwrap();
        }

        let fourth = pool.add_stdio(default_builder, &demo_server()).await.unwrap();
        ids.push(fourth);
        let before = requests_by_member(&pool);
        for i in 0..8 {
            echo(&pool, &format!("{i}")).await.unwrap();
        }
        let after = requests_by_member(&pool);
        for id in &ids {
            assert_eq!(after[id] - before.get(id).copied().unwrap_or(0), 2, "{before:?} -> {after:?}");
        }

        let removed = ids.remove(0);
        let removed_pid = pid_of(&pool, removed);
        assert!(pool.remove(removed).await);
        assert!(!pool.remove(removed).await, "already removed");
        assert!(process_gone(removed_pid, false), "the removed member's server {removed_pid} is gone");
        assert!(pool.members().iter().all(|m| m.id != removed));

        let before = requests_by_member(&pool);
        for i in 0..9 {
            echo(&pool, &format!("{i}")).await.unwrap();
        }
        let after = requests_by_member(&pool);
        for id in &ids {
            assert_eq!(after[id] - before[id], 3, "{before:?} -> {after:?}");
        }
        assert_eq!(pool.stats().failed, 0);
        pool.close().await;
    });
}

/// What one call of the failover test saw.
struct Call {
    started: Instant,
    error: Option<Error>,
}

#[test]
fn a_killed_member_fails_only_its_own_calls_and_is_restarted() {
    const TASKS: usize = 8;
    const CALLS: usize = 100;
    run(Duration::from_secs(60), async {
        let pool = Pool::new(Strategy::RoundRobin);
        let ids = add_members(&pool, 3).await;
        let victim = ids[1];
        let victim_pid = pid_of(&pool, victim);

        let done = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..TASKS)
            .map(|task| {
                let (pool, done) = (pool.clone(), done.clone());
                smol::spawn(async move {
                    let mut calls = Vec::with_capacity(CALLS);
                    for i in 0..CALLS {
                        let started = Instant::now();
                        let message = format!("{task}/{i}");
                        let error = match echo(&pool, &message).await {
                            Ok(echoed) => {
                                assert_eq!(echoed, message);
                                None
                            }
                            Err(error) => Some(error),
                        };
                        calls.push(Call { started, error });
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    calls
                })
            })
            .collect();

        // Kill the victim a quarter of the way in, then see how soon the pool notices.
        assert!(
            eventually(Duration::from_secs(20), || done.load(Ordering::Relaxed) >= TASKS * CALLS / 4).await
        );
        let in_flight_at_kill = member(&pool, victim).in_flight;
        let done_at_kill = done.load(Ordering::Relaxed);
        kill_9(victim_pid);
        let detected = eventually(Duration::from_secs(5), || {
            // (On a loaded machine, the member may be back, as a new process, by the time we look.)
            let m = member(&pool, victim);
            m.status != MemberStatus::Live || m.server_pid != Some(victim_pid)
        })
        .await;
        let detected_at = Instant::now();
        assert!(detected, "the pool did not notice the killed member: {:?}", pool.members());

        let mut calls = Vec::new();
        for task in tasks {
            calls.extend(task.await);
        }
        let failures: Vec<&Call> = calls.iter().filter(|call| call.error.is_some()).collect();
        let report = format!(
            "{} calls, {} failed; {done_at_kill} done at the kill, {in_flight_at_kill} in flight on the victim; \
             errors: {:?}; stats: {:?}",
            calls.len(),
            failures.len(),
            failures.iter().map(|call| call.error.as_ref().map(ToString::to_string)).collect::<Vec<_>>(),
            pool.stats(),
        );
        eprintln!("{report}");
        assert_eq!(calls.len(), TASKS * CALLS);
        // Only calls in flight on the victim fail: at most one per task.
        assert!(failures.len() <= TASKS, "{report}");
        for call in &failures {
            let error = call.error.as_ref().expect("a failure");
            assert!(error.is_retriable(), "a connection error, not {error:?}: {report}");
            assert!(call.started < detected_at, "a call made after the death was noticed failed: {report}");
        }
        assert_eq!(pool.stats().failed, failures.len() as u64, "{report}");

        // The member comes back as a new process, and serves again.
        let restarted = eventually(Duration::from_secs(10), || {
            let m = member(&pool, victim);
            m.status == MemberStatus::Live && m.server_pid.is_some_and(|pid| pid != victim_pid)
        })
        .await;
        assert!(restarted, "the victim was not restarted: {:?}", pool.stats());
        let stats = pool.stats();
        assert_eq!((stats.deaths, stats.restarts, stats.lost, stats.live), (1, 1, 0, 3), "{stats:?}");
        assert_eq!(member(&pool, victim).restarts, 1);
        let served = member(&pool, victim).requests;
        for i in 0..9 {
            echo(&pool, &format!("after {i}")).await.unwrap();
        }
        assert_eq!(member(&pool, victim).requests, served + 3, "the restarted member takes its turns");
        assert!(process_gone(victim_pid, false), "the killed server {victim_pid} was reaped");
        pool.close().await;
    });
}

#[test]
fn restarting_gives_up_after_the_maximal_attempts() {
    run(Duration::from_secs(30), async {
        let pool = Pool::builder()
            .restart_backoff(Duration::from_millis(20), Duration::from_millis(100))
            .max_restart_attempts(3)
            .build();
        add_members(&pool, 2).await;
        // A member whose server binary can be made to disappear.
        let program = Arc::new(Mutex::new(demo_server_path()));
        let path = program.clone();
        let flaky = pool
            .add(move || {
                let program = path.lock().unwrap().clone();
                async move {
                    let command = ServerCommand::new(program).shutdown_step(Duration::from_millis(500));
                    default_builder().spawn_stdio(&command).await
                }
            })
            .await
            .unwrap();
        let pid = pid_of(&pool, flaky);
        *program.lock().unwrap() = PathBuf::from("/nonexistent/mcp-demo-server");
        kill_9(pid);

        let removed = eventually(Duration::from_secs(10), || pool.members().len() == 2).await;
        let stats = pool.stats();
        assert!(removed, "the member was not removed: {stats:?}");
        assert_eq!((stats.deaths, stats.restarts, stats.lost, stats.live), (1, 0, 1, 2), "{stats:?}");
        assert!(stats.members.iter().all(|m| m.id != flaky));

        for i in 0..10 {
            echo(&pool, &format!("{i}")).await.unwrap();
        }
        let counts = requests_by_member(&pool);
        assert!(counts.values().all(|&n| n == 5), "the rest share the calls: {counts:?}");
        assert!(process_gone(pid, false));
        pool.close().await;
    });
}

#[test]
fn a_transaction_keeps_one_member() {
    run(Duration::from_secs(30), async {
        let pool = Pool::new(Strategy::RoundRobin);
        let ids = add_members(&pool, 3).await;
        let watcher = pool.clone();
        let chosen = pool
            .transaction(|client| async move {
                let pid = client.server_pid().expect("a stdio member");
                for i in 0..5 {
                    client.call_tool("add_tool", json!({ "name": format!("tx_{i}") })).await?;
                    // Counted busy (once) while the transaction runs.
                    let me = watcher.members().into_iter().find(|m| m.server_pid == Some(pid));
                    assert_eq!(me.map(|m| m.in_flight), Some(1));
                }
                Ok::<_, Error>(pid)
            })
            .await
            .unwrap();

        for &id in &ids {
            let added = added_tools(&pool, id, "tx_").await;
            if pid_of(&pool, id) == chosen {
                assert_eq!(added.len(), 5, "{added:?}");
                assert_eq!(member(&pool, id).transactions, 1);
            } else {
                assert!(added.is_empty(), "member {id} saw calls of the transaction: {added:?}");
            }
        }
        let stats = pool.stats();
        assert_eq!(stats.transactions, 1);
        assert!(stats.members.iter().all(|m| m.in_flight == 0), "{stats:?}");

        // An error of the closure comes back as it is.
        let failed: Result<(), Error> = pool
            .transaction(|client| async move {
                client.call_tool("echo", json!("not an object")).await?;
                Ok(())
            })
            .await;
        assert!(matches!(failed, Err(Error::Usage(UsageError::InvalidParams(_)))), "{failed:?}");
        pool.close().await;
    });
}

/// Generic code over `ClientApi` works with a `Client` and a `Pool` alike.
async fn tool_names(api: &impl ClientApi) -> Result<Vec<String>, Error> {
    Ok(api.list_all_tools().await?.into_iter().map(|tool| tool.name).collect())
}

#[test]
fn the_pool_works_behind_generic_client_api_code() {
    run(Duration::from_secs(30), async {
        let pool = Pool::new(Strategy::RoundRobin);
        // Servers that list 3 tools a page: every page of one listing must come from one member.
        for _ in 0..3 {
            pool.add_stdio(default_builder, &demo_server().args(["--page-size", "3"])).await.unwrap();
        }
        let single = default_builder().spawn_stdio(&demo_server()).await.unwrap();
        let expected = tool_names(&single).await.unwrap();
        assert!(expected.len() > 3 && expected.contains(&"echo".to_owned()), "{expected:?}");

        let before = requests_by_member(&pool);
        assert_eq!(tool_names(&pool).await.unwrap(), expected);
        let after = requests_by_member(&pool);
        let used: Vec<_> = after.iter().filter(|(id, n)| **n != before[*id]).collect();
        assert_eq!(used.len(), 1, "one listing, one member: {before:?} -> {after:?}");
        assert_eq!(
            pool.list_all_resources().await.unwrap().len(),
            single.list_all_resources().await.unwrap().len()
        );

        assert_eq!(echo(&pool, "generic").await.unwrap(), "generic");
        let page = pool.list_tools(None).await.unwrap();
        assert_eq!(page.tools.len(), 3);
        assert!(page.next_cursor.is_some());
        let added = pool.call_tool("add", json!({ "a": 2, "b": 3 })).await.unwrap();
        assert_eq!(added.content[0].as_text(), Some("5"));

        single.close().await;
        pool.close().await;
    });
}

#[test]
fn without_restart_a_killed_member_is_removed() {
    run(Duration::from_secs(30), async {
        let pool = Pool::builder().restart(false).build();
        let ids = add_members(&pool, 3).await;
        let pid = pid_of(&pool, ids[0]);
        kill_9(pid);
        let removed = eventually(Duration::from_secs(10), || pool.members().len() == 2).await;
        let stats = pool.stats();
        assert!(removed, "the dead member is still listed: {stats:?}");
        assert_eq!((stats.deaths, stats.restarts, stats.lost, stats.live), (1, 0, 1, 2), "{stats:?}");

        for i in 0..20 {
            echo(&pool, &format!("{i}")).await.unwrap();
        }
        let counts = requests_by_member(&pool);
        assert_eq!(counts.keys().copied().collect::<Vec<_>>(), ids[1..], "{counts:?}");
        assert!(counts.values().all(|&n| n == 10), "{counts:?}");
        assert!(process_gone(pid, false));
        pool.close().await;
    });
}

#[test]
fn an_empty_or_closed_pool_fails_calls_clearly() {
    run(Duration::from_secs(30), async {
        let pool = Pool::default();
        let error = echo(&pool, "nobody").await.unwrap_err();
        assert!(matches!(&error, Error::NoLiveMember { members: 0 }), "{error:?}");
        assert!(error.to_string().contains("no member") && !error.is_retriable(), "{error}");
        let error = pool.transaction(|_| async { Ok::<_, Error>(()) }).await.unwrap_err();
        assert!(matches!(error, Error::NoLiveMember { members: 0 }), "{error:?}");

        let ids = add_members(&pool, 2).await;
        let pids: Vec<u32> = ids.iter().map(|&id| pid_of(&pool, id)).collect();
        pool.close().await;
        assert!(pids.iter().all(|&pid| process_gone(pid, false)), "close waits for the servers: {pids:?}");
        let error = echo(&pool, "too late").await.unwrap_err();
        assert!(matches!(error, Error::Usage(UsageError::Closed(CloseReason::Local))), "{error:?}");
        assert!(pool.add_stdio(default_builder, &demo_server()).await.is_err(), "add after close");
        let stats = pool.stats();
        assert_eq!((stats.requests, stats.failed), (2, 2), "{stats:?}");
    });
}

#[test]
fn dropping_the_last_handle_shuts_the_members_down() {
    run(Duration::from_secs(30), async {
        let pool = Pool::new(Strategy::RoundRobin);
        let ids = add_members(&pool, 2).await;
        let pids: Vec<u32> = ids.iter().map(|&id| pid_of(&pool, id)).collect();
        let copy = pool.clone();
        echo(&copy, "hi").await.unwrap();
        drop(pool);
        drop(copy);
        let gone =
            eventually(Duration::from_secs(10), || pids.iter().all(|&pid| process_gone(pid, false))).await;
        assert!(gone, "servers still running after the pool was dropped: {pids:?}");
    });
}

#[test]
fn the_pool_sends_every_request_when_called_and_retries_refusals_on_one_path() {
    run(Duration::from_secs(30), async {
        let pool = Pool::new(Strategy::RoundRobin);
        add_members(&pool, 2).await;
        let in_flight = |pool: &Pool| pool.members().iter().map(|m| m.in_flight).sum::<usize>();
        let call = pool.call_tool("echo", json!({"message": "now"}));
        assert_eq!(in_flight(&pool), 1, "call_tool sends when called");
        assert_eq!(call.await.unwrap().content[0].as_text(), Some("now"));
        let page = pool.list_tools(None);
        assert_eq!(in_flight(&pool), 1, "list_tools sends when called");
        page.await.unwrap();
        let all = pool.list_all_tools();
        assert_eq!(in_flight(&pool), 1, "list_all_tools sends its first page when called");
        assert!(all.await.unwrap().len() > 3);
        let resources = pool.list_all_resources();
        assert_eq!(in_flight(&pool), 1, "list_all sends its first page when called");
        resources.await.unwrap();
        assert_eq!(in_flight(&pool), 0);
        // A member that closed refuses before sending anything: the same call goes to the other
        // member, at once, and the refused attempt is not counted.
        let ids: Vec<MemberId> = pool.members().iter().map(|m| m.id).collect();
        pool.client(ids[0]).unwrap().close().await;
        let before = pool.stats();
        for _ in 0..4 {
            assert_eq!(echo(&pool, "failover").await.unwrap(), "failover");
            let listed = pool.list_tools(None).await.unwrap();
            assert!(!listed.tools.is_empty());
        }
        let after = pool.stats();
        assert_eq!(after.failed, before.failed, "{before:?} -> {after:?}");
        pool.close().await;
    });
}

#[test]
fn the_restart_backoff_is_measured_in_the_pools_clock() {
    run(Duration::from_secs(30), async {
        let clock = common::ManualClock::new();
        // An hour's backoff: only the pool's clock moving lets the restart happen.
        let hour = Duration::from_secs(3600);
        let pool = Pool::builder().clock(clock.clone()).restart_backoff(hour, hour).build();
        let ids = add_members(&pool, 1).await;
        kill_9(pid_of(&pool, ids[0]));
        let down = eventually(Duration::from_secs(10), || pool.stats().deaths == 1).await;
        assert!(down, "the death was not noticed: {:?}", pool.stats());
        Timer::after(Duration::from_millis(300)).await;
        assert_eq!(pool.stats().restarts, 0, "restarted before the pool's clock moved");
        clock.advance(hour);
        let restarted = eventually(Duration::from_secs(10), || pool.stats().live == 1).await;
        assert!(restarted, "not restarted once the pool's clock passed the backoff: {:?}", pool.stats());
        assert_eq!(echo(&pool, "back").await.unwrap(), "back");
        pool.close().await;
    });
}
