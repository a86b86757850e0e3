//! Actions: units of work with typed, schema-described parameters.
//!
//! `#[action]` turns a function into a marker type implementing [`Action`] plus [`SyncAction`] or
//! [`AsyncAction`]; agents list those markers and reach them by name through an [`ActionEntry`]
//! table, which is all the dynamic dispatch there is (one `match` on the name in generated code).

use std::borrow::Cow;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use futures::future::BoxFuture;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::directive::Directive;
use crate::error::{ActionError, IntoActionError};
use crate::instruction::ExecOptions;
use crate::signal::Signal;
use crate::state_op::{StateOp, StatePath, apply_ops};

/// An action that agents with state `S` can run.
///
/// Implemented by `#[action]`; implement it by hand only for actions the macro cannot express.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an action for agents with state `{S}`",
    label = "not an action of `{S}`",
    note = "an action is a function marked `#[action]` whose first parameter is `&mut {S}` or `&{S}`, or that takes no state"
)]
pub trait Action<S>: 'static {
    /// The parameters, deserialized from the instruction's JSON and described to tools by schema.
    type Params: DeserializeOwned + JsonSchema + Send + 'static;
    /// The action's name as routes, instructions and LLM tools refer to it.
    const NAME: &'static str;
    /// What the action does, for people and language models.
    const DESCRIPTION: &'static str;
    /// How the host runs it when it is async.
    const EXEC: ExecOptions = ExecOptions::DEFAULT;
    /// Whether the action takes the state by `&mut`, so that running it may change the state
    /// directly. `#[action]` sets it to `false` for functions taking `&S` or no state: the
    /// strategies then keep no copy of the state to restore if it fails (its state operations,
    /// if any, are applied after a copy is taken).
    const WRITES_STATE: bool = true;
    /// Whether a run may end in progress ([`Outcome::in_progress`], or a tree's
    /// `Status::Running`), so that a behaviour tree leaf of the action must remember it runs.
    /// `#[action]` sets it to `false` for sync functions returning `()` or `Result<(), E>`:
    /// their leaves then store no progress flag on each tick. With `false`, a sync run that
    /// reports itself in progress anyway counts as finished. Async actions ignore it.
    const MAY_BE_IN_PROGRESS: bool = true;
    /// The entry agents put in their action tables.
    const ENTRY: ActionEntry<S>;
    /// What to do when a behaviour tree halts this action's leaf while it runs
    /// (`#[action(on_halt = reset)]`), BehaviorTree.CPP's `onHalted`: an action that keeps
    /// progress in the state resets it here. See [`HaltHook`].
    const ON_HALT: Option<HaltHook<S>> = None;

    /// The parameters of an action that takes none, so that running it decodes nothing
    /// (`#[action]` on a function without a parameters argument returns `Some`; decoding
    /// [`NoParams`] accepts any value, so skipping it changes no result). `None`: decode them.
    #[inline(always)]
    fn without_params() -> Option<Self::Params> {
        None
    }
}

/// An action's halt hook: a function of the state called exactly once each time a behaviour
/// tree halts a running leaf of the action (a reactive parent's condition turned false, a
/// `timeout` expired, a parallel finished, the tree was restarted). It is not called when the
/// action finishes by itself, nor for a leaf that is not running.
///
/// It runs like a sync action: on a state with a copy kept, so if it panics the state is put
/// back and the tree reports [`AgentError::Hook`](crate::AgentError::Hook) naming it; the halt
/// itself goes ahead.
pub struct HaltHook<S> {
    /// The hook's name, for errors.
    pub name: &'static str,
    /// The hook.
    pub run: fn(&mut S),
}

impl<S> HaltHook<S> {
    /// The hook `run`, called `name` in errors.
    pub const fn new(name: &'static str, run: fn(&mut S)) -> Self {
        HaltHook { name, run }
    }
}

impl<S> Clone for HaltHook<S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for HaltHook<S> {}

impl<S> fmt::Debug for HaltHook<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("HaltHook").field(&self.name).finish()
    }
}

/// A synchronous action: a fast state transformation with no I/O, run inside `cmd`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a synchronous action for agents with state `{S}`",
    label = "not a synchronous action of `{S}`",
    note = "FSM rows and `enter`/`exit` run their action inside `cmd`, so it must be a sync `#[action]` taking `&mut {S}`, `&{S}` or no state; to wait for I/O, start an async action whose result arrives as an event"
)]
pub trait SyncAction<S>: Action<S> {
    /// Runs the action on a draft of the state; the draft is kept only when this returns `Ok`.
    fn run(state: &mut S, params: Self::Params) -> Result<Outcome, ActionError>;
}

/// An asynchronous action (I/O, an LLM, a database): never run inside `cmd`, which returns a
/// `RunInstruction` directive instead; the host runs it and feeds the [`Outcome`] back.
pub trait AsyncAction<S>: Action<S> {
    /// Runs the action against a snapshot of the state.
    fn run(state: S, params: Self::Params) -> BoxFuture<'static, Result<Outcome, ActionError>>;
}

/// What a successful action produces besides direct mutation: state operations and directives.
///
/// ```
/// use agent_runtime::{Outcome, Signal};
/// use serde_json::json;
/// let out = Outcome::new()
///     .set(json!({"status": "paid"}))
///     .emit(Signal::new("order.paid", json!({})));
/// assert_eq!(out.ops.len(), 1);
/// assert_eq!(out.directives.len(), 1);
/// ```
#[derive(Debug, Clone, Default, Serialize)]
#[must_use]
pub struct Outcome {
    /// State operations, applied in order after the action returns.
    pub ops: Vec<StateOp>,
    /// Effects for the host.
    pub directives: Vec<Directive>,
    /// What the action answers when a language model called it as a tool (its observation).
    /// Boxed: outcomes travel inside every async completion, most without a reply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<Box<Value>>,
    /// The action has started work it has not finished: a behaviour tree keeps its leaf
    /// `Running` and runs the action again on the next tick. Other strategies ignore it.
    #[serde(skip_serializing_if = "is_false")]
    pub in_progress: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Outcome {
    /// No operations, no directives.
    #[inline]
    pub fn new() -> Self {
        Outcome::default()
    }

    /// Marks the work unfinished (see [`Outcome::in_progress`]): a behaviour-tree leaf stays
    /// `Running`; the state changes and directives still apply.
    #[inline]
    pub fn in_progress(mut self) -> Self {
        self.in_progress = true;
        self
    }

    /// Adds an operation.
    pub fn op(mut self, op: StateOp) -> Self {
        self.ops.push(op);
        self
    }

    /// Deep-merges `value` into the state.
    pub fn set(self, value: Value) -> Self {
        self.op(StateOp::Set { value })
    }

    /// Replaces the whole state.
    pub fn replace(self, value: Value) -> Self {
        self.op(StateOp::Replace { value })
    }

    /// Removes top-level keys.
    pub fn delete_keys<K: Into<String>>(self, keys: impl IntoIterator<Item = K>) -> Self {
        self.op(StateOp::DeleteKeys {
            keys: keys.into_iter().map(Into::into).collect(),
        })
    }

    /// Sets the value at a dotted path.
    pub fn set_path(self, path: impl Into<StatePath>, value: Value) -> Self {
        self.op(StateOp::SetPath {
            path: path.into(),
            value,
        })
    }

    /// Removes the value at a dotted path.
    pub fn delete_path(self, path: impl Into<StatePath>) -> Self {
        self.op(StateOp::DeletePath { path: path.into() })
    }

    /// Adds a directive.
    pub fn directive(mut self, directive: Directive) -> Self {
        self.directives.push(directive);
        self
    }

    /// Emits a signal.
    pub fn emit(self, signal: Signal) -> Self {
        self.directive(Directive::Emit(signal))
    }

    /// Sets the reply a language model sees when it called this action as a tool.
    pub fn reply(mut self, reply: Value) -> Self {
        self.reply = Some(Box::new(reply));
        self
    }

    /// Asks the host to deliver `signal` back to this agent after `delay`.
    pub fn schedule(self, delay: Duration, signal: Signal) -> Self {
        self.directive(Directive::Schedule { delay, signal })
    }
}

/// What an action function may return: `()`, [`Outcome`], or either inside a `Result` whose error
/// converts with [`IntoActionError`].
#[diagnostic::on_unimplemented(
    message = "an action cannot return `{Self}`",
    label = "returned here",
    note = "an action returns `()`, `Outcome`, `Result<(), E>` or `Result<Outcome, E>` where `E: std::error::Error`, or in a behaviour tree `bt::Status` or `Result<bt::Status, E>`; put results in the state or in `Outcome` directives"
)]
pub trait IntoOutcome {
    /// Performs the conversion.
    fn into_outcome(self) -> Result<Outcome, ActionError>;
}

impl IntoOutcome for () {
    #[inline]
    fn into_outcome(self) -> Result<Outcome, ActionError> {
        Ok(Outcome::new())
    }
}

impl IntoOutcome for Outcome {
    #[inline]
    fn into_outcome(self) -> Result<Outcome, ActionError> {
        Ok(self)
    }
}

impl<E: IntoActionError> IntoOutcome for Result<(), E> {
    #[inline]
    fn into_outcome(self) -> Result<Outcome, ActionError> {
        self.map(|()| Outcome::new())
            .map_err(IntoActionError::into_action_error)
    }
}

impl<E: IntoActionError> IntoOutcome for Result<Outcome, E> {
    #[inline]
    fn into_outcome(self) -> Result<Outcome, ActionError> {
        self.map_err(IntoActionError::into_action_error)
    }
}

/// The parameters of an action that takes none. Accepts (and ignores) any JSON, so such an action
/// can sit behind a route whose signals carry data; its schema is the empty closed object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct NoParams {}

impl<'de> Deserialize<'de> for NoParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| NoParams {})
    }
}

impl JsonSchema for NoParams {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "NoParams".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "object", "properties": {}, "additionalProperties": false})
    }
}

/// An action's description for tools and language models.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionSpec {
    /// The action's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON schema of its parameters; every object is closed (`additionalProperties: false`).
    pub parameters: Value,
}

/// How an [`ActionEntry`] runs its action, with parameters still as JSON.
pub enum ActionFn<S> {
    /// Runs inside `cmd`.
    Sync(fn(&mut S, Value) -> Result<Outcome, ActionError>),
    /// Runs in the host, outside `cmd`.
    Async(fn(S, Value) -> BoxFuture<'static, Result<Outcome, ActionError>>),
}

impl<S> Clone for ActionFn<S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for ActionFn<S> {}

/// A sync action run with a tree's constant arguments.
type ArgsRun<S> = fn(&mut S, crate::bt::Args) -> Result<Outcome, ActionError>;

/// One row of an agent's action table: name, description, schema and how to run it.
pub struct ActionEntry<S> {
    /// The action's name.
    pub name: &'static str,
    /// What it does.
    pub description: &'static str,
    /// How the host runs it when async.
    pub exec: ExecOptions,
    /// How to run it.
    pub run: ActionFn<S>,
    schema: fn() -> Value,
    run_args: Option<ArgsRun<S>>,
}

impl<S> Clone for ActionEntry<S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for ActionEntry<S> {}

impl<S> fmt::Debug for ActionEntry<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActionEntry")
            .field("name", &self.name)
            .field("async", &self.is_async())
            .field("exec", &self.exec)
            .finish_non_exhaustive()
    }
}

impl<S> ActionEntry<S> {
    /// Whether the action is async (run by the host rather than inside `cmd`).
    pub fn is_async(&self) -> bool {
        matches!(self.run, ActionFn::Async(_))
    }

    /// Runs a synchronous action with a tree's constant arguments, decoded straight into its
    /// parameter type (a behaviour tree runs the same leaf every tick, without JSON). `None` for
    /// an async action. Like [`ActionFn::Sync`], it mutates `state` directly: wrap it in a draft
    /// (see [`run_sync`]) to keep the state unchanged on failure.
    #[inline]
    pub fn run_sync_args(
        &self,
        state: &mut S,
        args: crate::bt::Args,
    ) -> Option<Result<Outcome, ActionError>> {
        self.run_args.map(|run| run(state, args))
    }

    /// The action's description for tools.
    pub fn spec(&self) -> ActionSpec {
        ActionSpec {
            name: self.name.to_string(),
            description: self.description.to_string(),
            parameters: (self.schema)(),
        }
    }
}

impl<S: 'static> ActionEntry<S> {
    /// The entry of a synchronous action.
    pub const fn sync<A: SyncAction<S>>() -> Self {
        ActionEntry {
            name: A::NAME,
            description: A::DESCRIPTION,
            exec: A::EXEC,
            run: ActionFn::Sync(run_sync_json::<S, A>),
            schema: closed_schema::<A::Params>,
            run_args: Some(run_sync_args::<S, A>),
        }
    }

    /// The entry of an asynchronous action.
    pub const fn asynchronous<A: AsyncAction<S>>() -> Self {
        ActionEntry {
            name: A::NAME,
            description: A::DESCRIPTION,
            exec: A::EXEC,
            run: ActionFn::Async(run_async_json::<S, A>),
            schema: closed_schema::<A::Params>,
            run_args: None,
        }
    }
}

fn run_sync_json<S, A: SyncAction<S>>(
    state: &mut S,
    params: Value,
) -> Result<Outcome, ActionError> {
    match A::without_params() {
        Some(none) => A::run(state, none),
        None => A::run(state, decode_params::<A::Params>(A::NAME, params)?),
    }
}

#[inline]
fn run_sync_args<S, A: SyncAction<S>>(
    state: &mut S,
    args: crate::bt::Args,
) -> Result<Outcome, ActionError> {
    match A::without_params() {
        Some(params) => A::run(state, params),
        None => A::run(state, args.decode::<A::Params>(A::NAME)?),
    }
}

fn run_async_json<S, A: AsyncAction<S>>(
    state: S,
    params: Value,
) -> BoxFuture<'static, Result<Outcome, ActionError>> {
    match decode_params::<A::Params>(A::NAME, params) {
        Ok(params) => A::run(state, params),
        Err(e) => Box::pin(std::future::ready(Err(e))),
    }
}

/// Decodes an action's parameters from JSON, strictly: the value must have the shape of the
/// closed schema the action advertises (see [`params`](crate::params)): an unknown field, at
/// any depth, or an array where an object is expected is [`ActionErrorKind::InvalidParams`]
/// naming where it is. `null` (a signal without data) is read as `{}` when the type does not
/// accept `null` itself, so actions whose fields are all optional work.
///
/// [`ActionErrorKind::InvalidParams`]: crate::ActionErrorKind::InvalidParams
pub fn decode_params<P: DeserializeOwned>(action: &str, params: Value) -> Result<P, ActionError> {
    decode_params_ref(action, &params)
}

/// [`decode_params`] from a borrowed value (a signal's data, an event's parameters), which
/// stays where it is.
pub fn decode_params_ref<P: DeserializeOwned>(
    action: &str,
    params: &Value,
) -> Result<P, ActionError> {
    match crate::params::decode::<P>(params) {
        Ok(p) => Ok(p),
        Err(first) if params.is_null() => {
            crate::params::decode::<P>(&Value::Object(Default::default()))
                .map_err(|_| ActionError::invalid_params(action, first))
        }
        Err(e) => Err(ActionError::invalid_params(action, e)),
    }
}

/// The JSON schema of `P` with every object closed (`additionalProperties: false`), as LLM tool
/// definitions require.
pub fn closed_schema<P: JsonSchema>() -> Value {
    let mut schema = schemars::SchemaGenerator::default()
        .into_root_schema_for::<P>()
        .to_value();
    close_objects(&mut schema);
    schema
}

fn close_objects(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            let is_object = map.get("type").is_some_and(|t| {
                t == "object"
                    || t.as_array()
                        .is_some_and(|a| a.iter().any(|t| t == "object"))
            }) || map.contains_key("properties");
            if is_object && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            for value in map.values_mut() {
                close_objects(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(close_objects),
        _ => {}
    }
}

/// Runs a synchronous action on a draft of `state` and commits the draft only on success.
///
/// A returned error, a panic, or a state operation that cannot be applied leaves `state` exactly
/// as it was. Returns the outcome's directives.
pub fn run_sync<S, F>(name: &str, state: &mut S, f: F) -> Result<Vec<Directive>, ActionError>
where
    S: Clone + Serialize + DeserializeOwned,
    F: FnOnce(&mut S) -> Result<Outcome, ActionError>,
{
    let mut draft = state.clone();
    // The draft is discarded when `f` unwinds, so no broken invariant can be observed afterwards.
    let outcome = catch_unwind(AssertUnwindSafe(|| f(&mut draft)))
        .map_err(|payload| ActionError::panicked(name, payload.as_ref()))??;
    apply_ops(&mut draft, &outcome.ops)?;
    *state = draft;
    Ok(outcome.directives)
}

/// Applies the outcome of an async action to `state`, all or nothing; returns its directives.
pub fn apply_outcome<S>(state: &mut S, outcome: Outcome) -> Result<Vec<Directive>, ActionError>
where
    S: Serialize + DeserializeOwned,
{
    apply_ops(state, &outcome.ops)?;
    Ok(outcome.directives)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Params {
        amount: f64,
        card: Card,
        #[serde(default)]
        tags: std::collections::BTreeMap<String, String>,
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Card {
        number: String,
    }

    #[test]
    fn schemas_are_closed_everywhere_but_maps() {
        let schema = closed_schema::<Params>();
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["$defs"]["Card"]["additionalProperties"], false);
        assert_eq!(
            schema["properties"]["tags"]["additionalProperties"],
            json!({"type": "string"}),
            "a map keeps its value schema"
        );
    }

    #[test]
    fn no_params_accepts_anything_and_describes_an_empty_object() {
        assert_eq!(
            decode_params::<NoParams>("a", json!({"x": 1})),
            Ok(NoParams {})
        );
        assert_eq!(decode_params::<NoParams>("a", Value::Null), Ok(NoParams {}));
        let schema = closed_schema::<NoParams>();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"], false);
    }

    #[test]
    fn null_params_read_as_an_empty_object() {
        #[derive(Debug, PartialEq, Deserialize)]
        struct Optional {
            note: Option<String>,
        }
        assert_eq!(
            decode_params::<Optional>("a", Value::Null),
            Ok(Optional { note: None })
        );
        let err = decode_params::<Params>("pay", Value::Null).unwrap_err();
        assert_eq!(err.kind(), crate::ActionErrorKind::InvalidParams);
        assert!(
            err.message().starts_with("invalid parameters for `pay`"),
            "{err}"
        );
    }

    #[test]
    fn run_sync_commits_only_on_success() {
        let mut state = vec![1];
        let dirs = run_sync("push", &mut state, |s| {
            s.push(2);
            Ok(Outcome::new())
        })
        .unwrap();
        assert!(dirs.is_empty());
        assert_eq!(state, vec![1, 2]);

        let err = run_sync("fail", &mut state, |s| {
            s.push(3);
            Err(ActionError::new("no"))
        })
        .unwrap_err();
        assert_eq!(err.message(), "no");
        assert_eq!(state, vec![1, 2]);

        let err = run_sync("explode", &mut state, |s| {
            s.push(4);
            panic!("kaboom")
        })
        .unwrap_err();
        assert_eq!(err.kind(), crate::ActionErrorKind::Panicked);
        assert_eq!(state, vec![1, 2]);
    }
}
