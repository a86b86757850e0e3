//! Quota: a rolling budget of requests and tokens per scope.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{QUOTA_EXCEEDED, is_request, request_id, rewrite_to_request_error};
use crate::ai::USAGE;
use crate::directive::Directive;
use crate::error::ActionError;
use crate::plugin::{Flow, Plugin, PluginCall, PluginRoute};
use crate::signal::Signal;

/// The signal `quota.status` and `quota.reset` answer with.
pub const QUOTA_REPORT: &str = "quota.report";

/// Counts requests (`chat.*`, `planning.*`, `ai.query`, `ai.*.query`, `reasoning.*.run`) and
/// the tokens `ai.usage` reports, per scope (the `scope` string in a signal's data, else
/// `"default"`), over a rolling window. A request that would go over budget is rewritten into
/// `ai.request.error` with reason `quota_exceeded` and its request id. Time is the signal's own
/// `time` (the host's clock when it has none), so a replayed run counts the same.
///
/// Signals: `quota.status` (data `{"scope"?}`) and `quota.reset` (`{"scope"?}`: that scope, or
/// every scope) answer with `quota.report`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Quota {
    /// Requests per window and scope; 0 means no limit (default 100).
    pub max_requests: u64,
    /// Tokens per window and scope; 0 means no limit (default 0).
    pub max_tokens: u64,
    /// The window, in milliseconds (default one hour).
    pub window_ms: u64,
}

impl Default for Quota {
    fn default() -> Self {
        Quota {
            max_requests: 100,
            max_tokens: 0,
            window_ms: 3_600_000,
        }
    }
}

/// Quota's state: the usage of each scope inside the window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuotaState {
    /// Scope -> its usage.
    pub scopes: BTreeMap<String, ScopeUsage>,
}

/// One scope's requests and tokens, as (time in ms, amount), oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeUsage {
    /// When each request arrived.
    pub requests: VecDeque<i64>,
    /// When tokens were used, and how many.
    pub tokens: VecDeque<(i64, u64)>,
}

impl ScopeUsage {
    fn prune(&mut self, now: i64, window: i64) {
        let start = now.saturating_sub(window);
        while self.requests.front().is_some_and(|t| *t <= start) {
            self.requests.pop_front();
        }
        while self.tokens.front().is_some_and(|(t, _)| *t <= start) {
            self.tokens.pop_front();
        }
    }

    /// Tokens used inside the window (as of the last prune).
    pub fn token_total(&self) -> u64 {
        self.tokens.iter().map(|(_, n)| n).sum()
    }
}

fn now_ms(signal: &Signal) -> i64 {
    signal
        .time
        .unwrap_or_else(crate::journal::context::now)
        .timestamp_millis()
}

fn scope_of(data: &Value) -> String {
    data.get("scope")
        .and_then(Value::as_str)
        .unwrap_or("default")
        .to_string()
}

impl Quota {
    fn window(&self) -> i64 {
        i64::try_from(self.window_ms).unwrap_or(i64::MAX)
    }

    fn report(&self, scope: &str, usage: &ScopeUsage) -> Value {
        let requests = usage.requests.len() as u64;
        let tokens = usage.token_total();
        json!({
            "scope": scope,
            "requests": requests,
            "tokens": tokens,
            "max_requests": self.max_requests,
            "max_tokens": self.max_tokens,
            "window_ms": self.window_ms,
            "remaining_requests": (self.max_requests > 0).then(|| self.max_requests.saturating_sub(requests)),
            "remaining_tokens": (self.max_tokens > 0).then(|| self.max_tokens.saturating_sub(tokens)),
        })
    }

    fn count_usage(&self, state: &mut QuotaState, signal: &Signal) {
        let usage = signal.data.get("usage");
        let tokens = usage
            .and_then(|u| u.get("total_tokens"))
            .and_then(Value::as_u64)
            .unwrap_or(0);
        if tokens > 0 {
            let now = now_ms(signal);
            let scope = state.scopes.entry(scope_of(&signal.data)).or_default();
            scope.prune(now, self.window());
            scope.tokens.push_back((now, tokens));
        }
    }
}

impl Plugin for Quota {
    const NAME: &'static str = "Quota";
    const STATE_KEY: &'static str = "quota";
    type State = QuotaState;

    fn mount(&self) -> QuotaState {
        QuotaState::default()
    }

    fn routes(&self) -> Vec<PluginRoute> {
        vec![
            PluginRoute::new("quota.status", "status"),
            PluginRoute::new("quota.reset", "reset"),
        ]
    }

    fn before_route(&self, state: &mut QuotaState, signal: &mut Cow<'_, Signal>) -> Flow {
        if signal.signal_type == USAGE {
            self.count_usage(state, signal);
            return Flow::Continue;
        }
        if !is_request(&signal.signal_type) {
            return Flow::Continue;
        }
        let now = now_ms(signal);
        let scope_name = scope_of(&signal.data);
        let scope = state.scopes.entry(scope_name.clone()).or_default();
        scope.prune(now, self.window());
        let over_requests =
            self.max_requests > 0 && scope.requests.len() as u64 >= self.max_requests;
        let over_tokens = self.max_tokens > 0 && scope.token_total() >= self.max_tokens;
        if over_requests || over_tokens {
            let what = if over_requests {
                format!("{} requests", self.max_requests)
            } else {
                format!("{} tokens", self.max_tokens)
            };
            let message = format!(
                "request `{}` refused: scope `{scope_name}` used its {what} of the last {} ms",
                request_id(signal),
                self.window_ms
            );
            rewrite_to_request_error(signal.to_mut(), QUOTA_EXCEEDED, message);
            return Flow::Continue;
        }
        scope.requests.push_back(now);
        Flow::Continue
    }

    fn after_emit(&self, state: &mut QuotaState, signal: &mut Signal) {
        if signal.signal_type == USAGE {
            self.count_usage(state, signal);
        }
    }

    fn run(
        &self,
        state: &mut QuotaState,
        call: PluginCall<'_>,
    ) -> Result<Vec<Directive>, ActionError> {
        let scope = call
            .params()
            .get("scope")
            .and_then(Value::as_str)
            .map(str::to_string);
        let now = now_ms(call.signal);
        match call.action {
            "reset" => match &scope {
                Some(scope) => {
                    state.scopes.remove(scope);
                }
                None => state.scopes.clear(),
            },
            "status" => {}
            other => return Err(ActionError::new(format!("Quota has no action `{other}`"))),
        }
        let scope = scope.unwrap_or_else(|| "default".to_string());
        let mut usage = state.scopes.get(&scope).cloned().unwrap_or_default();
        usage.prune(now, self.window());
        let data = self.report(&scope, &usage);
        Ok(vec![Directive::Emit(Signal::with_id(
            format!("{}/report", call.instruction.id),
            QUOTA_REPORT,
            data,
        ))])
    }
}
