//! Agent-level checks: names, options, actions, state fields, then the strategy and routes.

use crate::model::{AgentDef, StateDef, StrategyDef};

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;
use super::fsm::check_fsm;
use super::names::check_identifier;
use super::repeats::repeats;
use super::routes::{Targets, check_routes};
use super::settings::check_once;

/// Runs every agent check, collecting all diagnostics in `cx`. A behaviour-tree agent's tree may
/// name no behaviours (the macros' case; see [`check_agent_with`]).
pub fn check_agent(cx: &Ctxt, agent: &AgentDef) {
    check_agent_with(cx, agent, &super::tree::Behaviors::new(&[]));
}

/// [`check_agent`] for an agent of a `.agent` file, whose tree may name the file's behaviours.
pub fn check_agent_with(cx: &Ctxt, agent: &AgentDef, behaviors: &super::tree::Behaviors<'_>) {
    check_identifier(cx, &agent.name, "agent name");
    check_once(cx, &agent.description, "description");
    check_once(cx, &agent.strategy, "strategy");
    check_once(cx, &agent.tick, "tick");
    check_once(cx, &agent.runtime, "crate");
    check_once(cx, &agent.plugins, "plugins");
    check_once(cx, &agent.default_plugins, "default_plugins");
    check_once(cx, &agent.lock, "lock");
    super::plugins::check_plugins(cx, agent);

    for (action, first) in repeats(&agent.actions, |a| a.name.value.as_str()) {
        cx.push(
            Diagnostic::error(
                codes::DUPLICATE_ACTION,
                action.path.span,
                format!("action `{}` is listed twice", action.name.value),
            )
            .label("listed again here")
            .secondary(first.path.span, "first listed")
            .help("an agent's actions are named by their last path segment; list each once"),
        );
    }

    if let StateDef::Fields(fields) = &agent.state {
        for field in fields {
            check_identifier(cx, &field.name, "state field");
        }
        for (field, first) in repeats(fields, |f| f.name.value.as_str()) {
            cx.push(
                Diagnostic::error(
                    codes::DUPLICATE_FIELD,
                    field.name.span,
                    format!("state field `{}` is declared twice", field.name.value),
                )
                .label("declared again here")
                .secondary(first.name.span, "first declared")
                .help("rename or remove one of the two fields"),
            );
        }
    }

    let events: Vec<&str> = match agent.strategy.get() {
        None | Some(StrategyDef::Direct) | Some(StrategyDef::Custom(_)) => Vec::new(),
        Some(StrategyDef::Fsm(fsm)) => {
            check_fsm(cx, fsm);
            super::interrupt::check_interrupts(cx, fsm, &agent.routes);
            fsm.events().iter().map(|e| e.value.as_str()).collect()
        }
        Some(StrategyDef::Ai(ai)) => {
            super::ai::check_ai(cx, ai);
            Vec::new()
        }
        Some(StrategyDef::BehaviorTree(tree)) => {
            super::tree::check_strategy(cx, tree, behaviors);
            Vec::new()
        }
    };
    let actions = agent
        .actions
        .iter()
        .chain(match agent.strategy.get() {
            Some(StrategyDef::Ai(ai)) => ai.tool_refs(),
            _ => &[],
        })
        .map(|a| a.name.value.as_str())
        .collect();
    super::migration::check_migrations(cx, agent);
    let targets = Targets::new(&agent.name.value, actions, events);
    check_routes(cx, &agent.routes, &targets);
}
