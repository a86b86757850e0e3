//! A hand-written agent (no macros) for the runtime's own tests.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::action::{Action, ActionEntry, AsyncAction, NoParams, Outcome, SyncAction};
use crate::agent::AgentSpec;
use crate::error::ActionError;
use crate::route::{RouteSpec, RouteTarget};
use crate::strategy::Direct;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Counter {
    pub(crate) value: i64,
    pub(crate) log: Vec<String>,
    pub(crate) meta: serde_json::Value,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct By {
    pub(crate) by: i64,
}

/// Adds `by`; fails (after mutating) when the result would be negative.
pub(crate) struct Add;

impl Action<Counter> for Add {
    type Params = By;
    const NAME: &'static str = "add";
    const DESCRIPTION: &'static str = "adds to the counter";
    const ENTRY: ActionEntry<Counter> = ActionEntry::sync::<Self>();
}

impl SyncAction<Counter> for Add {
    fn run(state: &mut Counter, params: By) -> Result<Outcome, ActionError> {
        state.value += params.by;
        state.log.push(format!("add {}", params.by));
        if state.value < 0 {
            return Err(ActionError::new(format!(
                "counter would go to {}",
                state.value
            )));
        }
        Ok(Outcome::new())
    }
}

/// Mutates, then panics.
pub(crate) struct Explode;

impl Action<Counter> for Explode {
    type Params = NoParams;
    const NAME: &'static str = "explode";
    const DESCRIPTION: &'static str = "panics";
    const ENTRY: ActionEntry<Counter> = ActionEntry::sync::<Self>();
}

impl SyncAction<Counter> for Explode {
    fn run(state: &mut Counter, _: NoParams) -> Result<Outcome, ActionError> {
        state.value = 999;
        panic!("explode was asked to panic")
    }
}

/// Merges `{"meta": {...}}` into the state through a state op.
pub(crate) struct Tag;

impl Action<Counter> for Tag {
    type Params = serde_json::Value;
    const NAME: &'static str = "tag";
    const DESCRIPTION: &'static str = "merges metadata";
    const ENTRY: ActionEntry<Counter> = ActionEntry::sync::<Self>();
}

impl SyncAction<Counter> for Tag {
    fn run(_: &mut Counter, params: serde_json::Value) -> Result<Outcome, ActionError> {
        Ok(Outcome::new().set(json!({ "meta": params })))
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Fetch {
    /// Names the call, for counting attempts across tests running in parallel.
    pub(crate) key: String,
    /// How many attempts fail before one succeeds.
    #[serde(default)]
    pub(crate) failures: u32,
    /// Whether those failures are retryable.
    #[serde(default)]
    pub(crate) retryable: bool,
    /// How long each attempt takes, in ms.
    #[serde(default)]
    pub(crate) sleep_ms: u64,
}

static ATTEMPTS: Mutex<Option<HashMap<String, u32>>> = Mutex::new(None);

/// How many times `fetch` was attempted for `key`.
pub(crate) fn attempts(key: &str) -> u32 {
    ATTEMPTS
        .lock()
        .unwrap()
        .as_ref()
        .and_then(|m| m.get(key).copied())
        .unwrap_or(0)
}

/// An async action: sleeps, fails `failures` times, then sets `value` to the attempt count.
pub(crate) struct FetchAction;

impl Action<Counter> for FetchAction {
    type Params = Fetch;
    const NAME: &'static str = "fetch";
    const DESCRIPTION: &'static str = "fetches a value";
    const ENTRY: ActionEntry<Counter> = ActionEntry::asynchronous::<Self>();
}

impl AsyncAction<Counter> for FetchAction {
    fn run(_: Counter, params: Fetch) -> BoxFuture<'static, Result<Outcome, ActionError>> {
        Box::pin(async move {
            let attempt = {
                let mut guard = ATTEMPTS.lock().unwrap();
                let count = guard
                    .get_or_insert_with(HashMap::new)
                    .entry(params.key.clone())
                    .or_default();
                *count += 1;
                *count
            };
            tokio::time::sleep(Duration::from_millis(params.sleep_ms)).await;
            if attempt <= params.failures {
                let error = ActionError::new(format!("attempt {attempt} failed"));
                return Err(error.with_retryable(params.retryable));
            }
            Ok(Outcome::new().set(json!({ "value": attempt })))
        })
    }
}

impl AgentSpec for Counter {
    const NAME: &'static str = "Counter";
    type Strategy = Direct;

    fn actions() -> &'static [ActionEntry<Self>] {
        static ACTIONS: [ActionEntry<Counter>; 4] =
            [Add::ENTRY, Explode::ENTRY, Tag::ENTRY, FetchAction::ENTRY];
        &ACTIONS
    }

    fn routes() -> &'static [RouteSpec] {
        static ROUTES: [RouteSpec; 1] = [RouteSpec::new(
            "counter.add",
            RouteTarget::Action(std::borrow::Cow::Borrowed("add")),
            0,
        )];
        &ROUTES
    }
}
