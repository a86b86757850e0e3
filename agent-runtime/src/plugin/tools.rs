//! The agent's actions as tools a plugin action can offer a model and run (Chat's
//! `chat.message`, `chat.execute_tool`, `chat.list_tools`).

use std::cell::RefCell;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::Value;

use crate::action::{ActionEntry, ActionFn, ActionSpec, Outcome};
use crate::agent::AgentSpec;
use crate::ai::schema;
use crate::directive::Directive;
use crate::error::ActionError;
use crate::instruction::Instruction;
use crate::state_op::apply_ops;

/// The agent's actions, seen from a plugin action ([`PluginCall::tools`](super::PluginCall::tools)).
///
/// Sync actions run right away on the agent's state (on a draft, committed only when the action
/// succeeds), as an AI strategy runs a sync tool; the directives they return go out before the
/// plugin action's own. Async actions need the host: [`start`](PluginTools::start) hands one
/// to it, and its completion comes back to the plugin
/// ([`Plugin::tool_completed`](super::Plugin::tool_completed)).
pub trait PluginTools: fmt::Debug {
    /// Every action the agent has, with whether it is async.
    fn list(&self) -> Vec<(ActionSpec, bool)>;
    /// Runs the sync action `name` with `arguments` (checked against its schema first): its
    /// reply, or what went wrong, as a model should hear it. An async action is an error here.
    fn run(&self, name: &str, arguments: Value) -> Result<Option<Value>, String>;
    /// Starts action `name` with `arguments` (checked first): a sync action runs now, as with
    /// [`run`](PluginTools::run); an async one goes to the host as a `RunInstruction` with
    /// instruction id `id`, and the plugin whose [`awaits_tool`](super::Plugin::awaits_tool)
    /// claims `id` gets its result.
    fn start(&self, id: &str, name: &str, arguments: Value) -> Result<ToolRun, String> {
        let _ = id;
        self.run(name, arguments).map(ToolRun::Done)
    }
}

/// What [`PluginTools::start`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolRun {
    /// A sync action ran: its reply.
    Done(Option<Value>),
    /// An async action went to the host; its result comes back later.
    Started,
}

/// The result of an async tool a plugin started ([`PluginTools::start`]), when its completion
/// comes back: the host ran the action, and its state changes and directives have been
/// applied to the agent.
#[derive(Debug, Clone, Copy)]
pub struct ToolDone<'a> {
    /// The instruction id the plugin gave it.
    pub id: &'a str,
    /// The action.
    pub name: &'a str,
    /// Its reply (`None`: it replied nothing), or what went wrong, as a model should hear it.
    pub result: &'a Result<Option<Value>, String>,
    /// The agent's id.
    pub agent_id: &'a str,
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
        let (entry, arguments) = checked::<S>(name, arguments)?;
        let ActionFn::Sync(run) = entry.run else {
            return Err(format!(
                "tool `{name}` is async; start it with `PluginTools::start`, the host runs it"
            ));
        };
        let mut state = self.state.borrow_mut();
        let (reply, directives) = run_sync_tool(&mut **state, name, run, arguments)?;
        self.out.borrow_mut().extend(directives);
        Ok(reply)
    }

    fn start(&self, id: &str, name: &str, arguments: Value) -> Result<ToolRun, String> {
        let (entry, arguments) = checked::<S>(name, arguments)?;
        match entry.run {
            ActionFn::Sync(run) => {
                let mut state = self.state.borrow_mut();
                let (reply, directives) = run_sync_tool(&mut **state, name, run, arguments)?;
                self.out.borrow_mut().extend(directives);
                Ok(ToolRun::Done(reply))
            }
            ActionFn::Async(_) => {
                self.out.borrow_mut().push(Directive::RunInstruction {
                    instruction: Instruction::new(name, arguments).with_id(id),
                    exec: entry.exec,
                });
                Ok(ToolRun::Started)
            }
        }
    }
}

/// The action `name` and its arguments, checked against its schema.
fn checked<S: AgentSpec>(
    name: &str,
    arguments: Value,
) -> Result<(&'static ActionEntry<S>, Value), String> {
    let entry =
        S::action(name).ok_or_else(|| unknown_tool(name, S::actions().iter().map(|a| a.name)))?;
    let arguments = checked_arguments(name, &entry.spec().parameters, arguments)?;
    Ok((entry, arguments))
}

/// What a model hears when it calls a tool that is not among `known`.
pub(crate) fn unknown_tool<'a>(name: &str, known: impl Iterator<Item = &'a str>) -> String {
    let known: Vec<String> = known.map(|t| format!("`{t}`")).collect();
    format!(
        "unknown tool `{}`; the tools are: {}",
        crate::quote::clip(name),
        if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        }
    )
}

/// A tool call's arguments as a JSON object (none: `{}`), checked against `parameters`; what
/// is wrong, as a model should hear it.
pub(crate) fn checked_arguments(
    name: &str,
    parameters: &Value,
    arguments: Value,
) -> Result<Value, String> {
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
    let problems = schema::validate(parameters, &arguments);
    if !problems.is_empty() {
        return Err(format!(
            "invalid arguments for `{name}`: {}",
            problems.join("; ")
        ));
    }
    Ok(arguments)
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
