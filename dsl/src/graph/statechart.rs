//! What a statechart adds to the FSM diagrams: compound states as DOT clusters and Mermaid
//! `state X { ... }` blocks, the regions of a parallel state as dashed clusters and Mermaid's
//! `--` separators, final states (`Final --> [*]` inside their block), history pseudo-states,
//! and edges to or from a compound state drawn to its cluster. A flat machine never reaches
//! this file, so its diagrams do not change.

use std::fmt::Write;

use crate::model::{Chart, FsmDef, HookKind, StateId};

/// One step of a pre-order walk over the hierarchy.
enum Visit {
    Open(StateId, usize),
    Leaf(StateId, usize),
    Close(StateId, usize),
}

/// The hierarchy in document order, with an explicit stack (no recursion over user input).
fn walk(chart: &Chart<'_>) -> Vec<Visit> {
    let mut out = Vec::new();
    let top: Vec<StateId> = (0..chart.states.len())
        .filter(|&s| chart.parent[s].is_none())
        .collect();
    // (children, next index, the compound they belong to)
    let mut stack: Vec<(&[StateId], usize, Option<StateId>)> = vec![(&top, 0, None)];
    loop {
        let depth = stack.len().saturating_sub(1);
        let Some((children, next, owner)) = stack.last_mut() else {
            break;
        };
        let Some(&child) = children.get(*next) else {
            let owner = *owner;
            stack.pop();
            if let Some(owner) = owner {
                out.push(Visit::Close(owner, depth - 1));
            }
            continue;
        };
        *next += 1;
        if chart.compound[child] {
            out.push(Visit::Open(child, depth));
            stack.push((&chart.children[child], 0, Some(child)));
        } else {
            out.push(Visit::Leaf(child, depth));
        }
    }
    out
}

/// Whether `id` is a region of a parallel state after its first one.
fn later_region(chart: &Chart<'_>, id: StateId) -> bool {
    chart.parent[id].is_some_and(|p| chart.parallel[p] && chart.children[p].first() != Some(&id))
}

fn indent(depth: usize) -> String {
    "    ".repeat(depth + 1)
}

fn histories_of<'a>(fsm: &'a FsmDef, name: &'a str) -> impl Iterator<Item = (&'a str, bool)> + 'a {
    fsm.histories
        .iter()
        .filter(move |h| h.block.as_deref() == Some(name))
        .map(|h| (h.name.value.as_str(), h.deep))
}

/// Mermaid `state X { [*] --> Initial ... }` blocks, children declared inside.
pub(super) fn mermaid_blocks(fsm: &FsmDef, chart: &Chart<'_>, out: &mut String) {
    for visit in walk(chart) {
        match visit {
            Visit::Open(id, depth) => {
                if later_region(chart, id) {
                    let _ = writeln!(out, "{}--", indent(depth));
                }
                let _ = writeln!(out, "{}state {} {{", indent(depth), chart.states[id].value);
                if let Some(initial) = chart.initial[id] {
                    let _ = writeln!(
                        out,
                        "{}[*] --> {}",
                        indent(depth + 1),
                        chart.states[initial].value
                    );
                }
            }
            Visit::Leaf(id, depth) if depth > 0 => {
                let _ = writeln!(out, "{}{}", indent(depth), chart.states[id].value);
                if chart.finals[id] {
                    let _ = writeln!(out, "{}{} --> [*]", indent(depth), chart.states[id].value);
                }
            }
            Visit::Leaf(..) => {}
            Visit::Close(id, depth) => {
                for (history, deep) in histories_of(fsm, &chart.states[id].value) {
                    let mark = if deep { "H*" } else { "H" };
                    let _ = writeln!(out, "{}state \"{mark}\" as {history}", indent(depth + 1));
                }
                let _ = writeln!(out, "{}}}", indent(depth));
            }
        }
    }
}

/// DOT `subgraph cluster_X { label=...; children }`, hooks in the cluster's label.
pub(super) fn dot_clusters(
    fsm: &FsmDef,
    chart: &Chart<'_>,
    out: &mut String,
    quote_id: fn(&str) -> String,
    quote_str: fn(&str) -> String,
    path: fn(&syn::Path) -> String,
) {
    for visit in walk(chart) {
        match visit {
            Visit::Open(id, depth) => {
                let name = &chart.states[id].value;
                let label = std::iter::once(name.clone())
                    .chain(
                        [HookKind::Enter, HookKind::Exit]
                            .into_iter()
                            .filter_map(|kind| {
                                fsm.hook(kind, name).map(|h| {
                                    format!("{} / {}", kind.keyword(), path(&h.action.value))
                                })
                            }),
                    )
                    .collect::<Vec<_>>()
                    .join("\\n");
                let _ = writeln!(
                    out,
                    "{}subgraph {} {{",
                    indent(depth),
                    quote_id(&format!("cluster_{name}"))
                );
                let _ = writeln!(out, "{}label={};", indent(depth + 1), quote_str(&label));
                if chart.parent[id].is_some_and(|p| chart.parallel[p]) {
                    // A region: the dashed line of UML's orthogonal regions.
                    let _ = writeln!(out, "{}style=dashed;", indent(depth + 1));
                }
            }
            Visit::Leaf(id, depth) if depth > 0 => {
                let shape = if chart.finals[id] {
                    " [shape=doublecircle]"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "{}{}{shape};",
                    indent(depth),
                    quote_id(&chart.states[id].value)
                );
            }
            Visit::Leaf(..) => {}
            Visit::Close(id, depth) => {
                for (history, deep) in histories_of(fsm, &chart.states[id].value) {
                    let mark = if deep { "H*" } else { "H" };
                    let _ = writeln!(
                        out,
                        "{}{} [label=\"{mark}\", shape=circle];",
                        indent(depth + 1),
                        quote_id(history)
                    );
                }
                let _ = writeln!(out, "{}}}", indent(depth));
            }
        }
    }
}

/// Where an edge to or from `name` is drawn: a compound state's edge goes to its default leaf,
/// clipped at its cluster (`lhead`/`ltail`).
pub(super) fn endpoint(chart: &Chart<'_>, name: &str) -> (String, Option<String>) {
    match chart.id(name) {
        Some(id) if chart.compound[id] => (
            // A parallel state has no default leaf of its own: its first region's.
            chart.default_leaves(id).first().map_or_else(
                || name.to_string(),
                |&leaf| chart.states[leaf].value.clone(),
            ),
            Some(format!("cluster_{name}")),
        ),
        _ => (name.to_string(), None),
    }
}
