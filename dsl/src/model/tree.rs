//! Behaviour trees as declared: `behavior Name { ... }` items and `strategy behavior` in `.agent`
//! files, `bt! { ... }` and `#[agent(strategy = BehaviorTree, tree = ...)]` in Rust.
//!
//! A node is its kind (with the kind's parameters) plus its children: composites have one or
//! more, decorators exactly one, leaves none (the front-ends' grammars guarantee the counts).
//! Every node keeps the span of its keyword so each check points at the offending node.

use super::literal::{DurationMs, Literal};
use super::span::{Name, Span, Spanned};

/// A named tree: `behavior Patrol { ... }`.
#[derive(Debug, Clone, PartialEq)]
pub struct BehaviorDef {
    /// The behaviour's name.
    pub name: Name,
    /// Its tree.
    pub root: NodeDef,
    /// `pub`, `pub(crate)`... before `behavior` in `bt!` (files have no visibility).
    pub vis: Option<syn::Visibility>,
}

/// One node of a tree.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeDef {
    /// What the node is.
    pub kind: NodeKind,
    /// Its children, in order.
    pub children: Vec<NodeDef>,
    /// The node's keyword.
    pub span: Span,
}

/// The kinds of node the language has (the guide's `trees` chapter), with their parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// `sequence { ... }`
    Sequence,
    /// `reactive_sequence { ... }`
    ReactiveSequence,
    /// `selector { ... }`
    Selector,
    /// `reactive_selector { ... }`
    ReactiveSelector,
    /// `parallel(success = N, failure = M) { ... }`
    Parallel {
        /// Successes needed.
        success: Spanned<u32>,
        /// Failures that fail it (`None`: the default, 1).
        failure: Option<Spanned<u32>>,
    },
    /// `invert { ... }`
    Invert,
    /// `force_success { ... }`
    ForceSuccess,
    /// `force_failure { ... }`
    ForceFailure,
    /// `run_once { ... }`
    RunOnce,
    /// `repeat(N) { ... }`
    Repeat(Spanned<u32>),
    /// `retry(N) { ... }`
    Retry(Spanned<u32>),
    /// `timeout(D) { ... }`
    Timeout(Spanned<DurationMs>),
    /// `delay(D) { ... }`
    Delay(Spanned<DurationMs>),
    /// `action path(k = v, ...)`
    Action {
        /// The action (a path to an `#[action]` marker).
        path: Spanned<syn::Path>,
        /// Its arguments, in the order written.
        args: Vec<ArgDef>,
    },
    /// `condition path`: a `fn(&State) -> bool`.
    Condition(Spanned<syn::Path>),
    /// `wait(D)`
    Wait(Spanned<DurationMs>),
    /// `subtree Name`: another behaviour, inlined.
    Subtree(Name),
    /// `ask name(Payload) -> Answer do action`: raises interrupt `name` (its payload built
    /// `From<&State>`), waits for the person's answer (an `Answer`), then runs the sync
    /// `action` with the answer as its parameters; the action's status is the leaf's.
    Ask(Box<AskDef>),
}

/// The parts of an `ask` leaf.
#[derive(Debug, Clone, PartialEq)]
pub struct AskDef {
    /// The interrupt's name (its ids are `<agent id>/<name>/<n>`).
    pub name: Name,
    /// The payload type shown to the person.
    pub payload: Spanned<syn::Type>,
    /// The type the answer must have.
    pub resume: Spanned<syn::Type>,
    /// The action run with the answer.
    pub action: Spanned<syn::Path>,
}

/// `k = v` in `action name(k = v)`.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgDef {
    /// The parameter's name.
    pub name: Name,
    /// Its value.
    pub value: Spanned<Literal>,
}

/// Which tree an agent runs.
#[derive(Debug, Clone, PartialEq)]
pub enum TreeRef {
    /// A tree written in place: `strategy behavior { ... }`, `tree = { ... }`.
    Inline(NodeDef),
    /// A behaviour of the same file: `strategy behavior Patrol`.
    Behavior(Name),
    /// A Rust type implementing `Behavior<Agent>` (`bt! { for Agent behavior Patrol { .. } }`):
    /// `tree = Patrol` in a macro. Rust resolves it.
    Rust(Spanned<syn::Path>),
}

/// `strategy = BehaviorTree, tree = ...` / `strategy behavior ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeStrategyDef {
    /// The tree; `None` when `tree = ...` is missing (the macro front-end reports it).
    pub tree: Option<TreeRef>,
    /// The strategy keyword.
    pub span: Span,
}

/// What `bt! { ... }` holds: a root tree (an expression), or behaviours for a blackboard type
/// (items), plus the behaviours its subtrees may name.
#[derive(Debug, Clone, PartialEq)]
pub struct BtDef {
    /// The blackboard type of `for Type` (item form).
    pub blackboard: Option<Spanned<syn::Type>>,
    /// The root tree (expression form).
    pub root: Option<NodeDef>,
    /// The behaviours, in order.
    pub behaviors: Vec<BehaviorDef>,
    /// `crate = path` (where generated code finds the runtime).
    pub runtime: super::setting::Setting<syn::Path>,
}

impl NodeKind {
    /// Every node keyword, in the grammar's order: both front-ends list them in errors.
    pub const KEYWORDS: &'static [&'static str] = &[
        "sequence",
        "reactive_sequence",
        "selector",
        "reactive_selector",
        "parallel",
        "invert",
        "force_success",
        "force_failure",
        "run_once",
        "repeat",
        "retry",
        "timeout",
        "delay",
        "action",
        "condition",
        "wait",
        "subtree",
        "ask",
    ];

    /// The keyword as written (`reactive_sequence`, `timeout`).
    pub fn keyword(&self) -> &'static str {
        match self {
            NodeKind::Sequence => "sequence",
            NodeKind::ReactiveSequence => "reactive_sequence",
            NodeKind::Selector => "selector",
            NodeKind::ReactiveSelector => "reactive_selector",
            NodeKind::Parallel { .. } => "parallel",
            NodeKind::Invert => "invert",
            NodeKind::ForceSuccess => "force_success",
            NodeKind::ForceFailure => "force_failure",
            NodeKind::RunOnce => "run_once",
            NodeKind::Repeat(_) => "repeat",
            NodeKind::Retry(_) => "retry",
            NodeKind::Timeout(_) => "timeout",
            NodeKind::Delay(_) => "delay",
            NodeKind::Action { .. } => "action",
            NodeKind::Condition(_) => "condition",
            NodeKind::Wait(_) => "wait",
            NodeKind::Subtree(_) => "subtree",
            NodeKind::Ask(_) => "ask",
        }
    }

    /// How many children the kind takes: `None` for one or more (composites).
    pub fn arity(&self) -> Option<usize> {
        match self {
            NodeKind::Sequence
            | NodeKind::ReactiveSequence
            | NodeKind::Selector
            | NodeKind::ReactiveSelector
            | NodeKind::Parallel { .. } => None,
            NodeKind::Invert
            | NodeKind::ForceSuccess
            | NodeKind::ForceFailure
            | NodeKind::RunOnce
            | NodeKind::Repeat(_)
            | NodeKind::Retry(_)
            | NodeKind::Timeout(_)
            | NodeKind::Delay(_) => Some(1),
            NodeKind::Action { .. }
            | NodeKind::Condition(_)
            | NodeKind::Wait(_)
            | NodeKind::Subtree(_)
            | NodeKind::Ask(_) => Some(0),
        }
    }
}

impl NodeDef {
    /// A node without children.
    pub fn leaf(kind: NodeKind, span: impl Into<Span>) -> Self {
        NodeDef {
            kind,
            children: Vec::new(),
            span: span.into(),
        }
    }

    /// Calls `f` on this node and every descendant, depth first, in order.
    pub fn walk<'a>(&'a self, f: &mut impl FnMut(&'a NodeDef)) {
        f(self);
        for child in &self.children {
            child.walk(f);
        }
    }

    /// The names this tree's `subtree` leaves refer to, in order (with repeats).
    pub fn subtrees(&self) -> Vec<&Name> {
        let mut out = Vec::new();
        self.walk(&mut |node| {
            if let NodeKind::Subtree(name) = &node.kind {
                out.push(name);
            }
        });
        out
    }

    /// How many nodes the tree has.
    pub fn len(&self) -> usize {
        1 + self.children.iter().map(NodeDef::len).sum::<usize>()
    }

    /// Never true: a tree has at least its root.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// Groups a composite's children the way generated code holds them: lists of at most
/// [`CHILDREN_CHUNK`](crate::limits::CHILDREN_CHUNK) joined as a balanced binary tree, so the
/// code nests by the logarithm of the width. `list` builds one list, `join` two halves. The
/// generator and the checks that measure generated code both go through this one function.
pub fn group_children<T>(
    mut items: Vec<T>,
    list: &mut impl FnMut(Vec<T>) -> T,
    join: &mut impl FnMut(T, T) -> T,
) -> T {
    if items.len() <= crate::limits::CHILDREN_CHUNK {
        return list(items);
    }
    // Halves on a multiple of the chunk, so every list but the last is full.
    let chunks = items.len().div_ceil(crate::limits::CHILDREN_CHUNK);
    let right = items.split_off(chunks / 2 * crate::limits::CHILDREN_CHUNK);
    let left = group_children(items, list, join);
    let right = group_children(right, list, join);
    join(left, right)
}

/// Behaviours by name, for lookups in constant time; the first of a duplicated name (which the
/// checks reject).
pub fn behaviors_by_name(
    behaviors: &[BehaviorDef],
) -> std::collections::HashMap<&str, &BehaviorDef> {
    let mut map = std::collections::HashMap::with_capacity(behaviors.len());
    for b in behaviors {
        map.entry(b.name.value.as_str()).or_insert(b);
    }
    map
}

/// The behaviour called `name`, if any.
pub fn find_behavior<'a>(behaviors: &'a [BehaviorDef], name: &str) -> Option<&'a BehaviorDef> {
    behaviors.iter().find(|b| b.name.value == name)
}
