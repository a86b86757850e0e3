//! Parallel regions and completion (E0317-E0321): what `parallel X { ... }`, `final S` and
//! `when done` rows add to the statechart checks of `statechart.rs`.

use std::collections::HashSet;

use crate::model::{Chart, FsmDef, StateId};

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;

/// Runs the region and completion checks of a statechart.
pub(crate) fn check_regions(cx: &Ctxt, fsm: &FsmDef, chart: &Chart<'_>) {
    parallels(cx, fsm, chart);
    crossings(cx, fsm, chart);
    finals(cx, fsm, chart);
    done_rows(cx, fsm, chart);
}

/// Every child of a parallel state is a region (a compound state), and there is one at least;
/// no `initial` (every region is entered).
fn parallels(cx: &Ctxt, fsm: &FsmDef, chart: &Chart<'_>) {
    let mut seen = HashSet::new();
    for c in fsm.compounds.iter().filter(|c| c.parallel) {
        let Some(id) = chart.id(&c.state.value) else {
            continue;
        };
        if !seen.insert(id) {
            continue; // two blocks: E0311
        }
        let name = &c.state.value;
        if chart.children[id].is_empty() {
            cx.push(
                Diagnostic::error(
                    codes::FSM_EMPTY_REGION,
                    c.state.span,
                    format!("parallel state `{name}` has no regions"),
                )
                .label("nothing inside runs in parallel")
                .help(format!(
                    "declare its regions inside the block, each a compound state: `parallel {name} {{ state Left {{ initial A ... }} state Right {{ initial B ... }} }}`"
                )),
            );
        }
        for &child in &chart.children[id] {
            if chart.compound[child] {
                continue;
            }
            let leaf = chart.declared[child].at;
            cx.push(
                Diagnostic::error(
                    codes::FSM_EMPTY_REGION,
                    leaf.span,
                    format!(
                        "region `{}` of parallel state `{name}` has no states",
                        leaf.value
                    ),
                )
                .label(format!("a leaf state directly inside `parallel {name}`"))
                .help(format!(
                    "a region is a compound state: write `state {} {{ initial ... }}` inside `parallel {name}`, and its rows inside it",
                    leaf.value
                )),
            );
        }
        for initial in &c.initial {
            cx.push(
                Diagnostic::error(
                    codes::FSM_PARALLEL_INITIAL,
                    initial.span,
                    format!(
                        "parallel state `{name}` has an `initial` state `{}`",
                        initial.value
                    ),
                )
                .label("every region of a parallel state is entered")
                .help(format!(
                    "drop `initial {}`; each region chooses where it starts with its own `initial`",
                    initial.value
                )),
            );
        }
    }
}

/// A row from a state in one region to a state in a sibling region: UML forbids it, and in
/// SCXML it would leave and re-enter the whole parallel state, which is seldom what is meant.
fn crossings(cx: &Ctxt, fsm: &FsmDef, chart: &Chart<'_>) {
    for row in fsm.rows.iter().filter(|r| !r.internal) {
        let (Some(from), Some(to)) = (chart.id(&row.from.value), chart.target(row)) else {
            continue;
        };
        let Some(parallel) = chart.across_regions(from, to) else {
            continue;
        };
        let region_of = |s: StateId| {
            std::iter::once(s)
                .chain(chart.ancestors(s))
                .find(|&x| chart.parent[x] == Some(parallel))
                .map_or("?", |r| chart.states[r].value.as_str())
        };
        let p = &chart.states[parallel].value;
        cx.push(
            Diagnostic::error(
                codes::FSM_CROSS_REGION,
                row.span,
                format!(
                    "row `{} -> {}` crosses from region `{}` to region `{}` of parallel state `{p}`",
                    row.from.value,
                    row.to.value,
                    region_of(from),
                    region_of(to)
                ),
            )
            .label("regions of a parallel state run side by side")
            .help(format!(
                "target `{p}` to leave and re-enter every region, or let the event move `{}` with a row of its own",
                region_of(to)
            )),
        );
    }
}

/// `final` inside a compound state, a leaf, with no outgoing row.
fn finals(cx: &Ctxt, fsm: &FsmDef, chart: &Chart<'_>) {
    let by_state = fsm.rows_by_state();
    for f in &fsm.finals {
        let name = &f.state.value;
        if f.block.is_none() {
            cx.push(
                Diagnostic::error(
                    codes::FSM_MISPLACED_FINAL,
                    f.state.span,
                    format!("final state `{name}` is outside any compound state"),
                )
                .label("at the top level")
                .help(format!(
                    "`final` completes the compound state around it; to end the machine, write `terminal {name}`"
                )),
            );
            continue;
        }
        if chart.id(name).is_some_and(|id| chart.compound[id]) {
            cx.push(
                Diagnostic::error(
                    codes::FSM_MISPLACED_FINAL,
                    f.state.span,
                    format!("final state `{name}` is a compound state"),
                )
                .label("a final state has no children")
                .help(format!(
                    "declare a leaf `final {name}Done` inside `{name}` and a row to it"
                )),
            );
        }
        if let Some(row) = by_state.get(name.as_str()).and_then(|rows| rows.first()) {
            cx.push(
                Diagnostic::error(
                    codes::FSM_MISPLACED_FINAL,
                    row.from.span,
                    format!("final state `{name}` has an outgoing row"),
                )
                .label("leaves a final state")
                .secondary(f.state.span, "declared final")
                .help(format!(
                    "a final state completes `{}`; leave it with a `when done` row on `{}`",
                    f.block.as_deref().unwrap_or_default(),
                    f.block.as_deref().unwrap_or_default()
                )),
            );
        }
    }
}

/// Whether `state` can complete: a compound state with a final child, a parallel state whose
/// every region can. An explicit stack: no recursion over the user's nesting.
fn completes(chart: &Chart<'_>, state: StateId) -> bool {
    let mut stack = vec![state];
    while let Some(at) = stack.pop() {
        if chart.parallel[at] {
            if chart.children[at].is_empty() {
                return false;
            }
            stack.extend(&chart.children[at]);
        } else if !chart.children[at].iter().any(|&c| chart.finals[c]) {
            return false;
        }
    }
    true
}

/// `when done` rows leave a compound or parallel state that can complete.
fn done_rows(cx: &Ctxt, fsm: &FsmDef, chart: &Chart<'_>) {
    for row in fsm.rows.iter().filter(|r| r.is_done()) {
        let Some(from) = chart.id(&row.from.value) else {
            continue;
        };
        if completes(chart, from) {
            continue;
        }
        let name = &row.from.value;
        let why = if !chart.compound[from] {
            format!("`{name}` is not a compound or parallel state")
        } else if chart.parallel[from] {
            format!("a region of `{name}` has no `final` state")
        } else {
            format!("`{name}` has no `final` state")
        };
        cx.push(
            Diagnostic::error(
                codes::FSM_DONE_NEVER,
                row.span,
                format!("row `{name} -> {} when done` can never fire", row.to.value),
            )
            .label(why)
            .help(format!(
                "`when done` fires when `{name}` enters a `final` child (every region's, for a parallel state): declare `final Done` inside it, or use an event row"
            )),
        );
    }
}
