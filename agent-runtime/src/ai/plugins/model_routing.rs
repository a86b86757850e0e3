//! ModelRouting: which model alias serves which signal type.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::matches_one_star;
use crate::plugin::{Flow, Plugin};
use crate::signal::Signal;

/// Sets `model` in a signal's data from a table of signal type -> model alias. An exact key
/// beats a wildcard key (`*` matches one segment; among wildcards the one with more literal
/// segments wins, then the first in key order); a `model` already in the data is left alone.
///
/// ```
/// use agent_runtime::ai::plugins::ModelRouting;
/// let routing = ModelRouting::default()
///     .route("chat.*", "fast")
///     .route("chat.message", "capable");
/// assert_eq!(routing.model_for("chat.message"), Some("capable"));
/// assert_eq!(routing.model_for("chat.simple"), Some("fast"));
/// assert_eq!(routing.model_for("ai.query"), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelRouting {
    /// Signal type (or pattern) -> model alias.
    pub routes: BTreeMap<String, String>,
}

impl ModelRouting {
    /// Adds a route.
    #[must_use]
    pub fn route(mut self, pattern: impl Into<String>, alias: impl Into<String>) -> Self {
        self.routes.insert(pattern.into(), alias.into());
        self
    }

    /// The alias for `signal_type`, if a route names one.
    pub fn model_for(&self, signal_type: &str) -> Option<&str> {
        if let Some(alias) = self.routes.get(signal_type) {
            return Some(alias);
        }
        let literals = |p: &str| p.split('.').filter(|s| *s != "*").count();
        self.routes
            .iter()
            .filter(|(p, _)| p.contains('*') && matches_one_star(p, signal_type))
            // `max_by_key` keeps the last of equals: reverse so the first key wins a tie.
            .rev()
            .max_by_key(|(p, _)| literals(p))
            .map(|(_, alias)| alias.as_str())
    }
}

impl Plugin for ModelRouting {
    const NAME: &'static str = "ModelRouting";
    const STATE_KEY: &'static str = "model_routing";
    type State = ();

    fn mount(&self) {}

    fn before_route(&self, _: &mut (), signal: &mut Signal) -> Flow {
        if self.routes.is_empty() {
            return Flow::Continue;
        }
        let Some(alias) = self.model_for(&signal.signal_type) else {
            return Flow::Continue;
        };
        match &mut signal.data {
            Value::Object(map) if map.get("model").is_none_or(Value::is_null) => {
                map.insert("model".into(), Value::String(alias.to_string()));
            }
            // `ai.query` takes a bare string: keep it as the query.
            Value::String(query) => {
                signal.data = serde_json::json!({"query": std::mem::take(query), "model": alias});
            }
            _ => {}
        }
        Flow::Continue
    }
}
