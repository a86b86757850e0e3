//! The AI strategy types: [`React`], [`ChainOfThought`], [`ChainOfDraft`].

use crate::agent::{Agent, AgentSpec};
use crate::directive::Directive;
use crate::instruction::Instruction;
use crate::route::{RouteSpec, RouteTarget, priority};
use crate::snapshot::{Snapshot, Status};
use crate::strategy::Strategy;

use super::machine::{self, CANCEL, LLM_RESPONSE, Mode, QUERY, TOOL_RESULT};
use super::spec::AiAgent;
use super::state::{AiState, LlmCall};

/// Reason and act: the model answers or calls the agent's actions as tools, round after round,
/// until it answers, `max_iterations` LLM calls are spent, the `stop_condition` hook says stop,
/// or the request is cancelled.
#[derive(Debug, Clone, Copy, Default)]
pub struct React;

/// Chain of Thought: one LLM call; the answer is parsed into numbered steps and a conclusion.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChainOfThought;

/// Chain of Draft: one LLM call with terse drafts; the answer follows `####`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChainOfDraft;

/// What every AI strategy offers its hosts besides the strategy contract.
pub trait AiStrategy<S: AgentSpec>: Strategy<S> {
    /// The strategy's state.
    fn ai_state(agent: &Agent<S>) -> &AiState;
    /// The model call the agent is waiting for (a host re-issues it after a thaw).
    fn pending_llm_call(agent: &Agent<S>) -> Option<LlmCall>;
}

fn routes() -> Vec<RouteSpec> {
    [QUERY, LLM_RESPONSE, CANCEL, TOOL_RESULT]
        .into_iter()
        .map(|name| RouteSpec::new(name, RouteTarget::Custom(name.into()), priority::STRATEGY))
        .collect()
}

macro_rules! ai_strategy {
    ($ty:ident, $mode:expr) => {
        impl<S: AiAgent + AgentSpec<Strategy = $ty>> Strategy<S> for $ty {
            type State = AiState;

            fn cmd(agent: &mut Agent<S>, instructions: Vec<Instruction>) -> Vec<Directive> {
                let (state, ai) = agent.parts_mut();
                machine::cmd(state, ai, instructions, $mode)
            }

            fn snapshot(agent: &Agent<S>) -> Snapshot {
                machine::snapshot(agent.strategy_state())
            }

            fn status(agent: &Agent<S>) -> Status {
                machine::status(agent.strategy_state())
            }

            fn signal_routes() -> Vec<RouteSpec> {
                routes()
            }

            fn required_models() -> Vec<&'static str> {
                vec![S::AI.model]
            }
        }

        impl<S: AiAgent + AgentSpec<Strategy = $ty>> AiStrategy<S> for $ty {
            fn ai_state(agent: &Agent<S>) -> &AiState {
                agent.strategy_state()
            }

            fn pending_llm_call(agent: &Agent<S>) -> Option<LlmCall> {
                machine::pending_llm_call::<S>(agent.strategy_state(), $mode == Mode::React)
            }
        }
    };
}

ai_strategy!(React, Mode::React);
ai_strategy!(ChainOfThought, Mode::Thought);
ai_strategy!(ChainOfDraft, Mode::Draft);
