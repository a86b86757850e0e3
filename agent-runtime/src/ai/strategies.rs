//! The AI strategy types: [`React`], [`ChainOfThought`], [`ChainOfDraft`], [`TreeOfThoughts`],
//! [`GraphOfThoughts`], [`AlgorithmOfThoughts`], [`Trm`], [`Adaptive`]; all run on the one
//! request lifecycle of `machine.rs` (the searches through `search.rs`).

use crate::agent::{Agent, AgentSpec};
use crate::directive::Directive;
use crate::inspect::{Progress, Shape};
use crate::instruction::Instruction;
use crate::route::{RouteSpec, RouteTarget, priority};
use crate::snapshot::{Snapshot, Status};
use crate::strategy::Strategy;
use crate::trace;

use super::kind::StrategyKind;
use super::machine::{self, CANCEL, LLM_RESPONSE, LlmReply, QUERY, TOOL_RESULT};
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

/// Tree of Thoughts: candidate thoughts generated and scored per node, expanded breadth first,
/// depth first or best first to `max_depth`, pruned to a beam; the answer is the best leaf and
/// its path. A frontier's calls go out together and run concurrently.
#[derive(Debug, Clone, Copy, Default)]
pub struct TreeOfThoughts;

/// Graph of Thoughts: thoughts generated from the question, related by a connection call and
/// merged by aggregation into new thoughts, bounded by `max_nodes` and `max_depth`; the answer
/// is the final aggregate, the graph is kept in the result.
#[derive(Debug, Clone, Copy, Default)]
pub struct GraphOfThoughts;

/// Algorithm of Thoughts: one LLM call whose prompt carries a worked search example; the
/// explored steps and the answer are parsed from the text.
#[derive(Debug, Clone, Copy, Default)]
pub struct AlgorithmOfThoughts;

/// TRM (recursive refinement): an answer, then rounds of critique and improvement with a
/// confidence estimate, until `act_threshold` or `max_supervision_steps`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Trm;

/// Adaptive: estimates the question's complexity, picks one of `available_strategies`, records
/// why, and runs that strategy in the same request.
#[derive(Debug, Clone, Copy, Default)]
pub struct Adaptive;

/// What every AI strategy offers its hosts besides the strategy contract.
pub trait AiStrategy<S: AgentSpec>: Strategy<S> {
    /// The strategy's state.
    fn ai_state(agent: &Agent<S>) -> &AiState;
    /// The strategy.
    const KIND: StrategyKind;
    /// The model call the agent is waiting for (the first, when a search waits for several).
    fn pending_llm_call(agent: &Agent<S>) -> Option<LlmCall> {
        Self::pending_llm_calls(agent).into_iter().next()
    }
    /// Every model call the agent is waiting for: what a host re-issues after a thaw (calls
    /// that had answered are not repeated).
    fn pending_llm_calls(agent: &Agent<S>) -> Vec<LlmCall>;
}

fn routes(kind: StrategyKind) -> Vec<RouteSpec> {
    let mut routes: Vec<RouteSpec> = [QUERY, LLM_RESPONSE, CANCEL, TOOL_RESULT]
        .into_iter()
        .map(|name| RouteSpec::new(name, RouteTarget::Custom(name.into()), priority::STRATEGY))
        .collect();
    routes.push(crate::strategy::resume_route());
    // `reasoning.<name>.run` starts a request like `ai.query`.
    routes.push(RouteSpec::new(
        kind.run_signal(),
        RouteTarget::Custom(QUERY.into()),
        priority::STRATEGY,
    ));
    routes
}

/// [`machine::cmd`] reporting each step as a `stratagem::ai` event: what came in (a query, a
/// model's reply, a tool's result), then what the strategy asks for (a model call, a tool call,
/// a signal, an error).
#[cold]
#[inline(never)]
fn traced_cmd<S: AiAgent + AgentSpec>(
    id: &str,
    state: &mut S,
    ai: &mut AiState,
    instructions: Vec<Instruction>,
    kind: StrategyKind,
) -> Vec<Directive> {
    for instruction in &instructions {
        trace::ai_step(S::NAME, id, "received", &instruction.action);
    }
    // Traced, the step is heard: the host gives no word then, and one taken is ignored.
    let out = machine::cmd(id, state, ai, instructions, kind, false);
    for directive in &out {
        match directive {
            Directive::Llm(call) => trace::ai_step(S::NAME, id, "model call", &call.call_id),
            Directive::RunInstruction { instruction, .. } => {
                trace::ai_step(S::NAME, id, "tool call", &instruction.action);
            }
            Directive::Emit(signal) => trace::ai_step(S::NAME, id, "emitted", &signal.signal_type),
            Directive::Error { error, .. } => trace::ai_step(S::NAME, id, "error", error),
            other => trace::ai_step(S::NAME, id, "directive", &other.kind()),
        }
    }
    out
}

macro_rules! ai_strategy {
    ($ty:ident, $kind:expr) => {
        impl<S: AiAgent + AgentSpec<Strategy = $ty>> Strategy<S> for $ty {
            type State = AiState;

            fn cmd(agent: &mut Agent<S>, instructions: Vec<Instruction>) -> Vec<Directive> {
                let unheard = agent.take_unheard();
                let (id, state, ai) = agent.parts_with_id();
                if trace::on!(DEBUG) {
                    return traced_cmd(id, state, ai, instructions, $kind);
                }
                machine::cmd(id, state, ai, instructions, $kind, unheard)
            }

            fn cmd_llm_reply(
                agent: &mut Agent<S>,
                mut instruction: Instruction,
                reply: LlmReply,
            ) -> Vec<Directive> {
                if trace::on!(DEBUG) {
                    // The traced path reports the instruction as it would arrive.
                    instruction.params = reply.to_json();
                    return <Self as Strategy<S>>::cmd(agent, vec![instruction]);
                }
                let unheard = agent.take_unheard();
                let (id, state, ai) = agent.parts_with_id();
                machine::cmd_reply(id, state, ai, reply, $kind, unheard)
            }

            fn interrupts(agent: &Agent<S>) -> Vec<crate::interrupt::PendingInterrupt> {
                agent.strategy_state().interrupts.pending.clone()
            }

            fn resume(
                agent: &mut Agent<S>,
                id: &str,
                value: serde_json::Value,
            ) -> Result<Vec<Directive>, crate::error::AgentError> {
                let unheard = agent.take_unheard();
                let (agent_id, state, ai) = agent.parts_with_id();
                machine::resume(agent_id, state, ai, id, value, $kind, unheard)
            }

            fn snapshot(agent: &Agent<S>) -> Snapshot {
                machine::snapshot(agent.strategy_state())
            }

            fn status(agent: &Agent<S>) -> Status {
                machine::status(agent.strategy_state())
            }

            fn signal_routes() -> Vec<RouteSpec> {
                routes($kind)
            }

            fn required_models() -> Vec<&'static str> {
                vec![S::AI.model]
            }

            fn shape() -> Shape {
                Shape::Conversation {
                    strategy: $kind.name(),
                    model: S::AI.model,
                }
            }

            fn progress(agent: &Agent<S>) -> Progress {
                match &agent.strategy_state().run {
                    Some(run) => Progress::Conversation {
                        request_id: run.request_id.clone(),
                        step: run.step,
                        messages: run.messages.clone(),
                    },
                    None => Progress::Conversation {
                        request_id: String::new(),
                        step: 0,
                        messages: Vec::new(),
                    },
                }
            }

            fn tool_schema_problems() -> Vec<String> {
                super::schema::tool_problems(&S::tool_specs())
            }
        }

        impl<S: AiAgent + AgentSpec<Strategy = $ty>> AiStrategy<S> for $ty {
            fn ai_state(agent: &Agent<S>) -> &AiState {
                agent.strategy_state()
            }

            const KIND: StrategyKind = $kind;

            fn pending_llm_calls(agent: &Agent<S>) -> Vec<LlmCall> {
                machine::pending_llm_calls::<S>(
                    &agent.state().config(),
                    agent.strategy_state(),
                    $kind,
                )
            }
        }
    };
}

ai_strategy!(React, StrategyKind::React);
ai_strategy!(ChainOfThought, StrategyKind::Cot);
ai_strategy!(ChainOfDraft, StrategyKind::Cod);
ai_strategy!(TreeOfThoughts, StrategyKind::Tot);
ai_strategy!(GraphOfThoughts, StrategyKind::Got);
ai_strategy!(AlgorithmOfThoughts, StrategyKind::Aot);
ai_strategy!(Trm, StrategyKind::Trm);
ai_strategy!(Adaptive, StrategyKind::Adaptive);
