//! Tree checks: every rule of behaviour trees (E0401-E0408), once, for both front-ends.
//!
//! Node rules (thresholds, zero counts and durations, arguments) apply to every tree; name rules
//! (unknown subtrees and behaviours, cycles) apply within one namespace: a `.agent` file, or one
//! `bt! { ... }` invocation.

use std::collections::HashMap;

use crate::model::{BehaviorDef, BtDef, Name, NodeDef, NodeKind, TreeRef, TreeStrategyDef};

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;
use super::names::check_identifier;
use super::settings::check_once;
use super::suggest::{did_you_mean, list};

/// The behaviours trees may name in one namespace, indexed by name once (a file's agents share
/// it, so 100,000 agents do not each index the file's behaviours).
pub struct Behaviors<'a> {
    /// In declaration order.
    pub list: &'a [BehaviorDef],
    /// Positions in `list` by name (the first of a duplicated name).
    index: HashMap<&'a str, usize>,
}

impl<'a> Behaviors<'a> {
    /// Indexes `list`.
    pub fn new(list: &'a [BehaviorDef]) -> Self {
        Behaviors {
            list,
            index: behavior_index(list),
        }
    }

    /// The behaviour called `name` (the first, if the name is duplicated).
    pub fn get(&self, name: &str) -> Option<&'a BehaviorDef> {
        self.index.get(name).map(|&i| &self.list[i])
    }

    /// Positions by name.
    pub(crate) fn index(&self) -> &HashMap<&'a str, usize> {
        &self.index
    }
}

/// Checks a `bt! { ... }` invocation: its behaviours, then its root tree.
pub fn check_bt(cx: &Ctxt, bt: &BtDef) {
    check_once(cx, &bt.runtime, "crate");
    check_behaviors(cx, &bt.behaviors);
    if let Some(root) = &bt.root {
        let behaviors = Behaviors::new(&bt.behaviors);
        check_tree(cx, root, &behaviors);
        super::expansion::check_root(cx, root, &behaviors);
    }
}

/// Checks the behaviours of one namespace: names, duplicates, each tree, and subtree cycles.
pub fn check_behaviors(cx: &Ctxt, behaviors: &[BehaviorDef]) {
    let index = behavior_index(behaviors);
    for (i, behavior) in behaviors.iter().enumerate() {
        check_identifier(cx, &behavior.name, "behavior name");
        let first = index[behavior.name.value.as_str()];
        if first != i {
            cx.push(
                Diagnostic::error(
                    codes::DUPLICATE_ITEM,
                    behavior.name.span,
                    format!("behavior `{}` is defined twice", behavior.name.value),
                )
                .label("defined again here")
                .secondary(behaviors[first].name.span, "first defined")
                .help("rename or remove one of the two behaviors"),
            );
        }
        check_tree_in(cx, &behavior.root, behaviors, &index);
    }
    // Sizes are only defined without cycles; a cycle is its own error.
    if !cycles(cx, behaviors) {
        super::expansion::check_behaviors(cx, behaviors);
    }
}

/// Checks the tree an agent runs. `behaviors` are those its subtrees and `strategy behavior`
/// may name (a file's; none for a macro, whose named trees are Rust types).
pub fn check_strategy(cx: &Ctxt, tree: &TreeStrategyDef, behaviors: &Behaviors<'_>) {
    match &tree.tree {
        None => cx.push(
            Diagnostic::error(
                codes::TREE_MISSING,
                tree.span,
                "`strategy = BehaviorTree` needs a tree",
            )
            .label("no `tree = ...` for this strategy")
            .help("add `tree = Patrol` (a behavior from `bt! { for Agent behavior Patrol { ... } }`) or `tree = { sequence { ... } }`"),
        ),
        Some(TreeRef::Inline(root)) => {
            check_tree(cx, root, behaviors);
            super::expansion::check_root(cx, root, behaviors);
        }
        Some(TreeRef::Behavior(name)) => {
            if behaviors.get(&name.value).is_none() {
                cx.push(
                    Diagnostic::error(
                        codes::TREE_UNKNOWN_BEHAVIOR,
                        name.span,
                        format!("unknown behavior `{}`", name.value),
                    )
                    .label("no behavior of this name in this file")
                    .help(name_help(cx, name, behaviors.list)),
                );
            }
        }
        // Resolved by Rust: a type implementing `Behavior<Agent>`.
        Some(TreeRef::Rust(_)) => {}
    }
}

/// Node rules for every node of `root`, and its subtrees against `behaviors`.
pub fn check_tree(cx: &Ctxt, root: &NodeDef, behaviors: &Behaviors<'_>) {
    check_tree_in(cx, root, behaviors.list, behaviors.index());
}

fn check_tree_in(
    cx: &Ctxt,
    root: &NodeDef,
    behaviors: &[BehaviorDef],
    index: &HashMap<&str, usize>,
) {
    let mut asks: HashMap<&str, &crate::model::AskDef> = HashMap::new();
    root.walk(&mut |node| {
        check_node(cx, node, behaviors, index);
        if let NodeKind::Ask(ask) = &node.kind {
            check_ask_types(cx, ask, &mut asks);
        }
    });
}

/// One interrupt, one payload type and one answer type: `resume` checks an answer before the
/// tree sees it, by the interrupt's name (E0412).
fn check_ask_types<'a>(
    cx: &Ctxt,
    ask: &'a crate::model::AskDef,
    asks: &mut HashMap<&'a str, &'a crate::model::AskDef>,
) {
    let first = *asks.entry(ask.name.value.as_str()).or_insert(ask);
    let text = crate::emit::type_text;
    let same = |a: &crate::model::AskDef| (text(&a.payload.value), text(&a.resume.value));
    if std::ptr::eq(first, ask) || same(first) == same(ask) {
        return;
    }
    let (payload, resume) = same(first);
    cx.push(
        Diagnostic::error(
            codes::TREE_ASK_TYPES,
            ask.name.span,
            format!(
                "interrupt `{}` is asked with other types than before",
                ask.name.value
            ),
        )
        .label(format!(
            "asks `{}({}) -> {}`",
            ask.name.value,
            text(&ask.payload.value),
            text(&ask.resume.value)
        ))
        .secondary(first.name.span, format!("first asked as `{}({payload}) -> {resume}`", ask.name.value))
        .help("an answer is checked by its interrupt's name: give the two leaves the same types, or different names"),
    );
}

fn check_node(cx: &Ctxt, node: &NodeDef, behaviors: &[BehaviorDef], index: &HashMap<&str, usize>) {
    match &node.kind {
        NodeKind::Parallel { success, failure } => {
            let children = node.children.len();
            threshold(cx, "success", success.value, success.span, children, node);
            if let Some(failure) = failure {
                threshold(cx, "failure", failure.value, failure.span, children, node);
            }
        }
        NodeKind::Repeat(n) | NodeKind::Retry(n) if n.value == 0 => {
            let keyword = node.kind.keyword();
            let (what, help) = if keyword == "repeat" {
                (
                    "successful runs",
                    "`repeat(1)` runs the child once; remove the decorator to run it as is",
                )
            } else {
                (
                    "attempts",
                    "`retry(1)` makes one attempt; remove the decorator to run the child as is",
                )
            };
            cx.push(
                Diagnostic::error(
                    codes::TREE_ZERO_COUNT,
                    n.span,
                    format!("`{keyword}(0)` asks for zero {what}"),
                )
                .label("must be at least 1")
                .help(help),
            );
        }
        NodeKind::Timeout(d) if d.value.0 == 0 => cx.push(
            Diagnostic::error(
                codes::TREE_ZERO_TIMEOUT,
                d.span,
                "`timeout(0ms)` fails before its child ever runs",
            )
            .label("must be longer than 0ms")
            .help("give the child time to run, such as `timeout(2s)`, or remove the decorator"),
        ),
        NodeKind::Action { args, .. } => {
            let mut seen: HashMap<&str, &crate::model::ArgDef> = HashMap::new();
            for arg in args {
                if let Some(first) = seen.get(arg.name.value.as_str()).copied() {
                    cx.push(
                        Diagnostic::error(
                            codes::TREE_DUPLICATE_ARG,
                            arg.name.span,
                            format!("argument `{}` is given twice", arg.name.value),
                        )
                        .label("given again here")
                        .secondary(first.name.span, "first given")
                        .help("keep one value per parameter"),
                    );
                }
                seen.entry(arg.name.value.as_str()).or_insert(arg);
            }
        }
        NodeKind::Subtree(name) if !index.contains_key(name.value.as_str()) => {
            cx.push(
                Diagnostic::error(
                    codes::TREE_UNKNOWN_SUBTREE,
                    name.span,
                    format!("unknown subtree `{}`", name.value),
                )
                .label("no behavior of this name")
                .help(name_help(cx, name, behaviors)),
            );
        }
        _ => {}
    }
}

fn threshold(
    cx: &Ctxt,
    which: &str,
    n: u32,
    span: crate::model::Span,
    children: usize,
    node: &NodeDef,
) {
    let too_high = usize::try_from(n).map_or(true, |n| n > children);
    if n != 0 && !too_high {
        return;
    }
    let (message, label) = if n == 0 {
        (
            format!("`parallel` {which} threshold is 0"),
            "must be at least 1".to_string(),
        )
    } else {
        (
            format!("`parallel` {which} threshold {n} is above its {children} children"),
            format!("at most {children}"),
        )
    };
    let help = if which == "success" {
        format!(
            "`success = N` is how many of the {children} children must succeed, from 1 to {children}"
        )
    } else {
        format!(
            "`failure = M` is how many of the {children} children may fail before the parallel fails, from 1 to {children}"
        )
    };
    cx.push(
        Diagnostic::error(codes::TREE_PARALLEL_THRESHOLD, span, message)
            .label(label)
            .secondary(node.span, "this `parallel`")
            .help(help),
    );
}

fn name_help(cx: &Ctxt, name: &Name, behaviors: &[BehaviorDef]) -> String {
    let names: Vec<&str> = behaviors.iter().map(|b| b.name.value.as_str()).collect();
    cx.suggest(|| did_you_mean(&name.value, names.iter().copied()))
        .unwrap_or_else(|| {
            if names.is_empty() {
                format!(
                    "define it next to this tree: `behavior {} {{ ... }}`",
                    name.value
                )
            } else {
                format!("the behaviors here are {}", list(&names))
            }
        })
}

/// A behaviour that reaches itself through subtrees would inline forever: each cycle is
/// reported once, at the `subtree` that closes it. The search keeps its own stack: a chain of
/// behaviours can be as long as the file. Whether there was one.
fn cycles(cx: &Ctxt, behaviors: &[BehaviorDef]) -> bool {
    let mut found = false;
    let index = behavior_index(behaviors);
    let uses: Vec<Vec<&Name>> = behaviors.iter().map(|b| b.root.subtrees()).collect();
    // 0 = unvisited, 1 = on the current path, 2 = done.
    let mut mark = vec![0u8; behaviors.len()];
    // The path: each behaviour with how many of its uses were followed.
    let mut path: Vec<(usize, usize)> = Vec::new();
    // Where each behaviour on the path is in it.
    let mut depth = vec![0usize; behaviors.len()];
    for start in 0..behaviors.len() {
        if mark[start] != 0 {
            continue;
        }
        mark[start] = 1;
        path.push((start, 0));
        depth[start] = 0;
        while let Some(&mut (at, ref mut next_use)) = path.last_mut() {
            let Some(sub) = uses[at].get(*next_use).copied() else {
                mark[at] = 2;
                path.pop();
                continue;
            };
            *next_use += 1;
            let Some(&next) = index.get(sub.value.as_str()) else {
                continue;
            };
            match mark[next] {
                0 => {
                    mark[next] = 1;
                    depth[next] = path.len();
                    path.push((next, 0));
                }
                1 => {
                    let names: Vec<&str> = path[depth[next]..]
                        .iter()
                        .map(|&(i, _)| i)
                        .chain(std::iter::once(next))
                        .map(|i| behaviors[i].name.value.as_str())
                        .collect();
                    let chain = chain(&names);
                    found = true;
                    cx.push(
                        Diagnostic::error(
                            codes::TREE_SUBTREE_CYCLE,
                            sub.span,
                            format!("subtree `{}` makes a cycle: {chain}", sub.value),
                        )
                        .label("closes the cycle")
                        .secondary(behaviors[next].name.span, format!("`{}` defined", sub.value))
                        .help("a subtree is inlined into its parent, so a behavior cannot contain itself; repeat work with `repeat(N)` or let the agent tick again"),
                    );
                }
                _ => {}
            }
        }
    }
    found
}

/// `\`A\` -> \`B\` -> \`A\``, with the middle of a long chain elided so a message stays short.
pub(crate) fn chain(names: &[&str]) -> String {
    const SHOWN: usize = 4;
    let len = names.len();
    let mut out = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if len <= 2 * SHOWN || i < SHOWN || i >= len - SHOWN {
            out.push(format!("`{name}`"));
        } else if i == SHOWN {
            out.push(format!("... {} more ...", len - 2 * SHOWN));
        }
    }
    out.join(" -> ")
}

/// Behaviours by name (the first of a duplicated name, which the duplicate check reports).
pub(crate) fn behavior_index(behaviors: &[BehaviorDef]) -> HashMap<&str, usize> {
    behaviors
        .iter()
        .enumerate()
        .rev()
        .map(|(i, b)| (b.name.value.as_str(), i))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Span, Spanned};

    fn codes(tokens: proc_macro2::TokenStream) -> Vec<&'static str> {
        let def = crate::tokens::bt(tokens).unwrap();
        match crate::check::bt(&def) {
            Ok(_) => Vec::new(),
            Err(all) => all.iter().map(|d| d.code.id).collect(),
        }
    }

    #[test]
    fn every_mistake_is_reported_at_once() {
        let found = codes(quote::quote! {
            sequence {
                parallel(success = 0, failure = 3) { wait(1s) wait(2s) }
                repeat(0) { retry(0) { timeout(0ms) { action go(a = 1, a = 2) } } }
                subtree Nowhere
            }
        });
        assert_eq!(
            found,
            [
                "E0403", "E0403", "E0404", "E0404", "E0405", "E0407", "E0401"
            ]
        );
    }

    #[test]
    fn a_valid_tree_passes_and_thresholds_may_equal_the_child_count() {
        assert!(
            codes(quote::quote! {
                parallel(success = 2, failure = 2) { wait(1s) subtree Idle }
                behavior Idle { delay(0ms) { wait(0ms) } }
            })
            .is_empty()
        );
    }

    #[test]
    fn a_self_referencing_behavior_is_a_cycle_reported_once() {
        let found = codes(quote::quote! {
            subtree Loop
            behavior Loop { sequence { wait(1s) subtree Loop } }
        });
        assert_eq!(found, ["E0402"]);
    }

    #[test]
    fn a_file_agent_naming_an_unknown_behavior_is_an_error_with_a_suggestion() {
        let behaviors = crate::tokens::bt(quote::quote!(behavior Patrol { wait(1s) }))
            .unwrap()
            .behaviors;
        let strategy = TreeStrategyDef {
            tree: Some(TreeRef::Behavior(Spanned::new(
                "Patrl".into(),
                Span::Synthetic,
            ))),
            span: Span::Synthetic,
        };
        let cx = Ctxt::new();
        check_strategy(&cx, &strategy, &Behaviors::new(&behaviors));
        let all = cx.finish().unwrap_err();
        assert_eq!(all[0].code, codes::TREE_UNKNOWN_BEHAVIOR);
        assert_eq!(all[0].message, "unknown behavior `Patrl`");
        assert_eq!(all[0].help.as_deref(), Some("did you mean `Patrol`?"));

        let known = TreeStrategyDef {
            tree: Some(TreeRef::Behavior(Spanned::new(
                "Patrol".into(),
                Span::Synthetic,
            ))),
            span: Span::Synthetic,
        };
        let cx = Ctxt::new();
        check_strategy(&cx, &known, &Behaviors::new(&behaviors));
        assert!(cx.finish().is_ok());
    }
}
