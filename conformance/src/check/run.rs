//! A whole check: explore the server, run the cases (several sessions at once), then shrink
//! each violated property's first failing sequence on its own.
//!
//! Every case tests every property, and nothing stops a case but a server that is gone or no
//! longer answers: so one run finds every property that breaks, not just the first. The
//! cases also teach the run how fast the server answers; shrinking then waits that long (ten
//! times over, and a margin) instead of the full timeouts, and stops each session as soon as
//! the property it shrinks breaks.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use proptest::strategy::{BoxedStrategy, Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use super::actions::{Action, actions};
use super::report::{Allowed, AllowedBy, CheckReport, PropertyReport, Verdict, Violation};
use super::session::{Budgets, CaseOutcome, Plan, explore, run_case_with};
use super::shrink::shrink;
use super::{Catalog, CheckOptions, Finding, Property, SlowRequest};
use crate::peer::Target;

/// What a running check has to say, for a progress display.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Progress<'a> {
    /// The server was explored; the cases start.
    Explored {
        /// What it offers.
        catalog: &'a Catalog,
        /// The run's seed.
        seed: u64,
    },
    /// A case ended.
    Case {
        /// How many cases have ended.
        done: u32,
        /// How many there are.
        of: u32,
        /// The properties violated so far.
        violated: Vec<Property>,
    },
    /// A property broke for the first time.
    Found {
        /// The property.
        property: Property,
        /// The case (counting from 1).
        case: u32,
        /// What happened.
        finding: &'a Finding,
    },
    /// Shrinking a property's failure made progress.
    Shrinking {
        /// The property.
        property: Property,
        /// Sessions run so far.
        runs: u32,
        /// Steps in the smallest failing sequence so far.
        steps: usize,
    },
    /// Shrinking a property's failure ended.
    Shrunk {
        /// The property.
        property: Property,
        /// Steps in the minimal sequence.
        steps: usize,
        /// Sessions it took.
        runs: u32,
    },
}

/// Explores `target`, runs `options.cases` generated sequences, and shrinks each violated
/// property's failure to a minimal sequence of its own.
pub fn check(target: &Target, options: &CheckOptions) -> io::Result<CheckReport> {
    check_with_progress(target, options, &|_| {})
}

/// The first sequence that broke a property.
struct Witness {
    case: u32,
    seed: [u8; 32],
    actions: Vec<Action>,
    outcome: CaseOutcome,
}

/// The most latencies kept to learn from.
const MAX_LATENCIES: usize = 4096;

/// What the cases have learned so far, shared by the workers.
#[derive(Default)]
struct Learned {
    next: u32,
    done: u32,
    out_of_time: bool,
    error: Option<io::Error>,
    /// How long answers to requests that need no work took (a sample of them).
    latencies: Vec<Duration>,
    slow: Vec<SlowRequest>,
    /// Everything cancelled for outliving its budget, slow or worse.
    cut_short: BTreeSet<String>,
    checks: BTreeMap<Property, u64>,
    witnesses: BTreeMap<Property, Witness>,
    allowed: BTreeMap<Property, Finding>,
    warnings: Vec<String>,
}

impl Learned {
    fn plan(&self, options: &CheckOptions) -> Plan {
        let mut settled = options.allow.clone();
        settled.extend(self.witnesses.keys().copied());
        let mut budgets = Budgets::from_options(options);
        if let Some(latency) = self.typical_latency() {
            let learned = Budgets::learned(options, latency);
            budgets.known_slow = learned.known_slow;
            budgets.settled = learned.verdict;
        }
        Plan { stop_on: None, settled, budgets, slow_keys: self.cut_short.clone() }
    }

    /// The time within which the server answers nine in ten requests that need no work. Not the
    /// longest: a ping answered only after a blocking tool call ended says nothing of how fast
    /// the server answers, and would stretch every budget to the full timeouts.
    fn typical_latency(&self) -> Option<Duration> {
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        sorted.get(sorted.len() * 9 / 10).or(sorted.last()).copied()
    }

    fn absorb(
        &mut self,
        case: u32,
        seed: [u8; 32],
        actions: &[Action],
        outcome: CaseOutcome,
    ) -> Vec<Property> {
        let room = MAX_LATENCIES.saturating_sub(self.latencies.len());
        self.latencies.extend(outcome.latencies.iter().take(room));
        for (property, n) in &outcome.checks {
            *self.checks.entry(*property).or_default() += u64::from(*n);
        }
        self.cut_short.extend(outcome.cut_short.iter().cloned());
        for slow in &outcome.slow {
            if !self.slow.iter().any(|s| s.key == slow.key) {
                self.slow.push(slow.clone());
            }
        }
        for warning in outcome.warnings.iter().map(String::as_str) {
            // One example per kind of warning: its first three words (property, method, tool).
            let kind = |w: &str| w.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
            let this = kind(warning);
            if self.warnings.len() < 50 && !self.warnings.iter().any(|w| kind(w) == this) {
                self.warnings.push(warning.to_owned());
            }
        }
        for finding in &outcome.allowed {
            self.allowed.entry(finding.property).or_insert_with(|| finding.clone());
        }
        let mut found = Vec::new();
        let new: BTreeSet<Property> = outcome
            .violations
            .iter()
            .map(|f| f.property)
            .filter(|p| self.witnesses.get(p).is_none_or(|w| w.case > case))
            .collect();
        for property in new {
            found.push(property);
            self.witnesses.insert(
                property,
                Witness { case, seed, actions: actions.to_vec(), outcome: outcome.clone() },
            );
        }
        found
    }
}

/// The value tree of case `seed`: the same seed always makes the same sequence, so a case can
/// be made again to shrink it.
pub(crate) fn case_tree(
    strategy: &BoxedStrategy<Vec<Action>>,
    seed: &[u8; 32],
) -> Option<Box<dyn ValueTree<Value = Vec<Action>>>> {
    let mut runner =
        TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, seed));
    strategy.new_tree(&mut runner).ok()
}

/// The seed of case `case` of a run with seed `seed` (splitmix64 over both).
fn case_seed(seed: u64, case: u32) -> [u8; 32] {
    let mut state = seed ^ u64::from(case).wrapping_mul(0xd1b5_4a32_d192_ed03);
    let mut bytes = [0u8; 32];
    for chunk in bytes.chunks_mut(8) {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        chunk.copy_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    bytes
}

/// A seed when none was given.
fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    // Mixed with the process id, so that two runs started at once differ.
    (nanos as u64).rotate_left(17) ^ u64::from(std::process::id()).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// [`check`], telling `progress` how it goes (from several threads at once).
pub fn check_with_progress(
    target: &Target,
    options: &CheckOptions,
    progress: &(dyn Fn(Progress<'_>) + Sync),
) -> io::Result<CheckReport> {
    let started = Instant::now();
    let catalog = smol::block_on(explore(target, options))?;
    let seed = options.seed.unwrap_or_else(fresh_seed);
    progress(Progress::Explored { catalog: &catalog, seed });
    let seeds: Vec<[u8; 32]> = (0..options.cases).map(|case| case_seed(seed, case)).collect();
    let learned = Mutex::new(Learned::default());
    let lock = || learned.lock().unwrap_or_else(|e| e.into_inner());
    let jobs = options.jobs.max(1);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                // Each thread has its own (a strategy is not `Sync`); the same seed makes the
                // same sequence from any of them.
                let strategy = actions(&catalog, options.max_actions);
                loop {
                    let (case, plan) = {
                        let mut state = lock();
                        if state.error.is_some() || state.next as usize >= seeds.len() {
                            return;
                        }
                        if started.elapsed() > options.time_limit {
                            state.out_of_time = true;
                            return;
                        }
                        state.next += 1;
                        (state.next, state.plan(options))
                    };
                    let seed = seeds[case as usize - 1];
                    let Some(tree) = case_tree(&strategy, &seed) else { continue };
                    let actions = tree.current();
                    let outcome = smol::block_on(run_case_with(target, &catalog, &actions, options, &plan));
                    let mut state = lock();
                    match outcome {
                        Err(e) => {
                            state.error.get_or_insert(e);
                            return;
                        }
                        Ok(outcome) => {
                            let found = state.absorb(case, seed, &actions, outcome);
                            state.done += 1;
                            for property in found {
                                let finding = state.witnesses.get(&property).and_then(|w| {
                                    w.outcome.violations.iter().find(|f| f.property == property)
                                });
                                if let Some(finding) = finding {
                                    progress(Progress::Found { property, case, finding });
                                }
                            }
                            let violated = state.witnesses.keys().copied().collect();
                            progress(Progress::Case { done: state.done, of: options.cases, violated });
                        }
                    }
                }
            });
        }
    });
    let mut state = learned.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(error) = state.error.take() {
        return Err(error);
    }
    // Shrinking: each violated property on its own, as many at once as there are jobs.
    let mut budgets =
        Budgets::learned(options, state.typical_latency().unwrap_or(options.request_timeout / 10));
    // A tool call that was never cut short in the cases keeps its full budget: it answered
    // within it, and a shorter one would cancel it and change what the sequence does (a call
    // that writes a large file takes longer than a ping).
    budgets.slow = Budgets::from_options(options).slow;
    let slow_keys = state.cut_short.clone();
    let witnesses: Vec<(Property, Witness)> = std::mem::take(&mut state.witnesses).into_iter().collect();
    let queue = Mutex::new(witnesses.into_iter());
    let shrunk = Mutex::new(BTreeMap::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                let strategy = actions(&catalog, options.max_actions);
                loop {
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                    let Some((property, witness)) = next else { return };
                    let plan = Plan {
                        stop_on: Some(property),
                        settled: Property::ALL.into_iter().filter(|p| *p != property).collect(),
                        budgets,
                        slow_keys: slow_keys.clone(),
                    };
                    let found_len = witness.actions.len();
                    let result = shrink(
                        target,
                        &catalog,
                        options,
                        &plan,
                        &strategy,
                        &witness.seed,
                        property,
                        (witness.actions, witness.outcome),
                        progress,
                    );
                    progress(Progress::Shrunk { property, steps: result.minimal.len(), runs: result.runs });
                    let finding = result
                        .outcome
                        .violations
                        .iter()
                        .find(|f| f.property == property)
                        .cloned()
                        .unwrap_or_else(|| Finding {
                            property,
                            message: "the failure did not reproduce while shrinking (a flaky server?)".into(),
                            known: None,
                        });
                    let mut trace = result.outcome.trace;
                    trace.header.note = Some(format!("mcp-conformance check failure: {finding}"));
                    let violation = Violation {
                        finding,
                        minimal: result.minimal,
                        found_len,
                        case: witness.case,
                        shrink_runs: result.runs,
                        shrink_end: result.end,
                        trace,
                    };
                    shrunk.lock().unwrap_or_else(|e| e.into_inner()).insert(property, violation);
                }
            });
        }
    });
    let mut shrunk = shrunk.into_inner().unwrap_or_else(|e| e.into_inner());
    let properties = Property::ALL
        .into_iter()
        .filter(|property| property.applies(&catalog))
        .map(|property| {
            let checks = state.checks.get(&property).copied().unwrap_or_default();
            let violation = shrunk.remove(&property);
            let allowed = state.allowed.remove(&property).map(|finding| Allowed {
                by: if options.allow.contains(&property) { AllowedBy::Flag } else { AllowedBy::SdkDeviation },
                finding,
            });
            let verdict = match (&violation, &allowed) {
                (Some(_), _) => Verdict::Violated,
                (None, Some(_)) => Verdict::Allowed,
                (None, None) if checks == 0 => Verdict::NotTested,
                (None, None) => Verdict::Held,
            };
            PropertyReport { property, verdict, checks, violation, allowed }
        })
        .collect();
    Ok(CheckReport {
        catalog,
        seed,
        cases: state.done,
        out_of_time: state.out_of_time,
        elapsed: started.elapsed(),
        properties,
        slow: state.slow,
        warnings: state.warnings,
    })
}
