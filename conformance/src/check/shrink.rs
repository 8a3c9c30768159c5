//! Shrinking one property's failure to a minimal sequence of its own.
//!
//! The case's value tree is made again from its seed and walked the way proptest walks it
//! (`simplify` while the property still breaks, `complicate` when it no longer does), but here,
//! so that the test is "this property breaks" rather than "anything breaks", and so that the
//! time and the number of sessions are ours to bound. A last pass does what proptest cannot:
//! it replaces a concurrent batch or a cancelled request with one of its requests alone.

use std::time::Instant;

use proptest::strategy::BoxedStrategy;

use super::actions::Action;
use super::report::ShrinkEnd;
use super::run::{Progress, case_tree};
use super::session::{CaseOutcome, Plan, run_case_with};
use super::{Catalog, CheckOptions, Property};
use crate::peer::Target;

/// How many sessions the values get once the steps stop getting fewer. proptest deletes steps
/// first, a couple of sessions per step; after that only values shrink, and a value such as a
/// 10 000-character string shrinks a character at a time. The steps are what the report is for.
pub(crate) const VALUE_RUNS: u32 = 48;

/// The smallest sequence found that breaks the property.
pub(crate) struct Shrunk {
    /// The sequence.
    pub minimal: Vec<Action>,
    /// Its session (the last one that broke the property).
    pub outcome: CaseOutcome,
    /// Sessions run.
    pub runs: u32,
    /// Why shrinking stopped.
    pub end: ShrinkEnd,
}

/// Shrinks `found` (the sequence of case `seed` and its outcome), which breaks `property`.
#[allow(clippy::too_many_arguments)] // One call site; a struct would only rename them.
pub(crate) fn shrink(
    target: &Target,
    catalog: &Catalog,
    options: &CheckOptions,
    plan: &Plan,
    strategy: &BoxedStrategy<Vec<Action>>,
    seed: &[u8; 32],
    property: Property,
    found: (Vec<Action>, CaseOutcome),
    progress: &(dyn Fn(Progress<'_>) + Sync),
) -> Shrunk {
    let deadline = Instant::now() + options.shrink_time;
    let mut best = Shrunk { minimal: found.0, outcome: found.1, runs: 0, end: ShrinkEnd::Minimal };
    // Whether `actions` still breaks the property; the outcome when it does.
    let breaks = |best: &mut Shrunk, actions: &[Action]| -> Option<CaseOutcome> {
        best.runs += 1;
        if best.runs.is_multiple_of(10) {
            progress(Progress::Shrinking { property, runs: best.runs, steps: best.minimal.len() });
        }
        smol::block_on(run_case_with(target, catalog, actions, options, plan))
            .ok()
            .filter(|outcome| outcome.violates(property))
    };
    // How many steps the sequence had, and since which session.
    let mut steps_since = (best.minimal.len(), 0);
    // Whether the budget is spent; says why in `best.end`.
    let mut spent = |best: &mut Shrunk| {
        if best.minimal.len() != steps_since.0 {
            steps_since = (best.minimal.len(), best.runs);
        }
        if best.runs >= steps_since.1 + VALUE_RUNS {
            best.end = ShrinkEnd::ValuesCut;
        } else if best.runs >= options.max_shrink_iters {
            best.end = ShrinkEnd::OutOfSteps;
        } else if Instant::now() >= deadline {
            best.end = ShrinkEnd::OutOfTime;
        } else {
            return false;
        }
        true
    };
    if let Some(mut tree) = case_tree(strategy, seed)
        && tree.simplify()
    {
        while !spent(&mut best) {
            let current = tree.current();
            match breaks(&mut best, &current) {
                Some(outcome) => {
                    best.minimal = current;
                    best.outcome = outcome;
                    if !tree.simplify() {
                        break;
                    }
                }
                None if current == best.minimal => {
                    // The sequence that failed passed this time: the failure depends on more than
                    // the sequence (state the server keeps across sessions, or chance).
                    best.end = ShrinkEnd::Unstable;
                    break;
                }
                None => {
                    if !tree.complicate() {
                        break;
                    }
                }
            }
        }
    }
    // A concurrent batch or a cancelled request, replaced by one of its requests alone: a few
    // runs more, even when the budget is spent, for these are the steps that read hardest.
    let extra = best.runs + 8;
    let mut spent = |best: &mut Shrunk| best.runs >= extra || (best.end == ShrinkEnd::Minimal && spent(best));
    let mut i = 0;
    while i < best.minimal.len() {
        let candidates: Vec<Action> = match &best.minimal[i] {
            Action::Concurrent(batch) => batch.clone(),
            Action::Cancelled(inner) => vec![(**inner).clone()],
            _ => Vec::new(),
        };
        for candidate in candidates {
            if spent(&mut best) {
                break;
            }
            let mut shorter = best.minimal.clone();
            shorter[i] = candidate;
            if let Some(outcome) = breaks(&mut best, &shorter) {
                best.minimal = shorter;
                best.outcome = outcome;
                break;
            }
        }
        i += 1;
    }
    best
}
