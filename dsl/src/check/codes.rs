//! Every diagnostic code, in one place. Codes are stable: a code is never reused for another
//! meaning. `E00xx` syntax, `E01xx` agents, `E02xx` routes, `E03xx` FSMs, `E04xx` trees,
//! `E05xx` AI strategies, `E06xx` actions, `E07xx` plugins.

use std::fmt;

/// A stable diagnostic code with a one-line title.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Code {
    /// `E0101`.
    pub id: &'static str,
    /// What the code means, in one line.
    pub title: &'static str,
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id)
    }
}

macro_rules! codes {
    ($($(#[$doc:meta])* $name:ident = $id:literal, $title:literal;)*) => {
        $( $(#[$doc])* pub const $name: Code = Code { id: $id, title: $title }; )*
        /// Every code, in order.
        pub const ALL: &[Code] = &[$($name),*];
    };
}

codes! {
    /// Input that does not parse.
    SYNTAX = "E0001", "syntax error";
    /// A string or block comment that never ends.
    UNTERMINATED = "E0002", "unterminated string or comment";
    /// A duration or number that cannot be read.
    BAD_LITERAL = "E0003", "malformed duration or number";
    // E0004 is retired: "not supported yet", while `.agent` files could not yet hold FSMs,
    // trees or AI strategies. Never reuse it.
    /// Delimiters nested deeper than [`crate::limits::NESTING`].
    NESTING = "E0005", "nesting too deep";
    /// More diagnostics than [`crate::limits::DIAGNOSTICS`]: the rest are counted, not shown.
    TOO_MANY = "E0006", "too many diagnostics";
    /// A `{`, `(` or `[` never closed before the end of the file.
    UNCLOSED = "E0007", "unclosed delimiter";

    /// An option given twice (`strategy`, `description`, `tick`, `crate`, an AI option...).
    DUPLICATE_SETTING = "E0101", "option given twice";
    /// The same action listed twice in `actions`.
    DUPLICATE_ACTION = "E0102", "duplicate action";
    /// Two agents or behaviors with one name.
    DUPLICATE_ITEM = "E0103", "duplicate agent or behavior";
    /// Two state fields with one name.
    DUPLICATE_FIELD = "E0104", "duplicate state field";
    /// An option the macro does not know.
    UNKNOWN_OPTION = "E0105", "unknown option";
    /// A strategy name that is not built in.
    UNKNOWN_STRATEGY = "E0106", "unknown strategy";
    /// A name that is a Rust keyword or not an identifier.
    INVALID_NAME = "E0107", "name is not a valid Rust identifier";
    /// A name that collides with a name the code generator uses.
    RESERVED_NAME = "E0108", "name collides with a generated name";
    /// A default literal that cannot be the declared type.
    DEFAULT_TYPE = "E0109", "default value does not fit the field's type";
    /// `#[agent]` on something other than a plain struct.
    UNSUPPORTED_ITEM = "E0110", "unsupported item";
    /// `migrate "x"` where `x` is not 16 hexadecimal digits.
    MIGRATION_FROM = "E0111", "migration from a malformed fingerprint";
    /// A migration renaming to (or filling) a state or field this definition does not have.
    MIGRATION_UNKNOWN = "E0112", "migration names an unknown state or field";
    /// A definition change that strands the checkpoints its lock file records, without a
    /// migration.
    DEFINITION_STRANDS = "E0113", "definition change strands existing checkpoints";
    /// `#[agent(lock = "...")]` names a lock file that is missing, unreadable or without the
    /// agent.
    LOCK_FILE = "E0114", "lock file missing or unreadable";

    /// A route pattern with an empty or invalid segment.
    ROUTE_PATTERN = "E0201", "malformed route pattern";
    /// A priority outside -100..=100.
    ROUTE_PRIORITY = "E0202", "route priority out of range";
    /// A route target that is not an action (or event) of the agent.
    ROUTE_TARGET = "E0203", "unknown route target";
    /// The same pattern routed to the same target twice.
    DUPLICATE_ROUTE = "E0204", "duplicate route";

    /// An FSM without `initial`.
    FSM_NO_INITIAL = "E0301", "FSM has no initial state";
    /// An FSM with two `initial`s.
    FSM_TWO_INITIALS = "E0302", "FSM has more than one initial state";
    /// `enter`/`exit` naming a state that no `initial`, `terminal` or row mentions.
    FSM_HOOK_UNKNOWN_STATE = "E0303", "`enter`/`exit` names an unknown state";
    /// A terminal state with outgoing rows.
    FSM_TERMINAL_OUTGOING = "E0304", "terminal state has outgoing rows";
    /// Two unguarded rows for one `(state, event)`.
    FSM_DUPLICATE_ROW = "E0305", "two unguarded rows for the same state and event";
    /// A guarded row after an unguarded one for the same `(state, event)`: it can never fire.
    FSM_SHADOWED_ROW = "E0306", "row can never fire";
    /// A state no sequence of rows reaches from `initial`.
    FSM_UNREACHABLE = "E0307", "state unreachable from the initial state";
    /// A state that is not terminal and has no outgoing row.
    FSM_DEAD_END = "E0308", "non-terminal state has no outgoing row";
    /// `after 0ms`.
    FSM_ZERO_AFTER = "E0309", "`after` with a zero duration";
    /// Two `after` rows on one state.
    FSM_TWO_AFTERS = "E0310", "two `after` rows on one state";
    /// A state declared `terminal` twice, or two `enter` (or `exit`) actions for one state.
    FSM_DUPLICATE_DECLARATION = "E0311", "duplicate FSM state declaration";
    /// A compound state (`state X { ... }`) without `initial`.
    FSM_COMPOUND_NO_INITIAL = "E0312", "compound state without initial state";
    /// A state name declared in two blocks of a statechart.
    FSM_AMBIGUOUS_STATE = "E0313", "state declared in two blocks";
    /// A history pseudo-state outside a compound state, used as a state, or with a default
    /// outside its compound state.
    FSM_MISPLACED_HISTORY = "E0314", "misplaced history pseudo-state";
    /// `terminal` inside a compound state's block.
    FSM_NESTED_TERMINAL = "E0315", "terminal state inside a compound state";
    /// `A -> local B` where `B` is not inside `A`.
    FSM_LOCAL_OUTSIDE = "E0316", "local transition to a state outside its source";
    /// A parallel state without regions, or a child of one that is not a compound state.
    FSM_EMPTY_REGION = "E0317", "region without states";
    /// `initial` inside `parallel X { ... }`.
    FSM_PARALLEL_INITIAL = "E0318", "initial state inside a parallel state";
    /// A row from a state in one region to a state in a sibling region.
    FSM_CROSS_REGION = "E0319", "row between parallel regions";
    /// `final` at the top level, on a compound state, or with outgoing rows.
    FSM_MISPLACED_FINAL = "E0320", "misplaced final state";
    /// `when done` on a state that has no final state to complete with.
    FSM_DONE_NEVER = "E0321", "`when done` row that can never fire";
    /// `ask x` where no `interrupt x(...) -> ...` is declared.
    FSM_UNKNOWN_INTERRUPT = "E0322", "`ask` names an unknown interrupt";
    /// An interrupt whose event no row takes: its answer would fire nothing.
    FSM_UNANSWERED_INTERRUPT = "E0323", "interrupt with no row taking its answer";
    /// A route whose target is an interrupt's event: only `resume` answers an interrupt.
    FSM_INTERRUPT_ROUTED = "E0324", "route fires an interrupt's answer";
    // E0325 is retired: "interrupt in a machine with parallel regions", while rows in regions
    // could not raise interrupts. Never reuse it.

    /// `subtree X` naming no behavior.
    TREE_UNKNOWN_SUBTREE = "E0401", "unknown subtree";
    /// Behaviors that contain themselves through subtrees.
    TREE_SUBTREE_CYCLE = "E0402", "cycle of subtrees";
    /// A `parallel` threshold of 0 or above its child count.
    TREE_PARALLEL_THRESHOLD = "E0403", "parallel threshold out of range";
    /// `repeat(0)` or `retry(0)`.
    TREE_ZERO_COUNT = "E0404", "zero `repeat` or `retry` count";
    /// `timeout(0ms)`.
    TREE_ZERO_TIMEOUT = "E0405", "zero timeout";
    /// `strategy behavior X` naming no behavior.
    TREE_UNKNOWN_BEHAVIOR = "E0406", "unknown behavior";
    /// The same argument twice in `action name(k = v, k = w)`.
    TREE_DUPLICATE_ARG = "E0407", "action argument given twice";
    /// `strategy = BehaviorTree` without `tree = ...`.
    TREE_MISSING = "E0408", "behaviour-tree agent without a tree";
    /// A tree whose generated progress type nests deeper than rustc accepts by default.
    TREE_TOO_DEEP = "E0409", "tree nested too deeply";
    /// A tree with more than [`crate::limits::TREE_NODES`] nodes once subtrees are inlined.
    TREE_TOO_LARGE = "E0410", "tree too large after inlining subtrees";
    /// A tree's action argument that the action's parameters do not take (unknown name, wrong
    /// type, a required one missing), or parameters that do not describe their fields. Found
    /// by rustc evaluating generated checks, not by `check`.
    TREE_ARGUMENT = "E0411", "action arguments do not fit the action's parameters";
    /// Two `ask` leaves of one tree raising the same interrupt with other payload or answer
    /// types: its answer is checked against one type.
    TREE_ASK_TYPES = "E0412", "interrupt asked with different types";

    /// The same tool listed twice.
    DUPLICATE_TOOL = "E0501", "duplicate tool";
    /// `model ""`.
    EMPTY_MODEL = "E0502", "empty model name";
    /// `max_iterations 0` (or beyond `u32`).
    MAX_ITERATIONS = "E0503", "max_iterations out of range";
    /// A temperature outside 0.0..=2.0.
    TEMPERATURE = "E0504", "temperature out of range";
    /// `max_tokens 0` (or beyond `u32`).
    MAX_TOKENS = "E0505", "max_tokens out of range";
    /// `tools` or `max_iterations` on Chain of Thought / Draft, which make one call and no tool calls.
    AI_OPTION_UNUSED = "E0506", "option has no effect on this AI strategy";
    /// A search option name no strategy knows (`.agent` files; macros reject it while parsing).
    UNKNOWN_AI_OPTION = "E0507", "unknown AI strategy option";
    /// A search option whose value has the wrong shape (a string where a count belongs).
    AI_OPTION_VALUE = "E0508", "AI option value of the wrong kind";
    /// A search option out of range (`branching_factor 0`, `max_depth 40`, thresholds reversed).
    AI_OPTION_RANGE = "E0509", "AI option out of range";
    /// `available_strategies`/`default_strategy` naming an unknown strategy, Adaptive itself,
    /// or one strategy twice.
    ADAPTIVE_STRATEGY = "E0510", "unknown strategy in Adaptive's options";
    /// `approve x` where `x` is not one of the agent's tools.
    APPROVE_NOT_A_TOOL = "E0511", "approval asked for a tool the agent does not offer";

    /// A qualifier an action function cannot have (`unsafe`, `extern`, `const`, generics).
    ACTION_QUALIFIER = "E0601", "unsupported action qualifier";
    /// A parameter list `#[action]` does not support.
    ACTION_SIGNATURE = "E0602", "unsupported action signature";
    /// An async action that takes `&mut` state.
    ACTION_ASYNC_MUT = "E0603", "async action takes `&mut` state";
    /// Execution options on a synchronous action.
    ACTION_EXEC_SYNC = "E0604", "execution options on a synchronous action";
    /// `#[action]` on something that is not a function.
    ACTION_ITEM = "E0605", "`#[action]` on a non-function";
    /// A macro naming, as an action, a function without `#[action]` (rustc reports it, with
    /// this code in its note).
    ACTION_ATTRIBUTE = "E0606", "function used as an action without `#[action]`";

    /// A plugin name that is not built in.
    UNKNOWN_PLUGIN = "E0701", "unknown plugin";
    /// An option a built-in plugin does not have.
    UNKNOWN_PLUGIN_OPTION = "E0702", "unknown plugin option";
    /// A plugin option value of the wrong kind or out of range.
    PLUGIN_OPTION_VALUE = "E0703", "plugin option value of the wrong kind or out of range";
    /// The same plugin (state key) mounted twice.
    DUPLICATE_PLUGIN = "E0704", "plugin mounted twice";
    /// A plugin route with exactly the pattern of one of the agent's routes.
    PLUGIN_ROUTE_COLLISION = "E0705", "plugin route collides with an agent route";
}

/// The code with this id.
pub fn find(id: &str) -> Option<Code> {
    ALL.iter().copied().find(|c| c.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_and_well_formed() {
        let mut seen = HashSet::new();
        for code in ALL {
            assert!(seen.insert(code.id), "{} is used twice", code.id);
            assert!(
                code.id.len() == 5 && code.id.starts_with('E'),
                "{}",
                code.id
            );
            assert!(
                !code.title.ends_with('.'),
                "{}: no trailing period",
                code.id
            );
        }
        assert_eq!(find("E0201"), Some(ROUTE_PATTERN));
    }
}
