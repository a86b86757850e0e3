//! Statechart checks (E0312-E0316, and E0307/E0308 over the hierarchy): what a machine with
//! `state X { ... }` blocks or `history` adds to the flat rules of `fsm.rs`. Parallel regions
//! and completion are checked in `regions.rs`.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::model::{Chart, Declaration, FsmDef, Name, StateId};

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;
use super::fsm::{dead_end, unreachable};

/// Runs the statechart checks of a machine that has compound states or histories.
pub(crate) fn check_statechart(cx: &Ctxt, fsm: &FsmDef) {
    let chart = Chart::new(fsm);
    blocks(cx, fsm, &chart);
    histories(cx, fsm, &chart);
    rows(cx, fsm, &chart);
    super::regions::check_regions(cx, fsm, &chart);
    reachability(cx, fsm, &chart);
}

fn place(block: Option<&str>) -> String {
    match block {
        Some(b) => format!("in `state {b}`"),
        None => "at the top level".to_string(),
    }
}

/// Compound states: one block each, an `initial` each, names declared once, no `terminal`
/// inside.
fn blocks(cx: &Ctxt, fsm: &FsmDef, chart: &Chart<'_>) {
    let mut first_block: HashMap<&str, &Name> = HashMap::new();
    let mut repeated: HashSet<*const Name> = HashSet::new();
    for c in &fsm.compounds {
        let first = *first_block
            .entry(c.state.value.as_str())
            .or_insert(&c.state);
        if !std::ptr::eq(first, &c.state) {
            repeated.insert(std::ptr::from_ref(&c.state));
            cx.push(
                Diagnostic::error(
                    codes::FSM_DUPLICATE_DECLARATION,
                    c.state.span,
                    format!("compound state `{}` has two blocks", c.state.value),
                )
                .label("second block")
                .secondary(first.span, "first block")
                .help("write all of its children, rows and `initial` in one `state` block"),
            );
            continue;
        }
        match c.initial.as_slice() {
            // A parallel state enters every region (an `initial` there is E0318).
            _ if c.parallel => {}
            [] => {
                let help = match chart.id(&c.state.value).and_then(|id| {
                    chart.children[id].first().map(|&child| chart.states[child])
                }) {
                    Some(child) => format!(
                        "declare the child it enters by default, for example `initial {}` inside the block",
                        child.value
                    ),
                    None => "declare its children inside the block, and the one it enters by default with `initial Child`".to_string(),
                };
                cx.push(
                    Diagnostic::error(
                        codes::FSM_COMPOUND_NO_INITIAL,
                        c.state.span,
                        format!("compound state `{}` has no `initial` state", c.state.value),
                    )
                    .label("entered by rows, but enters no child")
                    .help(help),
                );
            }
            [first, rest @ ..] => {
                for again in rest {
                    cx.push(
                        Diagnostic::error(
                            codes::FSM_TWO_INITIALS,
                            again.span,
                            format!(
                                "compound state `{}` has more than one `initial` state: `{}` and `{}`",
                                c.state.value, first.value, again.value
                            ),
                        )
                        .label("second `initial`")
                        .secondary(first.span, "first `initial`")
                        .help("a compound state enters exactly one child by default; keep one `initial`"),
                    );
                }
            }
        }
    }
    for (later, first) in &chart.conflicts {
        if repeated.contains(&std::ptr::from_ref(later.at)) {
            continue;
        }
        ambiguous(cx, later, first);
    }
    for t in &fsm.terminals {
        if chart
            .id(&t.state.value)
            .is_some_and(|id| chart.compound[id])
        {
            cx.push(
                Diagnostic::error(
                    codes::FSM_NESTED_TERMINAL,
                    t.state.span,
                    format!("terminal state `{}` is a compound state", t.state.value),
                )
                .label("the machine is never in a compound state itself, only in one of its leaves")
                .help(format!(
                    "declare a leaf `terminal {0}Done` and a row to it, or drop `terminal {0}`",
                    t.state.value
                )),
            );
        }
    }
    for t in fsm.terminals.iter().filter(|t| t.block.is_some()) {
        cx.push(
            Diagnostic::error(
                codes::FSM_NESTED_TERMINAL,
                t.state.span,
                format!(
                    "terminal state `{}` is declared inside `state {}`",
                    t.state.value,
                    t.block.as_deref().unwrap_or_default()
                ),
            )
            .label("a terminal state ends the whole machine")
            .help(format!(
                "declare `terminal {}` at the top level, and leave the compound state with a row to it",
                t.state.value
            )),
        );
    }
}

fn ambiguous(cx: &Ctxt, later: &Declaration<'_>, first: &Declaration<'_>) {
    let name = &later.at.value;
    let help = match first.block {
        Some(b) => format!(
            "state names are unique in a machine; a row is written in the block of its source state, so move this row into `state {b} {{ ... }}` or rename one of the states"
        ),
        None => "state names are unique in a machine; a row is written in the block of its source state, so move this row to the top level or rename one of the states".to_string(),
    };
    cx.push(
        Diagnostic::error(
            codes::FSM_AMBIGUOUS_STATE,
            later.at.span,
            format!(
                "state `{name}` is declared {} and {}",
                place(first.block),
                place(later.block)
            ),
        )
        .label(format!("declares `{name}` {}", place(later.block)))
        .secondary(
            first.at.span,
            format!("first declared {}", place(first.block)),
        )
        .help(help),
    );
}

/// History pseudo-states: inside a compound state, never used as a state, a default inside.
fn histories(cx: &Ctxt, fsm: &FsmDef, chart: &Chart<'_>) {
    let names: HashMap<&str, &Name> = fsm
        .histories
        .iter()
        .map(|h| (h.name.value.as_str(), &h.name))
        .collect();
    for h in &fsm.histories {
        let Some(block) = h.block.as_deref() else {
            cx.push(
                Diagnostic::error(
                    codes::FSM_MISPLACED_HISTORY,
                    h.name.span,
                    format!("history `{}` is outside any compound state", h.name.value),
                )
                .label("at the top level")
                .help("a history remembers where a compound state was left: declare it inside `state X { ... }`"),
            );
            continue;
        };
        let Some(default) = &h.default else { continue };
        let inside = match (chart.id(block), chart.id(&default.value)) {
            (Some(compound), Some(to)) => to != compound && chart.within(to, compound),
            _ => false,
        };
        if !inside {
            cx.push(
                Diagnostic::error(
                    codes::FSM_MISPLACED_HISTORY,
                    default.span,
                    format!(
                        "the default of history `{}` is `{}`, which is not inside `state {block}`",
                        h.name.value, default.value
                    ),
                )
                .label("not a descendant of the compound state")
                .help(format!(
                    "a history resumes `{block}`; its default must be one of `{block}`'s descendants"
                )),
            );
        }
    }
    // A history is a target only: not a source, not declared as a state, not hooked.
    let used_as_state = |at: &Name, how: &str| {
        if names.contains_key(at.value.as_str()) {
            cx.push(
                Diagnostic::error(
                    codes::FSM_MISPLACED_HISTORY,
                    at.span,
                    format!("history `{}` is used as a state ({how})", at.value),
                )
                .label("a history pseudo-state")
                .help("a history is only a row target (`A -> H on event`); it has no rows, actions or children of its own"),
            );
        }
    };
    for row in &fsm.rows {
        used_as_state(&row.from, "the source of a row");
    }
    for hook in &fsm.hooks {
        used_as_state(
            &hook.state,
            &format!("`{}` action", hook.kind.value.keyword()),
        );
    }
    for c in &fsm.compounds {
        used_as_state(&c.state, "a compound state");
        for initial in &c.initial {
            used_as_state(initial, "`initial`");
        }
    }
    for initial in &fsm.initial {
        used_as_state(initial, "`initial`");
    }
    for t in &fsm.terminals {
        used_as_state(&t.state, "`terminal`");
    }
    for f in &fsm.finals {
        used_as_state(&f.state, "`final`");
    }
}

/// `local` rows must target a state inside their source.
fn rows(cx: &Ctxt, fsm: &FsmDef, chart: &Chart<'_>) {
    for row in fsm.rows.iter().filter(|r| r.local) {
        let (Some(from), Some(to)) = (chart.id(&row.from.value), chart.target(row)) else {
            continue;
        };
        let history = chart.histories.contains_key(row.to.value.as_str());
        let inside = chart.within(to, from) && (to != from || history);
        if !inside {
            cx.push(
                Diagnostic::error(
                    codes::FSM_LOCAL_OUTSIDE,
                    row.to.span,
                    format!(
                        "local row `{} -> local {}` targets a state outside `{}`",
                        row.from.value, row.to.value, row.from.value
                    ),
                )
                .label(format!("not inside `{}`", row.from.value))
                .help(format!(
                    "`local` keeps `{}` active while moving between its descendants; drop `local` for a row that leaves it",
                    row.from.value
                )),
            );
        }
    }
}

/// E0307 and E0308 over the hierarchy: entering a state enters its ancestors and (following
/// `initial`) its default descendants, and the rows of every active state may fire.
fn reachability(cx: &Ctxt, fsm: &FsmDef, chart: &Chart<'_>) {
    let Some(initial) = fsm.initial_state() else {
        return;
    };
    let Some(start) = chart.id(&initial.value) else {
        return;
    };
    let by_state = fsm.rows_by_state();
    let n = chart.states.len();
    let mut reached = vec![false; n];
    let mut queue = VecDeque::new();
    let enter = |leaf_of: StateId, reached: &mut Vec<bool>, queue: &mut VecDeque<StateId>| {
        let leaf = chart.default_leaf(leaf_of);
        for s in std::iter::once(leaf).chain(chart.ancestors(leaf)) {
            if !reached[s] {
                reached[s] = true;
                queue.push_back(s);
            }
        }
    };
    enter(start, &mut reached, &mut queue);
    while let Some(state) = queue.pop_front() {
        // A compound state without `initial` is reported once (E0312); its children are not
        // reported again as unreachable.
        // A parallel state enters every region.
        if chart.compound[state] && (chart.parallel[state] || chart.initial[state].is_none()) {
            for &child in &chart.children[state] {
                enter(child, &mut reached, &mut queue);
            }
        }
        for row in by_state
            .get(chart.states[state].value.as_str())
            .into_iter()
            .flatten()
        {
            if let Some(leaf) = chart.target_leaf(row) {
                enter(leaf, &mut reached, &mut queue);
            }
        }
    }
    let terminals: HashSet<&str> = fsm
        .terminals
        .iter()
        .map(|t| t.state.value.as_str())
        .collect();
    for (id, state) in chart.states.iter().enumerate() {
        if !reached[id] {
            unreachable(cx, &chart.states, state, initial);
        }
        let has_rows = |s: StateId| by_state.contains_key(chart.states[s].value.as_str());
        let leaves = !chart.compound[id]
            && !chart.finals[id]
            && !terminals.contains(state.value.as_str())
            && !has_rows(id)
            && !chart.ancestors(id).any(has_rows);
        if leaves {
            dead_end(cx, state);
        }
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use crate::check;

    fn codes(attr: proc_macro2::TokenStream) -> Vec<&'static str> {
        let item: syn::Item = syn::parse_quote!(
            struct Player;
        );
        let def = crate::tokens::agent(attr, &item).unwrap();
        match check::agent(&def) {
            Ok(_) => Vec::new(),
            Err(all) => all.iter().map(|d| d.code.id).collect(),
        }
    }

    #[test]
    fn a_well_formed_statechart_is_accepted() {
        assert_eq!(
            codes(quote!(transitions {
                initial Off
                Off -> On on power
                Off -> Resume on resume
                state On {
                    initial Stopped
                    history deep Resume -> Paused
                    On -> Off on power
                    On -> local Stopped on reset
                    Stopped -> Active on play
                    state Active {
                        initial Playing
                        Playing -> Paused on pause
                        Paused -> Playing on play
                    }
                }
            })),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn every_statechart_rule_has_its_code() {
        let cases = [
            (
                quote!(transitions { initial A A -> B on go state B { X -> A on back } }),
                "E0312",
            ),
            (
                quote!(transitions { initial A A -> B on go state B { initial X X -> A on back } X -> A on other }),
                "E0313",
            ),
            (
                quote!(transitions { initial A history H A -> H on go }),
                "E0314",
            ),
            (
                quote!(transitions { initial A A -> B on go state B { initial X terminal Y X -> Y on end } }),
                "E0315",
            ),
            (
                quote!(transitions { initial A A -> B on go B -> local A on up state B { initial X X -> A on back } }),
                "E0316",
            ),
            (
                quote!(transitions { initial A terminal B A -> B on go state B { initial X X -> A on back } }),
                "E0315",
            ),
            (
                quote!(transitions { initial A A -> B on go state B { initial X X -> A on back } state B { initial X } }),
                "E0311",
            ),
            (
                quote!(transitions { initial A A -> B on go state B { initial X initial Y X -> Y on n Y -> A on back } }),
                "E0302",
            ),
            (
                quote!(transitions { initial A A -> P on go parallel P { P -> A on back } }),
                "E0317",
            ),
            (
                quote!(transitions { initial A A -> P on go parallel P { X -> A on back state R { initial Y Y -> A on back } } }),
                "E0317",
            ),
            (
                quote!(transitions { initial A A -> P on go parallel P { initial R state R { initial Y Y -> A on back } } }),
                "E0318",
            ),
            (
                quote!(transitions { initial A A -> P on go parallel P { state R { initial Y Y -> Z on x } state S { initial Z Z -> A on back } } }),
                "E0319",
            ),
            (
                quote!(transitions { initial A final B A -> B on go }),
                "E0320",
            ),
            (
                quote!(transitions { initial A A -> C on go state C { initial X X -> Y on n final Y Y -> X on again } C -> A when done }),
                "E0320",
            ),
            (
                quote!(transitions { initial A A -> C on go state C { initial X X -> Y on n Y -> X on n } C -> A when done }),
                "E0321",
            ),
            (
                quote!(transitions { initial A B -> A when done A -> B on go }),
                "E0321",
            ),
        ];
        for (attr, code) in cases {
            assert_eq!(codes(attr.clone()), [code], "{attr}");
        }
    }

    #[test]
    fn a_well_formed_parallel_state_is_accepted() {
        assert_eq!(
            codes(quote!(transitions {
                initial Off
                Off -> Running on start
                Off -> Loud on blast
                parallel Running {
                    Running -> Off on stop
                    state Wash { initial Filling  Filling -> Rinsed on next  final Rinsed }
                    state Dry { initial Cold  Cold -> Dried on next  final Dried }
                    state Volume { initial Quiet  Quiet -> Loud on up  Loud -> Quiet on down }
                    Wash -> local Filling when done
                }
            })),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn reachability_follows_the_hierarchy() {
        // `Y` is only reached through the parent's row; `Z` by nothing.
        assert_eq!(
            codes(quote!(transitions {
                initial A
                A -> B on go
                state B { initial X  B -> Y on jump  X -> A on back  Y -> A on back  Z -> A on back }
            })),
            ["E0307"]
        );
        // A leaf with no rows of its own is not a dead end when an ancestor has rows.
        assert_eq!(
            codes(
                quote!(transitions { initial A A -> B on go state B { initial X B -> A on back } })
            ),
            Vec::<&str>::new()
        );
    }
}
