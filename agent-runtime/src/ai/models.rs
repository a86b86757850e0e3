//! Model aliases: `"fast"`, `"capable"` or your own names, resolved to a provider and a model id.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use super::model::{LanguageModel, LlmError, LlmErrorKind};

/// What an alias resolves to: a provider and the model id to ask it for.
#[derive(Debug, Clone)]
pub struct ModelEntry {
    /// The provider (it knows its base URL and credentials).
    pub provider: Arc<dyn LanguageModel>,
    /// The model id sent to the provider (`"gpt-4o-mini"`, `"llama3.2"`).
    pub model: String,
}

/// The alias table a host resolves `model = "fast"` through.
///
/// ```
/// use agent_runtime::ai::{ModelTable, ScriptedModel};
/// use std::sync::Arc;
/// let script = Arc::new(ScriptedModel::new());
/// let table = ModelTable::new().alias("fast", script.clone(), "scripted").alias("capable", script, "scripted");
/// assert!(table.resolve("fast").is_ok());
/// let err = table.resolve("smart").unwrap_err();
/// assert_eq!(err.to_string(), "unknown model alias `smart`; known aliases: `capable`, `fast`");
/// ```
#[derive(Clone, Default)]
pub struct ModelTable {
    entries: BTreeMap<String, ModelEntry>,
}

/// An alias the table does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown model alias `{alias}`; known aliases: {}", known_list(known))]
pub struct UnknownAlias {
    /// The alias asked for.
    pub alias: String,
    /// The aliases the table has.
    pub known: Vec<String>,
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        "none (add one with `ModelTable::alias`)".to_string()
    } else {
        known
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl From<UnknownAlias> for LlmError {
    fn from(e: UnknownAlias) -> Self {
        LlmError::new(LlmErrorKind::UnknownModel, e.to_string())
    }
}

impl ModelTable {
    /// An empty table.
    pub fn new() -> Self {
        ModelTable::default()
    }

    /// Maps `alias` to `model` on `provider` (a later mapping of the same alias replaces it).
    #[must_use]
    pub fn alias(
        mut self,
        alias: impl Into<String>,
        provider: Arc<dyn LanguageModel>,
        model: impl Into<String>,
    ) -> Self {
        self.entries.insert(
            alias.into(),
            ModelEntry {
                provider,
                model: model.into(),
            },
        );
        self
    }

    /// `fast` and `capable` both on one provider, with these model ids.
    pub fn standard(
        provider: Arc<dyn LanguageModel>,
        fast: impl Into<String>,
        capable: impl Into<String>,
    ) -> Self {
        ModelTable::new()
            .alias("fast", provider.clone(), fast)
            .alias("capable", provider, capable)
    }

    /// What `alias` resolves to, or the error listing the known aliases.
    pub fn resolve(&self, alias: &str) -> Result<&ModelEntry, UnknownAlias> {
        self.entries.get(alias).ok_or_else(|| UnknownAlias {
            alias: alias.to_string(),
            known: self.entries.keys().cloned().collect(),
        })
    }

    /// The aliases, sorted.
    pub fn aliases(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }
}

impl fmt::Debug for ModelTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (alias, entry) in &self.entries {
            map.entry(
                alias,
                &format_args!("{}:{}", entry.provider.name(), entry.model),
            );
        }
        map.finish()
    }
}
