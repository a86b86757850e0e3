//! `Direct`: run instructions in order.

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Dispatch, Strategy, complete_action, dispatch_action};
use crate::agent::{Agent, AgentSpec};
use crate::directive::Directive;
use crate::error::{AgentError, ErrorContext};
use crate::instruction::Instruction;
use crate::snapshot::{Snapshot, Status};

/// Runs instructions in order; each sees the state the previous one left.
///
/// A failing (or panicking) instruction changes nothing, yields one `Error` directive with an
/// [`ErrorContext::Instruction`] context, and the batch continues. An async action yields a
/// `RunInstruction` directive; its completion is applied when it comes back through `cmd`.
/// The snapshot is `Idle`, or `Waiting` while async actions are in flight.
#[derive(Debug, Clone, Copy, Default)]
pub struct Direct;

/// Direct's state: the async instructions in flight.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectState {
    /// Ids of instructions whose async action the host is running.
    pub in_flight: Vec<String>,
}

impl<S: AgentSpec<Strategy = Direct>> Strategy<S> for Direct {
    type State = DirectState;

    fn cmd(agent: &mut Agent<S>, instructions: Vec<Instruction>) -> Vec<Directive> {
        let mut out = Vec::new();
        let (state, direct) = agent.parts_mut();
        for instruction in instructions {
            let context = ErrorContext::Instruction {
                id: instruction.id.clone(),
                action: instruction.action.clone(),
            };
            if instruction.is_completion() {
                let Some(pos) = direct.in_flight.iter().position(|id| *id == instruction.id) else {
                    out.push(Directive::error(
                        AgentError::UnexpectedCompletion { id: instruction.id },
                        context,
                    ));
                    continue;
                };
                direct.in_flight.remove(pos);
                match complete_action(state, instruction) {
                    Ok(directives) => out.extend(directives),
                    Err(error) => out.push(Directive::error(error, context)),
                }
                continue;
            }
            let id = instruction.id.clone();
            match dispatch_action(state, instruction) {
                Dispatch::Completed(directives) => out.extend(directives),
                Dispatch::Started(run) => {
                    direct.in_flight.push(id);
                    out.push(run);
                }
                Dispatch::Failed(error) => out.push(Directive::error(error, context)),
            }
        }
        out
    }

    fn snapshot(agent: &Agent<S>) -> Snapshot {
        let in_flight = &agent.strategy_state().in_flight;
        let status = if in_flight.is_empty() {
            Status::Idle
        } else {
            Status::Waiting
        };
        Snapshot::new(status).with_details(json!({ "in_flight": in_flight }))
    }
}
