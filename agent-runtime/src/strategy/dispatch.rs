//! Running an instruction's action: the step every strategy shares.

use crate::action::{ActionFn, apply_outcome, run_sync};
use crate::agent::AgentSpec;
use crate::directive::Directive;
use crate::error::AgentError;
use crate::instruction::Instruction;
use crate::trace::{self, Ran};

/// What became of an instruction handed to [`dispatch_action`].
#[derive(Debug)]
pub enum Dispatch {
    /// A sync action ran and its changes were committed; these are its directives.
    Completed(Vec<Directive>),
    /// The action is async: the host must run this `RunInstruction` directive.
    Started(Directive),
    /// The action is unknown or failed; the state is unchanged.
    Failed(AgentError),
}

/// Runs the action an instruction names: a sync action on a draft of `state` (committed only on
/// success, panics caught), an async one turned into a `RunInstruction` directive.
///
/// Its `action ran` trace event has an empty `id`: the built-in strategies, which know the
/// agent's id, go through a crate-private twin that names it.
pub fn dispatch_action<S: AgentSpec>(state: &mut S, instruction: Instruction) -> Dispatch {
    dispatch_action_of("", state, instruction)
}

/// [`dispatch_action`] for the agent with id `id` (named in its trace event).
pub(crate) fn dispatch_action_of<S: AgentSpec>(
    id: &str,
    state: &mut S,
    instruction: Instruction,
) -> Dispatch {
    let Some(entry) = S::action(&instruction.action) else {
        return Dispatch::Failed(AgentError::UnknownAction {
            known: S::actions().iter().map(|a| a.name.to_string()).collect(),
            name: crate::quote::clip(instruction.action),
        });
    };
    match entry.run {
        ActionFn::Sync(run) => {
            let params = instruction.params;
            let started = trace::start();
            let ran = run_sync(entry.name, state, |draft| run(draft, params));
            if started.is_some() {
                let (outcome, error) = match &ran {
                    Ok(_) => (Ran::Success, None),
                    Err(error) => (Ran::Failure, Some(error)),
                };
                trace::action_ran(S::NAME, id, entry.name, started, outcome, error);
            }
            match ran {
                Ok(directives) => Dispatch::Completed(directives),
                Err(error) => Dispatch::Failed(AgentError::Action {
                    action: instruction.action.into(),
                    error,
                }),
            }
        }
        ActionFn::Async(_) => {
            if trace::on!(DEBUG) {
                trace::action_ran(S::NAME, id, entry.name, None, Ran::Started, None);
            }
            let exec = instruction.exec.unwrap_or(entry.exec);
            Dispatch::Started(Directive::RunInstruction { instruction, exec })
        }
    }
}

/// Applies the outcome an async action's completion carries to `state`, all or nothing.
///
/// Returns the outcome's directives, or the error to report (the action's own failure, or a
/// state operation that could not be applied).
pub fn complete_action<S: AgentSpec>(
    state: &mut S,
    completion: Instruction,
) -> Result<Vec<Directive>, AgentError> {
    let action = completion.action;
    let Some(result) = completion.outcome else {
        return Err(AgentError::Strategy {
            message: format!("instruction for `{action}` carries no outcome"),
        });
    };
    result
        .and_then(|outcome| apply_outcome(state, outcome))
        .map_err(|error| AgentError::Action {
            action: action.into(),
            error,
        })
}
