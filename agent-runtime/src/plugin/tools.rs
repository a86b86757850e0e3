//! The agent's actions as tools a plugin action can offer a model and run (Chat's
//! `chat.message`, `chat.execute_tool`, `chat.list_tools`).

use std::cell::RefCell;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::Value;

use crate::action::{ActionFn, ActionSpec, Outcome};
use crate::agent::AgentSpec;
use crate::ai::schema;
use crate::directive::Directive;
use crate::error::ActionError;
use crate::state_op::apply_ops;

/// The agent's actions, seen from a plugin action ([`PluginCall::tools`](super::PluginCall::tools)).
///
/// Sync actions run right away on the agent's state (on a draft, committed only when the action
/// succeeds), as an AI strategy runs a sync tool; the directives they return go out after the
/// plugin action's own. Async actions are listed but not run here: they need the host.
pub trait PluginTools: fmt::Debug {
    /// Every action the agent has, with whether it is async.
    fn list(&self) -> Vec<(ActionSpec, bool)>;
    /// Runs action `name` with `arguments` (checked against its schema first): its reply, or
    /// what went wrong, as a model should hear it.
    fn run(&self, name: &str, arguments: Value) -> Result<Option<Value>, String>;
}

/// No tools (a plugin action run outside an agent).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoTools;

impl PluginTools for NoTools {
    fn list(&self) -> Vec<(ActionSpec, bool)> {
        Vec::new()
    }
    fn run(&self, name: &str, _: Value) -> Result<Option<Value>, String> {
        Err(format!("unknown tool `{name}`: there are no tools here"))
    }
}

/// The tools of an agent of type `S` during one plugin action.
pub(crate) struct AgentTools<'a, S> {
    state: RefCell<&'a mut S>,
    /// Directives the tools returned, in order.
    pub(crate) out: RefCell<Vec<Directive>>,
}

impl<'a, S> AgentTools<'a, S> {
    pub(crate) fn new(state: &'a mut S) -> Self {
        AgentTools {
            state: RefCell::new(state),
            out: RefCell::new(Vec::new()),
        }
    }
}

impl<S: AgentSpec> fmt::Debug for AgentTools<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentTools")
            .field("agent", &S::NAME)
            .finish_non_exhaustive()
    }
}

impl<S: AgentSpec> PluginTools for AgentTools<'_, S> {
    fn list(&self) -> Vec<(ActionSpec, bool)> {
        S::actions()
            .iter()
            .map(|entry| (entry.spec(), entry.is_async()))
            .collect()
    }

    fn run(&self, name: &str, arguments: Value) -> Result<Option<Value>, String> {
        let entry = S::action(name).ok_or_else(|| {
            let known: Vec<String> = S::actions()
                .iter()
                .map(|a| format!("`{}`", a.name))
                .collect();
            format!(
                "unknown tool `{}`; the tools are: {}",
                crate::quote::clip(name),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )
        })?;
        let arguments = match arguments {
            Value::Null => Value::Object(Default::default()),
            Value::Object(map) => Value::Object(map),
            other => {
                return Err(format!(
                    "the arguments of `{name}` are not a JSON object: {}",
                    crate::quote::clip(other.to_string())
                ));
            }
        };
        let problems = schema::validate(&entry.spec().parameters, &arguments);
        if !problems.is_empty() {
            return Err(format!(
                "invalid arguments for `{name}`: {}",
                problems.join("; ")
            ));
        }
        let ActionFn::Sync(run) = entry.run else {
            return Err(format!(
                "tool `{name}` is async; a plugin runs sync tools only (an AI strategy runs async ones)"
            ));
        };
        let mut state = self.state.borrow_mut();
        let (reply, directives) = run_sync_tool(&mut **state, name, run, arguments)?;
        self.out.borrow_mut().extend(directives);
        Ok(reply)
    }
}

/// Runs a sync action as a tool on a draft of `state`, kept only when the action and its
/// state operations succeed: its reply and directives, or what went wrong (as a model should
/// hear it). AI strategies and plugin tools both run tools this way.
pub(crate) fn run_sync_tool<S: AgentSpec>(
    state: &mut S,
    name: &str,
    run: fn(&mut S, Value) -> Result<Outcome, ActionError>,
    params: Value,
) -> Result<(Option<Value>, Vec<Directive>), String> {
    let mut draft = state.clone();
    let outcome = match catch_unwind(AssertUnwindSafe(|| run(&mut draft, params))) {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(e)) => return Err(e.message().to_string()),
        Err(payload) => {
            return Err(ActionError::panicked(name, payload.as_ref())
                .message()
                .to_string());
        }
    };
    apply_ops(&mut draft, &outcome.ops).map_err(|e| e.message().to_string())?;
    *state = draft;
    Ok((outcome.reply.map(|r| *r), outcome.directives))
}
