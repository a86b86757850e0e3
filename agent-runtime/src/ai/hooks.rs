//! Step hooks (ProviderProtocol's `AgentStrategy`): called by the AI strategies at fixed points
//! of each step. Within a step the order is start, reason, act, observe, end, then
//! `stop_condition`; `on_complete`, `on_error` or `on_cancel` end the request. Steps are
//! 1-based. Every hook sees the agent's state, read-only, as it is at that point (after the
//! step's sync tools ran, for `on_observe`).

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use crate::error::ActionError;

use super::model::{LlmResponse, ToolCall};
use super::state::{AiFailure, AiResult, AiRun, ToolResult};

/// Where a hook is called from: the request and the 1-based step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step<'a> {
    /// The request's id.
    pub request_id: &'a str,
    /// The step, from 1.
    pub number: u32,
}

/// Hooks into an AI strategy's steps. Every method has a default that does nothing.
///
/// Hooks run inside `cmd`, so they must not block or perform I/O; they observe, and
/// `stop_condition`/`on_error` steer.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not step hooks for agents with state `{S}`",
    label = "`hooks = ...` names a `static` whose type implements `StepHooks<{S}>`",
    note = "write `static HOOKS: MyHooks = MyHooks;` and `impl StepHooks<{S}> for MyHooks {{ ... }}`, then `hooks = HOOKS`"
)]
pub trait StepHooks<S>: Send + Sync {
    /// Checked after each step (after `on_step_end`); `true` ends the request with the reason
    /// `stop_condition`.
    fn stop_condition(&self, state: &S, run: &AiRun) -> bool {
        let _ = (state, run);
        false
    }
    /// A step begins (its LLM call is about to be made).
    fn on_step_start(&self, state: &S, step: Step<'_>) {
        let _ = (state, step);
    }
    /// The model answered.
    fn on_reason(&self, state: &S, step: Step<'_>, response: &LlmResponse) {
        let _ = (state, step, response);
    }
    /// The model asked for these tool calls.
    fn on_act(&self, state: &S, step: Step<'_>, calls: &[ToolCall]) {
        let _ = (state, step, calls);
    }
    /// Every tool call of the step has its result, in call order.
    fn on_observe(&self, state: &S, step: Step<'_>, results: &[ToolResult]) {
        let _ = (state, step, results);
    }
    /// A step ended.
    fn on_step_end(&self, state: &S, step: Step<'_>) {
        let _ = (state, step);
    }
    /// The request ended with a result (including a fallback from `on_error`).
    fn on_complete(&self, state: &S, result: &AiResult) {
        let _ = (state, result);
    }
    /// The request failed. Return a fallback answer to complete it with that answer instead.
    fn on_error(&self, state: &S, failure: &AiFailure) -> Option<String> {
        let _ = (state, failure);
        None
    }
    /// The request was cancelled (`ai.cancel`) during `step` (0 before its first model call
    /// was made); the host aborts its model call and running tools.
    fn on_cancel(&self, state: &S, step: Step<'_>) {
        let _ = (state, step);
    }
}

/// No hooks.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl<S> StepHooks<S> for NoHooks {}

/// Hooks made of functions (closures that capture nothing), buildable in a `static`:
///
/// ```
/// use agent_runtime::ai::{AiRun, Hooks};
/// # #[derive(Debug)] struct Helpdesk { tickets: Vec<String> }
/// static HOOKS: Hooks<Helpdesk> = Hooks::new()
///     .stop_condition(|desk: &Helpdesk, _run: &AiRun| desk.tickets.len() >= 3)
///     .on_cancel(|desk, step| eprintln!("cancelled at step {} with {} tickets", step.number, desk.tickets.len()))
///     .on_error(|_desk, _failure| Some("Sorry, I cannot answer right now.".to_string()));
/// ```
pub struct Hooks<S> {
    stop_condition: Option<fn(&S, &AiRun) -> bool>,
    on_step_start: Option<fn(&S, Step<'_>)>,
    on_reason: Option<fn(&S, Step<'_>, &LlmResponse)>,
    on_act: Option<fn(&S, Step<'_>, &[ToolCall])>,
    on_observe: Option<fn(&S, Step<'_>, &[ToolResult])>,
    on_step_end: Option<fn(&S, Step<'_>)>,
    on_complete: Option<fn(&S, &AiResult)>,
    on_error: Option<fn(&S, &AiFailure) -> Option<String>>,
    on_cancel: Option<fn(&S, Step<'_>)>,
}

impl<S> std::fmt::Debug for Hooks<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks").finish_non_exhaustive()
    }
}

impl<S> Default for Hooks<S> {
    fn default() -> Self {
        Hooks::new()
    }
}

impl<S> Hooks<S> {
    /// No hooks yet.
    pub const fn new() -> Self {
        Hooks {
            stop_condition: None,
            on_step_start: None,
            on_reason: None,
            on_act: None,
            on_observe: None,
            on_step_end: None,
            on_complete: None,
            on_error: None,
            on_cancel: None,
        }
    }

    /// Sets [`StepHooks::stop_condition`].
    #[must_use]
    pub const fn stop_condition(mut self, f: fn(&S, &AiRun) -> bool) -> Self {
        self.stop_condition = Some(f);
        self
    }

    /// Sets [`StepHooks::on_step_start`].
    #[must_use]
    pub const fn on_step_start(mut self, f: fn(&S, Step<'_>)) -> Self {
        self.on_step_start = Some(f);
        self
    }

    /// Sets [`StepHooks::on_reason`].
    #[must_use]
    pub const fn on_reason(mut self, f: fn(&S, Step<'_>, &LlmResponse)) -> Self {
        self.on_reason = Some(f);
        self
    }

    /// Sets [`StepHooks::on_act`].
    #[must_use]
    pub const fn on_act(mut self, f: fn(&S, Step<'_>, &[ToolCall])) -> Self {
        self.on_act = Some(f);
        self
    }

    /// Sets [`StepHooks::on_observe`].
    #[must_use]
    pub const fn on_observe(mut self, f: fn(&S, Step<'_>, &[ToolResult])) -> Self {
        self.on_observe = Some(f);
        self
    }

    /// Sets [`StepHooks::on_step_end`].
    #[must_use]
    pub const fn on_step_end(mut self, f: fn(&S, Step<'_>)) -> Self {
        self.on_step_end = Some(f);
        self
    }

    /// Sets [`StepHooks::on_complete`].
    #[must_use]
    pub const fn on_complete(mut self, f: fn(&S, &AiResult)) -> Self {
        self.on_complete = Some(f);
        self
    }

    /// Sets [`StepHooks::on_error`].
    #[must_use]
    pub const fn on_error(mut self, f: fn(&S, &AiFailure) -> Option<String>) -> Self {
        self.on_error = Some(f);
        self
    }

    /// Sets [`StepHooks::on_cancel`].
    #[must_use]
    pub const fn on_cancel(mut self, f: fn(&S, Step<'_>)) -> Self {
        self.on_cancel = Some(f);
        self
    }
}

impl<S> StepHooks<S> for Hooks<S> {
    fn stop_condition(&self, state: &S, run: &AiRun) -> bool {
        self.stop_condition.is_some_and(|f| f(state, run))
    }
    fn on_step_start(&self, state: &S, step: Step<'_>) {
        if let Some(f) = self.on_step_start {
            f(state, step)
        }
    }
    fn on_reason(&self, state: &S, step: Step<'_>, response: &LlmResponse) {
        if let Some(f) = self.on_reason {
            f(state, step, response)
        }
    }
    fn on_act(&self, state: &S, step: Step<'_>, calls: &[ToolCall]) {
        if let Some(f) = self.on_act {
            f(state, step, calls)
        }
    }
    fn on_observe(&self, state: &S, step: Step<'_>, results: &[ToolResult]) {
        if let Some(f) = self.on_observe {
            f(state, step, results)
        }
    }
    fn on_step_end(&self, state: &S, step: Step<'_>) {
        if let Some(f) = self.on_step_end {
            f(state, step)
        }
    }
    fn on_complete(&self, state: &S, result: &AiResult) {
        if let Some(f) = self.on_complete {
            f(state, result)
        }
    }
    fn on_error(&self, state: &S, failure: &AiFailure) -> Option<String> {
        self.on_error.and_then(|f| f(state, failure))
    }
    fn on_cancel(&self, state: &S, step: Step<'_>) {
        if let Some(f) = self.on_cancel {
            f(state, step)
        }
    }
}

/// A step hook's panic, carried out of the strategy so that the caller's error
/// ([`AgentError::Hook`](crate::AgentError::Hook)) names the hook instead of the strategy.
pub(crate) struct HookPanic {
    /// The hook's method name (`on_step_start`, ...).
    pub(crate) hook: &'static str,
    /// The panic, as an error of kind `Panicked`.
    pub(crate) error: ActionError,
}

/// Calls `f`; a panic in it unwinds on as a [`HookPanic`] naming `hook`. The agent's own
/// panic isolation then puts the agent back as it was before the call.
fn guard<R>(hook: &'static str, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => value,
        Err(payload) => resume_unwind(Box::new(HookPanic {
            hook,
            error: ActionError::panicked(hook, payload.as_ref()),
        })),
    }
}

/// The step hooks as the strategies call them: each call is [`guard`]ed.
pub(crate) struct GuardedHooks<S: 'static>(pub(crate) &'static dyn StepHooks<S>);

impl<S: 'static> GuardedHooks<S> {
    pub(crate) fn stop_condition(&self, state: &S, run: &AiRun) -> bool {
        guard("stop_condition", || self.0.stop_condition(state, run))
    }
    pub(crate) fn on_step_start(&self, state: &S, step: Step<'_>) {
        guard("on_step_start", || self.0.on_step_start(state, step));
    }
    pub(crate) fn on_reason(&self, state: &S, step: Step<'_>, response: &LlmResponse) {
        guard("on_reason", || self.0.on_reason(state, step, response));
    }
    pub(crate) fn on_act(&self, state: &S, step: Step<'_>, calls: &[ToolCall]) {
        guard("on_act", || self.0.on_act(state, step, calls));
    }
    pub(crate) fn on_observe(&self, state: &S, step: Step<'_>, results: &[ToolResult]) {
        guard("on_observe", || self.0.on_observe(state, step, results));
    }
    pub(crate) fn on_step_end(&self, state: &S, step: Step<'_>) {
        guard("on_step_end", || self.0.on_step_end(state, step));
    }
    pub(crate) fn on_complete(&self, state: &S, result: &AiResult) {
        guard("on_complete", || self.0.on_complete(state, result));
    }
    pub(crate) fn on_error(&self, state: &S, failure: &AiFailure) -> Option<String> {
        guard("on_error", || self.0.on_error(state, failure))
    }
    pub(crate) fn on_cancel(&self, state: &S, step: Step<'_>) {
        guard("on_cancel", || self.0.on_cancel(state, step));
    }
}
