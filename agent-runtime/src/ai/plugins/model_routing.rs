//! ModelRouting: which model alias serves which signal type.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
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

/// ModelRouting's state: the alias each signal type resolved to, so that a type's routes are
/// matched once per agent rather than once per signal. It is a cache, not data: it is rebuilt
/// as signals arrive, checkpoints hold it as `null`, and it keeps at most
/// [`RouteCache::CAPACITY`] types (others are resolved each time).
#[derive(Debug, Clone, Default)]
pub struct RouteCache {
    pub(super) by_type: HashMap<String, Option<String>>,
}

impl RouteCache {
    /// The most signal types remembered (signal types come from outside: the cache must not
    /// grow with them).
    pub const CAPACITY: usize = 256;

    /// The alias for `signal_type` under `routing`, resolved once per type.
    fn alias<'a>(&'a mut self, routing: &'a ModelRouting, signal_type: &str) -> Option<&'a str> {
        if !self.by_type.contains_key(signal_type) {
            if self.by_type.len() >= Self::CAPACITY {
                return routing.model_for(signal_type);
            }
            let alias = routing.model_for(signal_type).map(str::to_string);
            self.by_type.insert(signal_type.to_string(), alias);
        }
        self.by_type.get(signal_type).and_then(Option::as_deref)
    }
}

impl Serialize for RouteCache {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_unit()
    }
}

impl<'de> Deserialize<'de> for RouteCache {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d)?;
        Ok(RouteCache::default())
    }
}

impl Plugin for ModelRouting {
    const NAME: &'static str = "ModelRouting";
    const STATE_KEY: &'static str = "model_routing";
    type State = RouteCache;

    fn mount(&self) -> RouteCache {
        RouteCache::default()
    }

    /// It has no outbound hook.
    fn hears_ai_events(&self) -> bool {
        false
    }

    /// Only a route naming `ai.llm.response` (or a pattern matching it) gives replies a model.
    fn changes_model_replies(&self) -> bool {
        self.model_for(crate::ai::LLM_RESPONSE).is_some()
    }

    fn before_route(&self, cache: &mut RouteCache, signal: &mut Cow<'_, Signal>) -> Flow {
        if self.routes.is_empty() {
            return Flow::Continue;
        }
        let Some(alias) = cache.alias(self, &signal.signal_type) else {
            return Flow::Continue;
        };
        match &signal.data {
            Value::Object(map) if map.get("model").is_none_or(Value::is_null) => {
                if let Value::Object(map) = &mut signal.to_mut().data {
                    map.insert("model".into(), Value::String(alias.to_string()));
                }
            }
            // `ai.query` takes a bare string: keep it as the query.
            Value::String(query) => {
                let data = serde_json::json!({"query": query, "model": alias});
                signal.to_mut().data = data;
            }
            _ => {}
        }
        Flow::Continue
    }
}
