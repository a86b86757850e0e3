//! The `.agent` file front-end: pest parses a file (`agent.pest`), the lowering in this module
//! builds the same model the macros build, with file spans, so the same checks and the same code
//! generator run on it.
//!
//! Syntax errors are reported in a user's words (`expected `state`, `actions` or `}``), never with
//! grammar rule names. Lowering reports what the grammar accepts loosely on purpose (a malformed
//! number or duration, a bad escape) and keeps going, so one run shows every mistake.

mod agent;
mod ai;
mod errors;
pub mod format;
mod fsm;
mod hints;
pub mod lexer;
mod literal;
mod nesting;
mod routes;
mod tree;

use pest::Parser as _;
use pest::iterators::Pair;

use crate::check::{Ctxt, Diagnostic};
use crate::model::{AgentDef, BehaviorDef, FileId, Span};

mod grammar {
    #![allow(missing_docs)] // pest_derive generates the `Rule` enum undocumented.

    /// The pest parser generated from `agent.pest`.
    #[derive(pest_derive::Parser)]
    #[grammar = "syntax/agent.pest"]
    pub struct AgentParser;
}

pub use grammar::{AgentParser, Rule};

/// What one `.agent` file declares.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FileDef {
    /// Its agents, in order.
    pub agents: Vec<AgentDef>,
    /// Its behaviours, in order: the trees `strategy behavior` and `subtree` may name.
    pub behaviors: Vec<BehaviorDef>,
}

/// Parses and lowers one file. `Err` holds every syntax and lowering diagnostic.
pub fn parse(file: FileId, source: &str) -> Result<FileDef, Vec<Diagnostic>> {
    match parse_partial(file, source)? {
        (def, lowering) if lowering.is_empty() => Ok(def),
        (_, lowering) => Err(lowering),
    }
}

/// Parses and lowers one file, keeping what lowered when some parts did not (a malformed
/// number drops its route, not the agent), so the checks can still run and report the rest.
/// `Err` only for a syntax error, which leaves no model.
pub fn parse_partial(
    file: FileId,
    source: &str,
) -> Result<(FileDef, Vec<Diagnostic>), Vec<Diagnostic>> {
    let root = parse_tree(file, source)?;
    let cx = Ctxt::new();
    let mut def = FileDef::default();
    for item in root.into_inner() {
        match item.as_rule() {
            Rule::agent => def.agents.push(agent::agent(&cx, file, item)),
            Rule::behavior => {
                if let Some(behavior) = tree::behavior(&cx, file, item) {
                    def.behaviors.push(behavior);
                }
            }
            _ => {}
        }
    }
    let lowering = match cx.finish() {
        Ok(warnings) => warnings,
        Err(all) => all,
    };
    Ok((def, lowering))
}

/// The pest parse tree of a file (the `file` pair), or the syntax error in user words.
pub fn parse_tree(file: FileId, source: &str) -> Result<Pair<'_, Rule>, Vec<Diagnostic>> {
    // Unterminated strings and comments are found by the lexer: pest would only report them at
    // the end of the file. Nesting is bounded before pest, which recurses once per level.
    let tokens = lexer::tokenize(file, source).map_err(|d| vec![*d])?;
    nesting::check(file, source, &tokens).map_err(|d| vec![*d])?;
    match AgentParser::parse(Rule::file, source) {
        Ok(mut pairs) => Ok(pairs.next().expect("the `file` rule yields one pair")),
        Err(_) => {
            // Tracking what was expected where doubles parsing time, so only a file that failed
            // is parsed again with it. The switch is process-wide and only ever turned on, so
            // concurrent parses never lose it.
            pest::set_error_detail(true);
            match AgentParser::parse(Rule::file, source) {
                Ok(mut pairs) => Ok(pairs.next().expect("the `file` rule yields one pair")),
                Err(error) => {
                    Err(vec![hints::explain(file, source, &tokens).unwrap_or_else(
                        || errors::syntax_error(file, source, &error),
                    )])
                }
            }
        }
    }
}

/// The span of a pair.
pub(crate) fn span(file: FileId, pair: &Pair<'_, Rule>) -> Span {
    // A rule ending in an optional part (`route_priority?`) keeps the whitespace skipped
    // before trying it; a label should not run onto the next line.
    let s = pair.as_span();
    Span::File {
        file,
        start: s.start(),
        end: s.start() + s.as_str().trim_end().len(),
    }
}

/// Whether a rule is a keyword, which lowering skips.
pub(crate) fn is_keyword(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::kw_agent
            | Rule::kw_behavior
            | Rule::kw_description
            | Rule::kw_state
            | Rule::kw_history
            | Rule::kw_deep
            | Rule::kw_local
            | Rule::kw_final
            | Rule::kw_when
            | Rule::kw_done
            | Rule::kw_actions
            | Rule::kw_strategy
            | Rule::kw_routes
            | Rule::kw_tick
            | Rule::kw_every
            | Rule::kw_direct
            | Rule::kw_fsm
            | Rule::kw_initial
            | Rule::kw_interrupt
            | Rule::kw_migrate
            | Rule::kw_was
            | Rule::kw_field
            | Rule::kw_with
            | Rule::kw_ask
            | Rule::kw_terminal
            | Rule::kw_as
            | Rule::kw_do
            | Rule::kw_on
            | Rule::kw_after
            | Rule::kw_if
            | Rule::kw_model
            | Rule::kw_system
            | Rule::kw_tools
            | Rule::kw_approve
            | Rule::kw_max_iterations
            | Rule::kw_temperature
            | Rule::kw_max_tokens
            | Rule::kw_priority
            | Rule::kw_sequence
            | Rule::kw_reactive_sequence
            | Rule::kw_selector
            | Rule::kw_reactive_selector
            | Rule::kw_parallel
            | Rule::kw_success
            | Rule::kw_failure
            | Rule::kw_invert
            | Rule::kw_force_success
            | Rule::kw_force_failure
            | Rule::kw_run_once
            | Rule::kw_repeat
            | Rule::kw_retry
            | Rule::kw_timeout
            | Rule::kw_delay
            | Rule::kw_action
            | Rule::kw_condition
            | Rule::kw_wait
            | Rule::kw_subtree
            | Rule::kw_mut
            | Rule::kw_plugins
            | Rule::kw_custom
            | Rule::kw_default_plugins
    )
}

/// The children of a pair, keywords left out.
pub(crate) fn children<'a>(pair: Pair<'a, Rule>) -> impl Iterator<Item = Pair<'a, Rule>> {
    pair.into_inner().filter(|p| !is_keyword(p.as_rule()))
}
