//! FSMs as declared: `transitions { ... }` in a macro, `strategy fsm { ... }` in a `.agent` file.
//!
//! States are declared by use (`initial`, `terminal`, the two ends of a row); events by the rows
//! that name them. Everything keeps its span so each check can point at the offending token.

use super::literal::DurationMs;
use super::span::{Name, Span, Spanned};

/// A declared state machine, in declaration order.
#[derive(Debug, Clone, PartialEq)]
pub struct FsmDef {
    /// Every `initial` (more than one is an error the checker reports).
    pub initial: Vec<Name>,
    /// Every `terminal` declaration.
    pub terminals: Vec<TerminalDef>,
    /// `enter S do action` / `exit S do action`.
    pub hooks: Vec<HookDef>,
    /// `A -> B on event ...` and `A -> B after 30s ...`, in declaration order (which is the
    /// order guards are tried in), from every block of the machine.
    pub rows: Vec<RowDef>,
    /// Every `state X { ... }` block (a compound state), in document order, nested blocks
    /// after the block that holds them. Empty for a flat machine.
    pub compounds: Vec<CompoundDef>,
    /// Every `history H` pseudo-state, in document order.
    pub histories: Vec<HistoryDef>,
    /// Every `final S` inside a block: the final states of compound states and regions.
    pub finals: Vec<FinalDef>,
    /// The `transitions` keyword (or the `fsm` of a `.agent` file).
    pub span: Span,
}

/// How a terminal state ends the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TerminalKind {
    /// `terminal S` or `terminal S as success`: the snapshot says `Success`.
    Success,
    /// `terminal S as failure`: the snapshot says `Failure`.
    Failure,
}

/// `terminal S [as success|failure]`.
#[derive(Debug, Clone, PartialEq)]
pub struct TerminalDef {
    /// The state.
    pub state: Name,
    /// Success or failure (success unless `as failure`).
    pub kind: TerminalKind,
    /// The compound state whose block declares it (`None`: the top level).
    pub block: Option<String>,
}

/// `state X { initial Y ... }`: a compound state. Its block declares its children (by
/// `initial`, `terminal`, nested blocks and row sources, as the top level does) and may hold
/// rows of the children and of the compound itself.
#[derive(Debug, Clone, PartialEq)]
pub struct CompoundDef {
    /// The compound state.
    pub state: Name,
    /// The compound state whose block holds this one (`None`: the top level).
    pub block: Option<String>,
    /// Every `initial` inside the block: the child entered by default.
    pub initial: Vec<Name>,
    /// `parallel X { ... }`: its children are regions (compound states), all active at once
    /// while it is; it has no `initial`.
    pub parallel: bool,
    /// The `state` (or `parallel`) keyword.
    pub span: Span,
}

/// `final S` inside a compound state's block: entering it completes the compound (its
/// `when done` rows fire); a parallel state completes when every region is in a final state.
#[derive(Debug, Clone, PartialEq)]
pub struct FinalDef {
    /// The state.
    pub state: Name,
    /// The compound state whose block declares it (`None`: the top level, an error).
    pub block: Option<String>,
}

/// `history H [-> Default]` / `history deep H [-> Default]` inside a compound state's block:
/// a pseudo-state rows may target, which re-enters the configuration the compound had when
/// it was last left.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryDef {
    /// The pseudo-state's name, which rows target.
    pub name: Name,
    /// `deep`: the last active leaf; otherwise (shallow) the last active child, entered by
    /// its default.
    pub deep: bool,
    /// Where it leads before the compound was ever left (`None`: the compound's `initial`).
    pub default: Option<Name>,
    /// The compound state whose block declares it (`None`: the top level, an error).
    pub block: Option<String>,
    /// The `history` keyword.
    pub span: Span,
}

/// Whether a hook runs on entering or on leaving its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookKind {
    /// `enter S do action`.
    Enter,
    /// `exit S do action`.
    Exit,
}

impl HookKind {
    /// The keyword as written.
    pub fn keyword(self) -> &'static str {
        match self {
            HookKind::Enter => "enter",
            HookKind::Exit => "exit",
        }
    }
}

/// `enter S do action` / `exit S do action`.
#[derive(Debug, Clone, PartialEq)]
pub struct HookDef {
    /// Enter or exit, with the keyword's span.
    pub kind: Spanned<HookKind>,
    /// The state.
    pub state: Name,
    /// The action (a path to an `#[action]`).
    pub action: Spanned<syn::Path>,
}

/// What fires a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Trigger {
    /// `on event`.
    Event(Name),
    /// `after 30s`: the time since the source state was entered.
    After(Spanned<DurationMs>),
    /// `when done`: the source (a compound or parallel state) completed: one of its final
    /// children (every region's, for a parallel state) was entered.
    Done(Span),
}

/// `from -> to (on event | after D) [if guard] [do action]`, or an internal row
/// `from on event [if guard] [do action]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RowDef {
    /// The source state.
    pub from: Name,
    /// The target state (`from` itself for an internal row).
    pub to: Name,
    /// `from on event ...`, a row without a target: an internal transition, which runs only
    /// its action, leaving and entering nothing (no exit or entry action, timers kept). A
    /// self-transition `A -> A` is external: it leaves and enters `A`.
    pub internal: bool,
    /// `A -> local B`: a local transition (SCXML's `type="internal"`): when `B` is a
    /// descendant of `A`, `A` itself is neither left nor entered again.
    pub local: bool,
    /// The compound state whose block holds the row (`None`: the top level).
    pub block: Option<String>,
    /// The event or timer.
    pub trigger: Trigger,
    /// `if guard`: a path to `fn(&State) -> bool`.
    pub guard: Option<Spanned<syn::Path>>,
    /// `do action`: a path to a synchronous `#[action]`.
    pub action: Option<Spanned<syn::Path>>,
    /// The `->` token: where diagnostics about the whole row point.
    pub span: Span,
}

impl RowDef {
    /// The event name, for `on` rows.
    pub fn event(&self) -> Option<&Name> {
        match &self.trigger {
            Trigger::Event(e) => Some(e),
            Trigger::After(_) | Trigger::Done(_) => None,
        }
    }

    /// Whether the row is a `when done` row.
    pub fn is_done(&self) -> bool {
        matches!(self.trigger, Trigger::Done(_))
    }

    /// The delay, for `after` rows.
    pub fn after(&self) -> Option<&Spanned<DurationMs>> {
        match &self.trigger {
            Trigger::After(d) => Some(d),
            Trigger::Event(_) | Trigger::Done(_) => None,
        }
    }
}

impl FsmDef {
    /// An empty machine declared at `span`.
    pub fn new(span: impl Into<Span>) -> Self {
        FsmDef {
            initial: Vec::new(),
            terminals: Vec::new(),
            hooks: Vec::new(),
            rows: Vec::new(),
            compounds: Vec::new(),
            histories: Vec::new(),
            finals: Vec::new(),
            span: span.into(),
        }
    }

    /// Appends another block's declarations (a second `transitions` block).
    pub fn extend(&mut self, other: FsmDef) {
        self.initial.extend(other.initial);
        self.terminals.extend(other.terminals);
        self.hooks.extend(other.hooks);
        self.rows.extend(other.rows);
        self.compounds.extend(other.compounds);
        self.histories.extend(other.histories);
        self.finals.extend(other.finals);
    }

    /// Whether the machine has compound states (a statechart); a flat machine has none and
    /// generates exactly the code it always did.
    pub fn is_nested(&self) -> bool {
        !self.compounds.is_empty()
            || !self.histories.is_empty()
            || !self.finals.is_empty()
            || self.rows.iter().any(RowDef::is_done)
    }

    /// Whether the machine needs the configuration of several active leaves: it has a
    /// parallel state, a final state or a `when done` row (completion is tracked per region).
    pub fn has_regions(&self) -> bool {
        self.compounds.iter().any(|c| c.parallel)
            || !self.finals.is_empty()
            || self.rows.iter().any(RowDef::is_done)
    }

    /// The initial state (the first `initial`, if any).
    pub fn initial_state(&self) -> Option<&Name> {
        self.initial.first()
    }

    /// Every state, each once, at its first mention: `initial`, then compound states (with
    /// their `initial`s), then `terminal`s, then `final`s, then rows (source before target). Hooks do not
    /// declare states, and history pseudo-states are not states.
    pub fn states(&self) -> Vec<&Name> {
        let mentions = self
            .initial
            .iter()
            .chain(
                self.compounds
                    .iter()
                    .flat_map(|c| std::iter::once(&c.state).chain(&c.initial)),
            )
            .chain(self.terminals.iter().map(|t| &t.state))
            .chain(self.finals.iter().map(|f| &f.state))
            .chain(self.rows.iter().flat_map(|r| [&r.from, &r.to]));
        // A set beside the list keeps this linear: machines of 10,000 states are benchmarked.
        let mut seen: std::collections::HashSet<&str> = self
            .histories
            .iter()
            .map(|h| h.name.value.as_str())
            .collect();
        mentions
            .filter(|name| seen.insert(name.value.as_str()))
            .collect()
    }

    /// Every event, each once, in order of first use.
    pub fn events(&self) -> Vec<&Name> {
        let mut seen = std::collections::HashSet::new();
        self.rows
            .iter()
            .filter_map(RowDef::event)
            .filter(|event| seen.insert(event.value.as_str()))
            .collect()
    }

    /// How the state ends the machine, if it is terminal.
    pub fn terminal(&self, state: &str) -> Option<TerminalKind> {
        self.terminals
            .iter()
            .find(|t| t.state.value == state)
            .map(|t| t.kind)
    }

    /// The action run on entering (or leaving) `state`, if any.
    pub fn hook(&self, kind: HookKind, state: &str) -> Option<&HookDef> {
        self.hooks
            .iter()
            .find(|h| h.kind.value == kind && h.state.value == state)
    }

    /// The rows leaving `state`, in declaration order.
    pub fn rows_from<'a>(&'a self, state: &'a str) -> impl Iterator<Item = &'a RowDef> + 'a {
        self.rows.iter().filter(move |r| r.from.value == state)
    }

    /// The rows leaving each state, in declaration order: one pass, for checks and code
    /// generation that visit every state (`rows_from` per state would be quadratic).
    pub fn rows_by_state(&self) -> std::collections::HashMap<&str, Vec<&RowDef>> {
        let mut by_state: std::collections::HashMap<&str, Vec<&RowDef>> =
            std::collections::HashMap::new();
        for row in &self.rows {
            by_state
                .entry(row.from.value.as_str())
                .or_default()
                .push(row);
        }
        by_state
    }

    /// The `after` row leaving `state` (the first, if several were declared).
    pub fn timer(&self, state: &str) -> Option<&RowDef> {
        self.rows
            .iter()
            .find(|r| r.from.value == state && r.after().is_some())
    }
}

/// The Rust variant name of an event: `checkout` -> `Checkout`, `add_item` -> `AddItem`.
///
/// Events are written like actions (snake case) and become variants of `<Agent>Event`; the
/// checker reports an event whose variant is not an identifier ([`super::ident::rust_ident`])
/// and two events with the same variant name.
pub fn event_variant(event: &str) -> String {
    super::ident::convert(event, super::ident::Case::UpperCamel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_variants_are_camel_case() {
        assert_eq!(event_variant("checkout"), "Checkout");
        assert_eq!(event_variant("add_item"), "AddItem");
        assert_eq!(event_variant("Pay"), "Pay");
        assert_eq!(event_variant("track2_go"), "Track2Go");
    }
}
