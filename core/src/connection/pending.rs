//! [`PendingTable`]: every request of ours that awaits something, with the one owner of its
//! ids, deadline and wire id.
//!
//! A request keeps the id handed to the application ([`CallId`]) for its whole life. On the
//! wire it may carry other ids ([`WireId`]): a 2026-07-28 request is sent again under a new id
//! for each multi round-trip round, after a version refusal and after a broken HTTP stream; and
//! between rounds nothing of it is in flight. The table keeps the three indexes (by call, by
//! deadline, by wire id) in step, so that no caller can move a deadline or a wire id without the
//! others following; [`PendingTable::check`] asserts that after every input in debug builds.

use std::collections::hash_map::{self, HashMap};
use std::collections::{BTreeMap, BTreeSet};
use std::hash::BuildHasherDefault;

use crate::ids::IdHasher;
use std::num::NonZeroU64;
use std::time::{Duration, Instant};

use super::retry::Retry;
use crate::config::{ClientConfig, RequestOptions};
use crate::deadline::deadline_after;

/// The id of one of our requests as the application knows it (`RequestId::Number`): fixed for
/// the request's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct CallId(pub(crate) i64);

/// The id a message of ours carries on the wire: the call's own id, or that of a later send.
///
/// Ids are never negative, so it is kept as `id + 1` in a `NonZeroU64`: an `Option<WireId>`
/// (what is in flight for a request) then costs no more than the id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct WireId(NonZeroU64);

impl WireId {
    /// The wire id `n` as a peer wrote it, if the table could have issued it.
    pub(crate) fn of(n: i64) -> Option<Self> {
        u64::try_from(n).ok().and_then(|n| NonZeroU64::new(n.wrapping_add(1))).map(WireId)
    }

    /// A wire id the table issues (never negative).
    fn issued(n: i64) -> Self {
        WireId(NonZeroU64::MIN.saturating_add(n.unsigned_abs()))
    }

    /// The id as it goes on the wire.
    pub(crate) fn get(self) -> i64 {
        i64::try_from(self.0.get() - 1).unwrap_or(i64::MAX)
    }
}

impl CallId {
    /// The wire id of the request's first send.
    pub(crate) fn first_wire(self) -> WireId {
        WireId::issued(self.0)
    }
}

/// Who a pending request is for, which decides what its answer, failure or deadline does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PendingKind {
    /// The `initialize` request.
    Initialize,
    /// The 2026-07-28 `server/discover` probe.
    Discover,
    /// The engine's keep-alive `ping`.
    KeepAlive,
    /// The application's request: it ends in exactly one [`Event::Response`](crate::Event::Response).
    User,
    /// A request a transport layer made for its own needs (an HTTP session fetching the tool
    /// list again): it ends in an `Event::Response` too, but is not counted as the application's.
    Transport,
    /// A 2026-07-28 `subscriptions/listen` stream: no deadline, no caller.
    Listen,
    /// The engine's own `tasks/get`, `tasks/update` or `tasks/cancel` for a task it follows
    /// (the tasks extension): answered to the engine, which ends the task's request.
    TaskErrand,
}

impl PendingKind {
    /// Whether the request ends in an [`Event::Response`](crate::Event::Response).
    pub(crate) fn answers_caller(self) -> bool {
        matches!(self, PendingKind::User | PendingKind::Transport)
    }
}

/// How long a request may take.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    /// Idle timeout: without a response or progress for this long, the request fails.
    pub(crate) timeout: Duration,
    /// Cap on the total time, however much progress arrives.
    pub(crate) max_total: Duration,
    /// Whether progress notifications restart the idle timeout.
    pub(crate) reset_on_progress: bool,
}

impl Timing {
    /// An application's request: its options, else the configuration's defaults; progress
    /// resets the idle timeout unless the options say otherwise.
    pub(crate) fn for_request(options: &RequestOptions, config: &ClientConfig) -> Self {
        Timing {
            timeout: options.timeout.unwrap_or(config.request_timeout),
            max_total: options.max_total.unwrap_or(config.max_total),
            reset_on_progress: options.reset_on_progress.unwrap_or(true),
        }
    }

    /// The same limit for idle and total time, not reset by progress (the engine's own requests).
    pub(crate) fn fixed(timeout: Duration) -> Self {
        Timing { timeout, max_total: timeout, reset_on_progress: false }
    }
}

/// A request's deadline: `min(last activity + timeout, start + max_total)`. (Whether progress
/// resets it is kept in [`Pending`], so that this fits in four words and `Option` of it costs
/// nothing: every pending request holds one.)
#[derive(Debug, Clone, Copy)]
struct Deadline {
    at: Instant,
    /// When `max_total` runs out.
    cap: Instant,
    timeout: Duration,
    max_total: Duration,
}

/// Why a deadline passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expiry {
    /// No response or progress within the idle timeout.
    Idle(Duration),
    /// The cap on total time.
    Cap(Duration),
}

/// One pending request.
#[derive(Debug)]
pub(crate) struct Pending {
    pub(crate) kind: PendingKind,
    /// `None` for a listen stream, which lasts until one side ends it.
    deadline: Option<Deadline>,
    /// Whether progress notifications restart the idle timeout.
    reset_on_progress: bool,
    /// What is in flight for it: `None` while a 2026-07-28 request waits for the application's
    /// input between rounds, and for a local request the listen stream completes.
    wire: Option<WireId>,
    /// What a 2026-07-28 request needs to be sent again.
    pub(crate) retry: Option<Box<Retry>>,
    /// Times it was sent again under a new id for a reason other than input.
    pub(crate) reissues: u8,
    /// Its deadline is suspended: the transport holds it for something the server has no part
    /// in (the user authorizing the client). Not in the deadline index meanwhile.
    held: bool,
}

impl Pending {
    /// A request of `kind` whose deadline (if any) starts at `now`.
    pub(crate) fn new(kind: PendingKind, now: Instant, timing: Option<Timing>) -> Self {
        let deadline = timing.map(|timing| {
            let cap = deadline_after(now, timing.max_total);
            let at = deadline_after(now, timing.timeout).min(cap);
            Deadline { at, cap, timeout: timing.timeout, max_total: timing.max_total }
        });
        let reset_on_progress = timing.is_some_and(|t| t.reset_on_progress);
        Pending { kind, deadline, reset_on_progress, wire: None, retry: None, reissues: 0, held: false }
    }

    /// What is in flight for it, if anything.
    pub(crate) fn wire(&self) -> Option<WireId> {
        self.wire
    }

    /// Marks a request taken out of the table as having nothing in flight (it waits for the
    /// application's input); [`PendingTable::insert`] files it so.
    pub(crate) fn park(&mut self) {
        self.wire = None;
    }

    /// Gives a request taken out of the table new limits from `now` (a call that became a
    /// task takes the task's); [`PendingTable::insert`] files it so.
    pub(crate) fn retime(&mut self, now: Instant, timing: Timing) {
        let cap = deadline_after(now, timing.max_total);
        let at = deadline_after(now, timing.timeout).min(cap);
        self.deadline = Some(Deadline { at, cap, timeout: timing.timeout, max_total: timing.max_total });
        self.reset_on_progress = timing.reset_on_progress;
    }

    /// [`retime`](Self::retime), but the request's cap on total time stays where it was when
    /// that comes first: its own limits go on bounding it (a call whose caller bounded it
    /// became a task).
    pub(crate) fn retime_within(&mut self, now: Instant, timing: Timing) {
        let old_cap = self.deadline.map(|d| (d.cap, d.max_total));
        self.retime(now, timing);
        if let (Some(deadline), Some((cap, max_total))) = (self.deadline.as_mut(), old_cap) {
            if cap <= deadline.cap {
                deadline.cap = cap;
                deadline.max_total = max_total;
                deadline.at = deadline.at.min(cap);
            }
        }
    }

    /// The idle timeout, for error messages.
    pub(crate) fn timeout(&self) -> Duration {
        self.deadline.map_or(Duration::ZERO, |d| d.timeout)
    }
}

/// Past this many entries, [`PendingTable::check`] checks sizes only.
const FULL_CHECK_LIMIT: usize = 256;

/// Every pending request, indexed by call, by deadline and by wire id.
#[derive(Debug, Default)]
pub(crate) struct PendingTable {
    /// The next id to issue, for a request or a re-send alike: ids are never reused.
    next: i64,
    /// A hash map rather than a B-tree: responses mostly come in the order of their requests, and
    /// taking the first entry of a B-tree leaf shifts the others (an entry is 96 bytes), which
    /// cost more than the rest of correlating a response.
    entries: HashMap<CallId, Pending, BuildHasherDefault<IdHasher>>,
    /// `(deadline, call)` of every entry with a deadline, so the earliest is found in O(log n).
    deadlines: BTreeSet<(Instant, CallId)>,
    /// Wire ids other than the call's own → the call. Empty unless 2026-07-28 requests were
    /// sent again, so the common lookup skips it.
    aliases: BTreeMap<WireId, CallId>,
}

impl PendingTable {
    /// Issues a fresh id: the only place ids come from.
    fn issue(&mut self) -> i64 {
        let id = self.next;
        // Ids stay below i64::MAX: past it a connection would have sent 2^63 messages.
        self.next = self.next.saturating_add(1);
        id
    }

    /// The id the next request will get (its progress token is known before it is sent).
    pub(crate) fn next_id(&self) -> i64 {
        self.next
    }

    /// An id for a request that completes at once, never filed (a 2026-07-28
    /// `logging/setLevel`, which only changes the `_meta` of later requests).
    pub(crate) fn settled(&mut self) -> CallId {
        CallId(self.issue())
    }

    /// Whether `wire` is an id this table issued (a response to it that finds nothing pending
    /// is late rather than unknown).
    pub(crate) fn issued(&self, wire: i64) -> bool {
        (0..self.next).contains(&wire)
    }

    /// Issues a call id whose request goes out at once under it, and files the request.
    pub(crate) fn start(&mut self, mut pending: Pending) -> CallId {
        let id = CallId(self.issue());
        pending.wire = Some(id.first_wire());
        self.file(id, pending);
        id
    }

    /// Issues a call id for a request with nothing on the wire (a local one), and files it.
    pub(crate) fn start_local(&mut self, mut pending: Pending) -> CallId {
        let id = CallId(self.issue());
        pending.wire = None;
        self.file(id, pending);
        id
    }

    /// Files a request taken out of the table again, as it now is.
    pub(crate) fn insert(&mut self, id: CallId, pending: Pending) {
        self.file(id, pending);
    }

    fn file(&mut self, id: CallId, pending: Pending) {
        if let Some(deadline) = pending.deadline.filter(|_| !pending.held) {
            self.deadlines.insert((deadline.at, id));
        }
        if let Some(wire) = pending.wire.filter(|&w| w != id.first_wire()) {
            self.aliases.insert(wire, id);
        }
        if let Some(old) = self.entries.insert(id, pending) {
            // A call is filed once; filing it twice would leave stale index entries.
            debug_assert!(false, "call {id:?} filed twice: {old:?}");
            self.unindex(id, &old);
        }
    }

    fn unindex(&mut self, id: CallId, pending: &Pending) {
        if let Some(deadline) = pending.deadline.filter(|_| !pending.held) {
            self.deadlines.remove(&(deadline.at, id));
        }
        if let Some(wire) = pending.wire.filter(|&w| w != id.first_wire()) {
            self.aliases.remove(&wire);
        }
    }

    /// The call a message with this wire id belongs to, if it is in flight.
    pub(crate) fn owner(&self, wire: WireId) -> Option<CallId> {
        let id = if self.aliases.is_empty() {
            CallId(wire.get())
        } else {
            self.aliases.get(&wire).copied().unwrap_or(CallId(wire.get()))
        };
        self.entries.get(&id).filter(|p| p.wire == Some(wire)).map(|_| id)
    }

    /// Whether a response with this wire id is awaited.
    pub(crate) fn awaits(&self, wire: WireId) -> bool {
        self.owner(wire).is_some()
    }

    /// Takes out the request whose message in flight has this wire id (its response arrived,
    /// or the transport lost it).
    pub(crate) fn take_by_wire(&mut self, wire: WireId) -> Option<(CallId, Pending)> {
        // One lookup in the common case: this runs for every response.
        let id = match self.aliases.is_empty() {
            true => CallId(wire.get()),
            false => self.aliases.get(&wire).copied().unwrap_or(CallId(wire.get())),
        };
        let hash_map::Entry::Occupied(entry) = self.entries.entry(id) else { return None };
        if entry.get().wire != Some(wire) {
            return None;
        }
        let pending = entry.remove();
        self.unindex(id, &pending);
        self.shrink();
        Some((id, pending))
    }

    /// Takes out a request, whatever is in flight for it.
    pub(crate) fn remove(&mut self, id: CallId) -> Option<Pending> {
        let pending = self.entries.remove(&id)?;
        self.unindex(id, &pending);
        self.shrink();
        Some(pending)
    }

    /// Gives memory back after a burst: a map down to a quarter of its room shrinks to twice what
    /// it holds (so shrinking, which copies every entry, happens at most once per halving).
    fn shrink(&mut self) {
        let (len, capacity) = (self.entries.len(), self.entries.capacity());
        if capacity > 256 && len < capacity / 4 {
            self.entries.shrink_to(len * 2);
        }
    }

    pub(crate) fn get(&self, id: CallId) -> Option<&Pending> {
        self.entries.get(&id)
    }

    /// The request, to change what is not indexed (its retry state, its counters).
    pub(crate) fn get_mut(&mut self, id: CallId) -> Option<&mut Pending> {
        self.entries.get_mut(&id)
    }

    /// Gives the request a fresh wire id for its next send, and returns it.
    pub(crate) fn rewire(&mut self, id: CallId) -> Option<WireId> {
        let pending = self.entries.remove(&id)?;
        self.unindex(id, &pending);
        let wire = WireId::issued(self.issue());
        let mut pending = pending;
        pending.wire = Some(wire);
        self.file(id, pending);
        Some(wire)
    }

    /// Progress arrived for the request: its idle timeout starts again at `now` (when it resets
    /// on progress; never past its cap). Returns whether the request is pending.
    pub(crate) fn touch(&mut self, id: CallId, now: Instant) -> bool {
        let Some(pending) = self.entries.get_mut(&id) else { return false };
        let reset = pending.reset_on_progress && !pending.held;
        if let Some(deadline) = pending.deadline.as_mut().filter(|_| reset) {
            let at = deadline_after(now, deadline.timeout).min(deadline.cap);
            self.deadlines.remove(&(deadline.at, id));
            self.deadlines.insert((at, id));
            deadline.at = at;
        }
        true
    }

    /// Suspends the request's deadline (see [`Pending::held`]); `false` if it is not pending.
    pub(crate) fn hold(&mut self, id: CallId) -> bool {
        let Some(pending) = self.entries.get_mut(&id) else { return false };
        if !pending.held {
            if let Some(deadline) = pending.deadline {
                self.deadlines.remove(&(deadline.at, id));
            }
            pending.held = true;
        }
        true
    }

    /// Ends a suspension: the request's deadline starts again from `now`, as if it had just
    /// been sent (its idle timeout and its cap both).
    pub(crate) fn release(&mut self, id: CallId, now: Instant) {
        let Some(pending) = self.entries.get_mut(&id).filter(|p| p.held) else { return };
        pending.held = false;
        if let Some(deadline) = pending.deadline.as_mut() {
            deadline.cap = deadline_after(now, deadline.max_total);
            deadline.at = deadline_after(now, deadline.timeout).min(deadline.cap);
            self.deadlines.insert((deadline.at, id));
        }
    }

    /// Takes out the earliest request whose deadline is at or before `now`, and why it expired.
    pub(crate) fn pop_expired(&mut self, now: Instant) -> Option<(CallId, Pending, Expiry)> {
        let &(at, id) = self.deadlines.first().filter(|(at, _)| *at <= now)?;
        let pending = self.remove(id)?;
        let expiry = match pending.deadline {
            Some(deadline) if at >= deadline.cap => Expiry::Cap(deadline.max_total),
            Some(deadline) => Expiry::Idle(deadline.timeout),
            None => Expiry::Idle(Duration::ZERO),
        };
        Some((id, pending, expiry))
    }

    /// The earliest deadline.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.first().map(|&(at, _)| at)
    }

    /// Takes out every request (the connection closed), in the order of their ids.
    pub(crate) fn drain(&mut self) -> Vec<(CallId, Pending)> {
        self.deadlines.clear();
        self.aliases.clear();
        let mut all: Vec<_> = std::mem::take(&mut self.entries).into_iter().collect();
        all.sort_unstable_by_key(|&(id, _)| id);
        all
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Asserts that the three indexes agree (debug builds; called after every input). Entry by
    /// entry while the table is small; past [`FULL_CHECK_LIMIT`] entries only the sizes, so a
    /// debug build with thousands of requests in flight does not turn quadratic.
    pub(crate) fn check(&self) {
        if !cfg!(debug_assertions) {
            return;
        }
        debug_assert!(self.deadlines.len() <= self.entries.len(), "no deadline without its request");
        debug_assert!(self.aliases.len() <= self.entries.len(), "no wire id without its request");
        if self.entries.len() > FULL_CHECK_LIMIT {
            return;
        }
        let timed = self.entries.values().filter(|p| p.deadline.is_some() && !p.held).count();
        debug_assert_eq!(timed, self.deadlines.len(), "one deadline entry per timed request");
        for (&id, pending) in &self.entries {
            debug_assert!(id.0 < self.next, "call {id:?} was issued");
            if let Some(deadline) = pending.deadline.filter(|_| !pending.held) {
                debug_assert!(self.deadlines.contains(&(deadline.at, id)), "deadline of {id:?} indexed");
                debug_assert!(deadline.at <= deadline.cap, "deadline of {id:?} within its cap");
            }
            if let Some(wire) = pending.wire.filter(|&w| w != id.first_wire()) {
                debug_assert_eq!(self.aliases.get(&wire), Some(&id), "wire id of {id:?} indexed");
            }
        }
        for (wire, id) in &self.aliases {
            debug_assert_eq!(
                self.entries.get(id).and_then(|p| p.wire),
                Some(*wire),
                "alias {wire:?} is live"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    fn w(n: i64) -> WireId {
        WireId::of(n).unwrap()
    }

    #[test]
    fn wire_ids_round_trip_and_refuse_what_was_never_issued() {
        for n in [0, 1, 41, i64::MAX - 1, i64::MAX] {
            assert_eq!(w(n).get(), n);
        }
        assert_eq!(WireId::of(-1), None);
        assert_eq!(WireId::of(i64::MIN), None);
        assert_eq!(std::mem::size_of::<Option<WireId>>(), 8);
    }

    /// The tests' one reading of the clock; time then moves by hand.
    #[allow(clippy::disallowed_methods)]
    fn epoch() -> Instant {
        Instant::now()
    }

    fn user(now: Instant, timeout: Duration, max_total: Duration) -> Pending {
        Pending::new(PendingKind::User, now, Some(Timing { timeout, max_total, reset_on_progress: true }))
    }

    #[test]
    fn ids_are_issued_once_and_wire_ids_follow_the_call() {
        let now = epoch();
        let mut table = PendingTable::default();
        let a = table.start(user(now, S, 10 * S));
        let b = table.start(user(now, S, 10 * S));
        assert_eq!((a, b), (CallId(0), CallId(1)));
        assert!(table.awaits(w(0)) && table.awaits(w(1)));
        let wire = table.rewire(a).unwrap();
        assert_eq!(wire, w(2));
        // The first send's id is stale now: its response would be late.
        assert!(!table.awaits(w(0)));
        assert_eq!(table.owner(wire), Some(a));
        assert!(table.issued(0) && table.issued(2) && !table.issued(3));
        table.check();
        let (id, _) = table.take_by_wire(wire).unwrap();
        assert_eq!(id, a);
        assert!(table.aliases.is_empty());
        table.check();
    }

    #[test]
    fn a_parked_request_has_nothing_in_flight_but_keeps_its_deadline() {
        let now = epoch();
        let mut table = PendingTable::default();
        let a = table.start(user(now, S, 10 * S));
        let wire = table.rewire(a).unwrap();
        let (id, mut pending) = table.take_by_wire(wire).unwrap();
        pending.park();
        table.insert(id, pending);
        table.check();
        assert!(!table.awaits(wire) && !table.awaits(w(0)));
        assert_eq!(table.next_deadline(), Some(now + S));
        let again = table.rewire(a).unwrap();
        assert!(table.awaits(again));
        table.check();
    }

    #[test]
    fn deadlines_expire_in_order_and_progress_moves_them_up_to_the_cap() {
        let now = epoch();
        let mut table = PendingTable::default();
        let a = table.start(user(now, 2 * S, 3 * S));
        let b = table.start(user(now, 5 * S, 100 * S));
        assert!(table.pop_expired(now + S).is_none());
        assert!(table.touch(a, now + S + S / 2));
        // Reset to 3.5 s, capped at 3 s.
        assert_eq!(table.next_deadline(), Some(now + 3 * S));
        table.check();
        let (id, _, why) = table.pop_expired(now + 3 * S).unwrap();
        assert_eq!((id, why), (a, Expiry::Cap(3 * S)));
        let (id, _, why) = table.pop_expired(now + 6 * S).unwrap();
        assert_eq!((id, why), (b, Expiry::Idle(5 * S)));
        assert!(table.pop_expired(now + 100 * S).is_none());
        assert!(!table.touch(a, now));
        table.check();
    }

    #[test]
    fn huge_durations_saturate_instead_of_overflowing() {
        let now = epoch();
        let mut table = PendingTable::default();
        let a = table.start(user(now, Duration::MAX, Duration::MAX));
        assert!(table.next_deadline().is_some_and(|at| at > now));
        assert!(table.touch(a, now + S));
        assert!(table.pop_expired(now + 1000 * S).is_none());
        table.check();
    }

    #[test]
    fn local_and_listen_requests() {
        let now = epoch();
        let mut table = PendingTable::default();
        let listen = table.start(Pending::new(PendingKind::Listen, now, None));
        let local = table.start_local(user(now, S, S));
        assert!(table.awaits(listen.first_wire()));
        assert!(!table.awaits(local.first_wire()));
        assert_eq!(table.next_deadline(), Some(now + S));
        table.check();
        assert_eq!(table.drain().len(), 2);
        assert_eq!((table.len(), table.next_deadline()), (0, None));
    }

    proptest::proptest! {
        /// Any sequence of operations keeps the three indexes in step (`check` after each), and
        /// the table agrees with a plain model of which wire id each call has in flight.
        #[test]
        fn any_operations_keep_the_indexes_in_step(ops in proptest::collection::vec((0u8..8, 0i64..12, 0u64..20), 0..60)) {
            let start = epoch();
            let mut table = PendingTable::default();
            // call -> wire in flight (None: parked or local)
            let mut model: BTreeMap<i64, Option<i64>> = BTreeMap::new();
            let mut now = start;
            for (op, n, secs) in ops {
                let t = Duration::from_secs(secs);
                match op {
                    0 => {
                        let id = table.start(user(now, t + S, 2 * t + S));
                        model.insert(id.0, Some(id.0));
                    }
                    1 => {
                        let id = table.start_local(user(now, t + S, t + S));
                        model.insert(id.0, None);
                    }
                    2 => {
                        if let Some(wire) = table.rewire(CallId(n)) {
                            model.insert(n, Some(wire.get()));
                        }
                    }
                    3 => {
                        let owner = model.iter().find(|(_, w)| **w == Some(n)).map(|(c, _)| *c);
                        let taken = table.take_by_wire(w(n)).map(|(id, _)| id.0);
                        proptest::prop_assert_eq!(taken, owner);
                        if let Some(c) = owner {
                            model.remove(&c);
                        }
                    }
                    4 => {
                        proptest::prop_assert_eq!(table.remove(CallId(n)).is_some(), model.remove(&n).is_some());
                    }
                    5 => {
                        proptest::prop_assert_eq!(table.touch(CallId(n), now), model.contains_key(&n));
                    }
                    6 => {
                        now += t;
                        while let Some((id, _, _)) = table.pop_expired(now) {
                            proptest::prop_assert!(model.remove(&id.0).is_some());
                        }
                        proptest::prop_assert!(table.next_deadline().is_none_or(|at| at > now));
                    }
                    _ => {
                        if let Some(mut pending) = table.remove(CallId(n)) {
                            pending.park();
                            table.insert(CallId(n), pending);
                            model.insert(n, None);
                        }
                    }
                }
                table.check();
                proptest::prop_assert_eq!(table.len(), model.len());
                for (call, wire) in &model {
                    if let Some(wire) = wire {
                        proptest::prop_assert_eq!(table.owner(w(*wire)), Some(CallId(*call)));
                    }
                }
            }
        }
    }

    #[test]
    fn the_table_drains_in_id_order_and_gives_memory_back_after_a_burst() {
        let now = epoch();
        let mut table = PendingTable::default();
        let ids: Vec<_> = (0..1000).map(|_| table.start(user(now, S, S))).collect();
        let room = table.entries.capacity();
        // All but the last ten answered, out of order: the even ids up, then the odd ones down.
        let answered = &ids[..990];
        for id in answered.iter().step_by(2).chain(answered.iter().skip(1).step_by(2).rev()) {
            assert!(table.remove(*id).is_some(), "{id:?}");
        }
        table.check();
        assert_eq!(table.len(), 10);
        assert!(table.entries.capacity() < room / 4, "{} of {room}", table.entries.capacity());
        let drained: Vec<_> = table.drain().into_iter().map(|(id, _)| id.0).collect();
        assert_eq!(drained, (990..1000).collect::<Vec<_>>());
        assert_eq!((table.len(), table.next_deadline()), (0, None));
    }

    #[test]
    fn a_held_request_has_no_deadline_until_released() {
        let now = epoch();
        let mut table = PendingTable::default();
        let id = table.start(Pending::new(PendingKind::User, now, Some(Timing::fixed(10 * S))));
        assert_eq!(table.next_deadline(), Some(now + 10 * S));
        assert!(table.hold(id));
        table.check();
        assert_eq!(table.next_deadline(), None);
        assert!(table.pop_expired(now + 1000 * S).is_none());
        // Progress does not move a held deadline either.
        table.touch(id, now + 500 * S);
        assert_eq!(table.next_deadline(), None);
        table.release(id, now + 600 * S);
        table.check();
        assert_eq!(table.next_deadline(), Some(now + 610 * S));
        // Released twice is once; a request taken out while held leaves no index behind.
        table.release(id, now + 700 * S);
        assert_eq!(table.next_deadline(), Some(now + 610 * S));
        table.hold(id);
        assert!(table.remove(id).is_some());
        table.check();
        assert_eq!(table.len(), 0);
    }
}
