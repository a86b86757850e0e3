//! `Direct`: run instructions in order.

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Dispatch, Strategy, complete_action, dispatch_action_of};
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
    // Actions run through `run_sync`, which catches their panics.
    const CATCHES_PANICS: bool = true;

    type State = DirectState;

    fn cmd(agent: &mut Agent<S>, instructions: Vec<Instruction>) -> Vec<Directive> {
        let mut out = Vec::new();
        let (agent_id, state, direct) = agent.parts_with_id();
        for instruction in instructions {
            let context = ErrorContext::instruction(&instruction);
            if instruction.is_completion() {
                let Some(pos) = direct.in_flight.iter().position(|id| *id == instruction.id) else {
                    out.push(Directive::error(
                        AgentError::UnexpectedCompletion {
                            id: crate::quote::clip(instruction.id),
                        },
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
            match dispatch_action_of(agent_id, state, instruction) {
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
        Snapshot::new(Self::status(agent)).with_details(json!({ "in_flight": in_flight }))
    }

    fn status(agent: &Agent<S>) -> Status {
        if agent.strategy_state().in_flight.is_empty() {
            Status::Idle
        } else {
            Status::Waiting
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::agent::{Agent, AgentSpec};
    use crate::directive::Directive;
    use crate::error::{ActionErrorKind, AgentError, ErrorContext};
    use crate::instruction::Instruction;
    use crate::snapshot::Status;
    use crate::testing::Counter;

    fn add(id: &str, by: i64) -> Instruction {
        Instruction::new("add", json!({ "by": by })).with_id(id)
    }

    #[test]
    fn instructions_run_in_order_and_see_the_previous_state() {
        let mut agent = Counter::new();
        let out = agent.cmd([add("a", 5), add("b", -3), add("c", 10)]);
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(agent.state().value, 12);
        assert_eq!(agent.state().log, ["add 5", "add -3", "add 10"]);
    }

    #[test]
    fn a_failure_changes_nothing_yields_one_error_and_the_batch_continues() {
        let mut agent = Counter::new();
        // `-10` would only fail if it saw the state left by the first instruction.
        let out = agent.cmd([add("a", 5), add("b", -10), add("c", 1)]);
        assert_eq!(agent.state().value, 6);
        assert_eq!(
            agent.state().log,
            ["add 5", "add 1"],
            "the failed add left no trace"
        );
        assert_eq!(out.len(), 1);
        let Directive::Error { error, context } = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(
            context,
            &ErrorContext::Instruction {
                id: "b".into(),
                action: "add".into()
            }
        );
        assert_eq!(
            error.to_string(),
            "action `add` failed: counter would go to -5"
        );
    }

    #[test]
    fn a_panic_is_a_failure_and_changes_nothing() {
        let mut agent = Counter::new();
        let out = agent.cmd([
            add("a", 1),
            Instruction::new("explode", json!(null)).with_id("boom"),
            add("c", 1),
        ]);
        assert_eq!(agent.state().value, 2);
        let [
            Directive::Error {
                error: AgentError::Action { error, .. },
                ..
            },
        ] = out.as_slice()
        else {
            panic!("{out:?}")
        };
        assert_eq!(error.kind(), ActionErrorKind::Panicked);
    }

    #[test]
    fn state_ops_deep_merge_through_actions() {
        let mut agent = Counter::new();
        agent.cmd(Instruction::new(
            "tag",
            json!({"owner": {"name": "ada", "team": "core"}}),
        ));
        agent.cmd(Instruction::new(
            "tag",
            json!({"owner": {"team": "infra"}, "v": 2}),
        ));
        assert_eq!(
            agent.state().meta,
            json!({"owner": {"name": "ada", "team": "infra"}, "v": 2})
        );
    }

    #[test]
    fn unknown_actions_list_the_known_ones() {
        let mut agent = Counter::new();
        let out = agent.cmd(Instruction::new("multiply", json!({})));
        let Some(AgentError::UnknownAction { name, known }) = out[0].as_error() else {
            panic!("{out:?}")
        };
        assert_eq!(name, "multiply");
        assert_eq!(known, &["add", "explode", "tag", "fetch"]);
    }

    #[test]
    fn async_actions_become_run_instructions_and_completions_are_applied_once() {
        let mut agent = Counter::new();
        let fetch = Instruction::new("fetch", json!({"key": "direct-unit"})).with_id("f1");
        let out = agent.cmd(fetch.clone());
        let [Directive::RunInstruction { instruction, exec }] = out.as_slice() else {
            panic!("{out:?}")
        };
        assert_eq!(instruction.id, "f1");
        assert_eq!(exec, &crate::ExecOptions::DEFAULT);
        assert_eq!(agent.snapshot().status, Status::Waiting);

        let done =
            Instruction::completed(&fetch, Ok(crate::Outcome::new().set(json!({"value": 42}))));
        assert!(agent.cmd(done.clone()).is_empty());
        assert_eq!(agent.state().value, 42);
        assert_eq!(agent.snapshot().status, Status::Idle);

        // The same completion again is stale: reported, not applied.
        let out = agent.cmd(done);
        assert!(
            matches!(out[0].as_error(), Some(AgentError::UnexpectedCompletion { id }) if id == "f1"),
            "{out:?}"
        );
    }

    #[test]
    fn a_failed_completion_changes_nothing() {
        let mut agent = Counter::new();
        let fetch = Instruction::new("fetch", json!({"key": "x"})).with_id("f2");
        agent.cmd(fetch.clone());
        let bad_op = crate::Outcome::new().set(json!({"value": "not a number"}));
        let out = agent.cmd(Instruction::completed(&fetch, Ok(bad_op)));
        assert_eq!(agent.state(), &Counter::default());
        let Some(AgentError::Action { error, .. }) = out[0].as_error() else {
            panic!("{out:?}")
        };
        assert_eq!(error.kind(), ActionErrorKind::StateOp);
    }

    #[test]
    fn init_is_idempotent() {
        let mut agent = Counter::new();
        assert!(agent.init().is_empty());
        let before = serde_json::to_value(&agent).unwrap();
        assert!(agent.init().is_empty());
        assert_eq!(serde_json::to_value(&agent).unwrap(), before);
    }

    #[test]
    fn hand_written_agents_get_a_cached_router() {
        let mut agent: Agent<Counter> = Counter::new();
        let out = agent.handle_signal(&crate::Signal::new("counter.add", json!({"by": 3})));
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(agent.state().value, 3);
        let first = Counter::router().unwrap() as *const _;
        let second = Counter::router().unwrap() as *const _;
        assert_eq!(first, second, "built once per agent type");
    }
}
