//! What a tree becomes once its subtrees are inlined: how many nodes (each `subtree` use is a
//! copy, so a few lines can multiply into millions) and how deep its generated progress type
//! nests (rustc checks nested types only to a depth of 128 by default). Both are bounded
//! (`E0410`, `E0409`), so the generator never produces unbounded or uncompilable code.
//!
//! Behaviours are measured bottom up over the graph of their subtree uses, with an explicit
//! stack: a chain of behaviours can be as long as the file. Within one tree the walk recurses,
//! bounded by the nesting limit.

use std::collections::HashMap;

use crate::limits::{TREE_NODES, TREE_TYPE_DEPTH};
use crate::model::{BehaviorDef, NodeDef, NodeKind, Span, group_children};

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;
use super::tree::{Behaviors, behavior_index, chain};

/// A tree once inlined.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Size {
    /// Nodes, saturating.
    nodes: u64,
    /// Nesting of the generated progress type.
    state: usize,
    /// Nesting of the generated node type.
    node: usize,
}

impl Size {
    /// How deeply the generated types nest: what rustc's recursion limit applies to.
    fn depth(&self) -> usize {
        self.state.max(self.node)
    }

    fn too_deep(&self) -> bool {
        self.depth() > TREE_TYPE_DEPTH
    }
}

/// Measures every behaviour and reports each one that crosses a limit while the behaviours it
/// uses do not (so one cause is one error, not one per user of it).
pub fn check_behaviors(cx: &Ctxt, behaviors: &[BehaviorDef]) {
    let index = behavior_index(behaviors);
    let sizes = measure_all(behaviors, &index);
    for (i, behavior) in behaviors.iter().enumerate() {
        let uses: Vec<usize> = used(&behavior.root, &index);
        let size = sizes[i];
        if size.nodes > TREE_NODES as u64
            && uses.iter().all(|&u| sizes[u].nodes <= TREE_NODES as u64)
        {
            let names = heaviest_chain(i, behaviors, &index, &sizes, |s| s.nodes as u128);
            cx.push(too_large(
                behavior.name.span,
                &behavior.name.value,
                size,
                &names,
            ));
        }
        if size.too_deep() && uses.iter().all(|&u| !sizes[u].too_deep()) {
            let names = heaviest_chain(i, behaviors, &index, &sizes, |s| s.depth() as u128);
            cx.push(too_deep(
                behavior.name.span,
                &behavior.name.value,
                size,
                &names,
            ));
        }
    }
}

/// Checks a tree written in place (an agent's, `bt!`'s root) against the behaviours it may use.
pub fn check_root(cx: &Ctxt, root: &NodeDef, behaviors: &Behaviors<'_>) {
    let index = behaviors.index();
    let behaviors = behaviors.list;
    // Only what the root reaches is measured: most inline trees use no subtree at all.
    let mut sizes: HashMap<usize, Size> = HashMap::new();
    let mut expanded: HashMap<usize, ()> = HashMap::new();
    // Post-order with an explicit stack: `(behaviour, its uses already pushed)`.
    let mut stack: Vec<(usize, bool)> = used(root, index).into_iter().map(|b| (b, false)).collect();
    while let Some((b, uses_pushed)) = stack.pop() {
        if uses_pushed {
            // A use not measured yet is on the path: a cycle, reported elsewhere.
            let size = measure_behavior(&behaviors[b], index, &|u| sizes.get(&u).copied());
            sizes.insert(b, size);
        } else if expanded.insert(b, ()).is_none() {
            stack.push((b, true));
            stack.extend(
                used(&behaviors[b].root, index)
                    .into_iter()
                    .map(|u| (u, false)),
            );
        }
    }
    let size = measure(root, index, &|u| sizes.get(&u).copied());
    let uses = used(root, index);
    if size.nodes > TREE_NODES as u64
        && uses
            .iter()
            .all(|u| sizes.get(u).is_none_or(|s| s.nodes <= TREE_NODES as u64))
    {
        cx.push(too_large(root.span, "this tree", size, &[]));
    }
    if size.too_deep()
        && uses
            .iter()
            .all(|u| sizes.get(u).is_none_or(|s| !s.too_deep()))
    {
        cx.push(too_deep(root.span, "this tree", size, &[]));
    }
}

/// Every behaviour's size, callees first.
fn measure_all(behaviors: &[BehaviorDef], index: &HashMap<&str, usize>) -> Vec<Size> {
    let mut sizes: Vec<Option<Size>> = vec![None; behaviors.len()];
    let mut on_path = vec![false; behaviors.len()];
    for start in 0..behaviors.len() {
        if sizes[start].is_some() {
            continue;
        }
        let mut path: Vec<(usize, Vec<usize>)> = vec![(start, used(&behaviors[start].root, index))];
        on_path[start] = true;
        while let Some((at, uses)) = path.last_mut() {
            let at = *at;
            match uses.pop() {
                // A use on the path is a cycle (reported by the cycle check): not followed.
                Some(next) if sizes[next].is_none() && !on_path[next] => {
                    on_path[next] = true;
                    let next_uses = used(&behaviors[next].root, index);
                    path.push((next, next_uses));
                }
                Some(_) => {}
                None => {
                    sizes[at] = Some(measure_behavior(&behaviors[at], index, &|u| sizes[u]));
                    on_path[at] = false;
                    path.pop();
                }
            }
        }
    }
    sizes.into_iter().map(|s| s.unwrap_or(LEAF)).collect()
}

const LEAF: Size = Size {
    nodes: 1,
    state: 1,
    node: 1,
};

/// The behaviours a tree's `subtree` leaves name (those that exist), without repeats.
fn used(root: &NodeDef, index: &HashMap<&str, usize>) -> Vec<usize> {
    let mut out: Vec<usize> = root
        .subtrees()
        .into_iter()
        .filter_map(|name| index.get(name.value.as_str()).copied())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// A behaviour's size: its root's, wrapped in the `Subtree` node that names it (in every use
/// and as an agent's tree).
fn measure_behavior(
    behavior: &BehaviorDef,
    index: &HashMap<&str, usize>,
    sizes: &dyn Fn(usize) -> Option<Size>,
) -> Size {
    let root = measure(&behavior.root, index, sizes);
    Size {
        nodes: root.nodes.saturating_add(1),
        node: root.node + 1,
        ..root
    }
}

/// One tree's size, given the sizes of the behaviours it uses (`None`: not measured, a cycle).
fn measure(
    node: &NodeDef,
    index: &HashMap<&str, usize>,
    behavior: &dyn Fn(usize) -> Option<Size>,
) -> Size {
    let children: Vec<Size> = node
        .children
        .iter()
        .map(|c| measure(c, index, behavior))
        .collect();
    let nodes = children
        .iter()
        .fold(1u64, |sum, c| sum.saturating_add(c.nodes));
    let child = children.first().copied().unwrap_or(Size {
        nodes: 0,
        state: 0,
        node: 0,
    });
    // Two types nest: the node's own (`Sequence<(A, (B, ()))>`) and its state's
    // (`CompositeState<(Slot<..>, (Slot<..>, ()))>`).
    let (state, own) = match &node.kind {
        NodeKind::Sequence
        | NodeKind::ReactiveSequence
        | NodeKind::Selector
        | NodeKind::ReactiveSelector
        | NodeKind::Parallel { .. } => {
            // Each child's place in the grouped list.
            let places = group_children(
                vec![vec![0usize]; children.len()],
                &mut |items| {
                    items
                        .into_iter()
                        .enumerate()
                        .flat_map(|(at, places)| places.into_iter().map(move |p| p + at + 1))
                        .collect()
                },
                &mut |left, right| left.into_iter().chain(right).map(|p| p + 1).collect(),
            );
            let deepest = |f: &dyn Fn(&Size) -> usize| {
                places
                    .iter()
                    .zip(&children)
                    .map(|(place, c)| place + f(c))
                    .max()
                    .unwrap_or(0)
            };
            // The state adds a `Slot` around each child's.
            (1 + deepest(&|c| c.state + 1), 1 + deepest(&|c| c.node))
        }
        // Their state is their child's.
        NodeKind::Invert | NodeKind::ForceSuccess | NodeKind::ForceFailure => {
            (child.state, 1 + child.node)
        }
        NodeKind::RunOnce
        | NodeKind::Repeat(_)
        | NodeKind::Retry(_)
        | NodeKind::Timeout(_)
        | NodeKind::Delay(_) => (1 + child.state, 1 + child.node),
        // `ActionNode<S, A>`, `Condition<S, F>`.
        NodeKind::Action { .. } | NodeKind::Condition(_) => (1, 2),
        // `Ask<S, P, R, A>`.
        NodeKind::Ask(_) => (1, 2),
        NodeKind::Wait(_) => (1, 1),
        NodeKind::Subtree(name) => {
            // The behaviour's size counts its `Subtree` node.
            return index
                .get(name.value.as_str())
                .and_then(|&b| behavior(b))
                .unwrap_or(LEAF);
        }
    };
    Size {
        nodes,
        state,
        node: own,
    }
}

/// From behaviour `at`, the chain through the use that weighs most at each step.
fn heaviest_chain<'a>(
    at: usize,
    behaviors: &'a [BehaviorDef],
    index: &HashMap<&str, usize>,
    sizes: &[Size],
    weight: impl Fn(&Size) -> u128,
) -> Vec<&'a str> {
    let mut names = vec![behaviors[at].name.value.as_str()];
    let mut seen = vec![false; behaviors.len()];
    seen[at] = true;
    let mut at = at;
    while let Some(next) = used(&behaviors[at].root, index)
        .into_iter()
        .filter(|&u| !seen[u])
        .max_by_key(|&u| weight(&sizes[u]))
    {
        seen[next] = true;
        names.push(behaviors[next].name.value.as_str());
        at = next;
    }
    names
}

/// ` through \`A\` -> \`B\``, when the chain has more than the behaviour itself.
fn through(names: &[&str]) -> String {
    if names.len() > 1 {
        format!(" through {}", chain(names))
    } else {
        String::new()
    }
}

fn subject(name: &str) -> String {
    if name == "this tree" {
        name.to_string()
    } else {
        format!("behavior `{name}`")
    }
}

fn too_large(span: Span, name: &str, size: Size, names: &[&str]) -> Diagnostic {
    let nodes = if size.nodes == u64::MAX {
        "more nodes than fit in 64 bits".to_string()
    } else {
        format!("{} nodes", size.nodes)
    };
    let via = through(names);
    Diagnostic::error(
        codes::TREE_TOO_LARGE,
        span,
        format!(
            "{} has more than {TREE_NODES} nodes once its subtrees are inlined",
            subject(name)
        ),
    )
    .label(format!("inlines to {nodes}{via}"))
    .help("each `subtree` use is a copy of the behavior: use large behaviors fewer times, or split the work between agents")
}

fn too_deep(span: Span, name: &str, size: Size, names: &[&str]) -> Diagnostic {
    let via = through(names);
    Diagnostic::error(
        codes::TREE_TOO_DEEP,
        span,
        format!("{} is nested too deeply to compile", subject(name)),
    )
    .label(format!(
        "its generated types nest {} levels deep{via}, the most is {TREE_TYPE_DEPTH}",
        size.depth()
    ))
    .help("a `sequence`, `selector` or `parallel` level counts 3, plus 1 per earlier sibling among each 8 children, a decorator or a subtree 1: flatten nested composites, or move work into another agent")
}
