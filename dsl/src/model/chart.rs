//! The hierarchy of a statechart, resolved from an [`FsmDef`]: which block declares each state,
//! each compound state's default child, and the SCXML rules built on them (ancestors, default
//! entry, transition domains). The checker reports what does not resolve; the generator and
//! the diagrams read the rest.
//!
//! A state belongs to the block that declares it: `state X { ... }` declares `X` in the block
//! around it, and inside a block `initial`, `terminal` and row sources declare children (as the
//! top level does for a flat machine). A row target names any state of the machine; one that no
//! block declares becomes a state of the row's block. Names are unique in a machine, as SCXML
//! ids are in a document: a name declared in two blocks is reported, the first declaration wins.

use std::collections::HashMap;

use super::fsm::{FsmDef, HistoryDef, RowDef};
use super::span::Name;

/// A state's index in [`Chart::states`] (the order of [`FsmDef::states`]).
pub type StateId = usize;

/// Where a state is declared: the block (the compound state's name, `None` at the top level)
/// and the mention that declares it.
#[derive(Debug, Clone, Copy)]
pub struct Declaration<'a> {
    /// The block.
    pub block: Option<&'a str>,
    /// The declaring mention.
    pub at: &'a Name,
}

/// The resolved hierarchy of a machine. For a flat machine every state is at the top level.
#[derive(Debug)]
pub struct Chart<'a> {
    /// Every state, in the order of [`FsmDef::states`].
    pub states: Vec<&'a Name>,
    index: HashMap<&'a str, StateId>,
    /// The compound state each state is declared in (`None`: the top level).
    pub parent: Vec<Option<StateId>>,
    /// The declaring mention of each state.
    pub declared: Vec<Declaration<'a>>,
    /// Whether each state has a block (`state X { ... }` or `parallel X { ... }`).
    pub compound: Vec<bool>,
    /// Whether each state is a parallel state (`parallel X { ... }`): its children are
    /// regions, all active with it.
    pub parallel: Vec<bool>,
    /// Whether each state is declared `final` (in its block).
    pub finals: Vec<bool>,
    /// Each compound state's default child (its block's first `initial`).
    pub initial: Vec<Option<StateId>>,
    /// Each state's children, in declaration order.
    pub children: Vec<Vec<StateId>>,
    /// The history pseudo-states by name.
    pub histories: HashMap<&'a str, &'a HistoryDef>,
    /// Names declared in two blocks: (the later declaration, the first).
    pub conflicts: Vec<(Declaration<'a>, Declaration<'a>)>,
}

impl<'a> Chart<'a> {
    /// Resolves `fsm`'s hierarchy. Linear in the size of the machine.
    pub fn new(fsm: &'a FsmDef) -> Self {
        let states = fsm.states();
        let index: HashMap<&str, StateId> = states
            .iter()
            .enumerate()
            .map(|(i, s)| (s.value.as_str(), i))
            .collect();
        let histories: HashMap<&str, &HistoryDef> = fsm
            .histories
            .iter()
            .map(|h| (h.name.value.as_str(), h))
            .collect();
        let mut chart = Chart {
            parent: vec![None; states.len()],
            declared: states
                .iter()
                .map(|at| Declaration { block: None, at })
                .collect(),
            compound: vec![false; states.len()],
            parallel: vec![false; states.len()],
            finals: vec![false; states.len()],
            initial: vec![None; states.len()],
            children: vec![Vec::new(); states.len()],
            states,
            index,
            histories,
            conflicts: Vec::new(),
        };
        let mut decided = vec![false; chart.states.len()];
        let declare =
            |chart: &mut Chart<'a>, decided: &mut [bool], at: &'a Name, block: Option<&'a str>| {
                let Some(&id) = chart.index.get(at.value.as_str()) else {
                    return;
                };
                // A row of a compound state written inside its own block names the compound.
                if block == Some(at.value.as_str()) {
                    return;
                }
                if decided[id] {
                    if chart.declared[id].block != block {
                        chart
                            .conflicts
                            .push((Declaration { block, at }, chart.declared[id]));
                    }
                    return;
                }
                decided[id] = true;
                chart.declared[id] = Declaration { block, at };
            };
        // Compound states first: a block's place in the text is the strongest declaration.
        for c in &fsm.compounds {
            declare(&mut chart, &mut decided, &c.state, c.block.as_deref());
        }
        for c in &fsm.compounds {
            if let Some(&id) = chart.index.get(c.state.value.as_str()) {
                chart.compound[id] = true;
                chart.parallel[id] |= c.parallel;
            }
        }
        for initial in &fsm.initial {
            declare(&mut chart, &mut decided, initial, None);
        }
        for c in &fsm.compounds {
            for initial in &c.initial {
                declare(
                    &mut chart,
                    &mut decided,
                    initial,
                    Some(c.state.value.as_str()),
                );
            }
        }
        for t in &fsm.terminals {
            declare(&mut chart, &mut decided, &t.state, t.block.as_deref());
        }
        for f in &fsm.finals {
            declare(&mut chart, &mut decided, &f.state, f.block.as_deref());
            if let Some(&id) = chart.index.get(f.state.value.as_str()) {
                chart.finals[id] = true;
            }
        }
        for row in &fsm.rows {
            declare(&mut chart, &mut decided, &row.from, row.block.as_deref());
        }
        for row in &fsm.rows {
            let target = chart.index.get(row.to.value.as_str()).copied();
            if target.is_some_and(|id| !decided[id]) {
                declare(&mut chart, &mut decided, &row.to, row.block.as_deref());
            }
        }
        for id in 0..chart.states.len() {
            let parent = chart.declared[id]
                .block
                .and_then(|b| chart.index.get(b).copied());
            chart.parent[id] = parent;
            if let Some(p) = parent {
                chart.children[p].push(id);
            }
        }
        for c in &fsm.compounds {
            let (Some(&id), Some(first)) =
                (chart.index.get(c.state.value.as_str()), c.initial.first())
            else {
                continue;
            };
            if chart.initial[id].is_none() {
                chart.initial[id] = chart.id(&first.value);
            }
        }
        chart
    }

    /// The state named `name`.
    pub fn id(&self, name: &str) -> Option<StateId> {
        self.index.get(name).copied()
    }

    /// `state`'s proper ancestors, innermost first. The parent links come from lexically
    /// nested blocks (a block's first declaration wins), so they never form a cycle.
    pub fn ancestors(&self, state: StateId) -> impl Iterator<Item = StateId> + '_ {
        std::iter::successors(self.parent[state], |&s| self.parent[s])
    }

    /// Whether `state` is `of` or inside it.
    pub fn within(&self, state: StateId, of: StateId) -> bool {
        state == of || self.ancestors(state).any(|a| a == of)
    }

    /// The leaf entered when `state` is entered by default: following `initial` down.
    pub fn default_leaf(&self, state: StateId) -> StateId {
        let mut at = state;
        // Bounded: every step goes one level down, and levels do not repeat.
        for _ in 0..self.states.len() {
            match self.initial[at] {
                Some(child) if child != at && self.parent[child] == Some(at) => at = child,
                _ => break,
            }
        }
        at
    }

    /// The leaves entered when `state` is entered by default: its default leaf, and for a
    /// parallel state every region's, in document order. An explicit stack, no recursion.
    pub fn default_leaves(&self, state: StateId) -> Vec<StateId> {
        let mut out = Vec::new();
        let mut stack = vec![state];
        while let Some(at) = stack.pop() {
            let leaf = self.default_leaf(at);
            if self.parallel[leaf] {
                stack.extend(self.children[leaf].iter().rev());
            } else {
                out.push(leaf);
            }
        }
        out
    }

    /// Every state's place in document order (a pre-order walk of the hierarchy: a compound
    /// state before its children, regions in the order written): SCXML enters states in this
    /// order and leaves them in the reverse.
    pub fn document_order(&self) -> Vec<usize> {
        let mut order = vec![0; self.states.len()];
        let mut stack: Vec<StateId> = (0..self.states.len())
            .rev()
            .filter(|&s| self.parent[s].is_none())
            .collect();
        let mut next = 0;
        while let Some(at) = stack.pop() {
            order[at] = next;
            next += 1;
            stack.extend(self.children[at].iter().rev());
        }
        order
    }

    /// The parallel state whose regions hold `a` and `b` in two different regions, if any
    /// (a row between them would cross regions).
    pub fn across_regions(&self, a: StateId, b: StateId) -> Option<StateId> {
        let lca = self.ancestors(a).find(|&p| self.within(b, p))?;
        let region_of = |s: StateId| {
            std::iter::once(s)
                .chain(self.ancestors(s))
                .find(|&x| self.parent[x] == Some(lca))
        };
        (self.parallel[lca] && a != lca && b != lca && region_of(a) != region_of(b)).then_some(lca)
    }

    /// The state a row targets, or a history's compound state for a row that targets a
    /// history pseudo-state.
    pub fn target(&self, row: &RowDef) -> Option<StateId> {
        match self.histories.get(row.to.value.as_str()) {
            Some(h) => h.block.as_deref().and_then(|b| self.id(b)),
            None => self.id(&row.to.value),
        }
    }

    /// Where a history pseudo-state leads before its compound state was ever left: its
    /// default, or the compound's `initial`, entered by default.
    pub fn history_default(&self, history: &HistoryDef) -> Option<StateId> {
        let compound = history.block.as_deref().and_then(|b| self.id(b))?;
        let to = match &history.default {
            Some(d) => self.id(&d.value)?,
            // A parallel state has no `initial`: entered by default, every region is.
            None if self.parallel[compound] => compound,
            None => self.initial[compound]?,
        };
        Some(self.default_leaf(to))
    }

    /// The leaf a row's target enters by default (a history's default before it has a
    /// record).
    pub fn target_leaf(&self, row: &RowDef) -> Option<StateId> {
        match self.histories.get(row.to.value.as_str()) {
            Some(h) => self.history_default(h),
            None => self.id(&row.to.value).map(|t| self.default_leaf(t)),
        }
    }

    /// The transition's domain, as SCXML defines it: the state whose descendants the row
    /// leaves and enters (`None`: the whole machine). A `local` row into its own source keeps
    /// the source; otherwise it is the innermost compound state that strictly contains both
    /// the source and the target, so a row from a state to itself or to its parent leaves
    /// and re-enters it.
    pub fn domain(&self, row: &RowDef) -> Option<StateId> {
        let source = self.id(&row.from.value)?;
        let target = self.target(row)?;
        let history = self.histories.contains_key(row.to.value.as_str());
        // A history target lies inside its compound state: the domain must contain the
        // compound's children, not only the compound.
        let inside_target = |anc: StateId| {
            if history {
                self.within(target, anc)
            } else {
                target != anc && self.within(target, anc)
            }
        };
        if row.local && target != source && inside_target(source) {
            return Some(source);
        }
        self.ancestors(source).find(|&a| inside_target(a))
    }

    /// The depth of `state`: 0 at the top level.
    pub fn depth(&self, state: StateId) -> usize {
        self.ancestors(state).count()
    }
}
