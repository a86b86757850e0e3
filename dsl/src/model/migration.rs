//! `migrate "<fingerprint>" { ... }`: how checkpoints of an older definition of an agent
//! become checkpoints of this one.

use super::literal::Literal;
use super::span::{Name, Span, Spanned};

/// One migration, from the definition with fingerprint `from`.
#[derive(Debug, Clone, PartialEq)]
pub struct MigrationDef {
    /// The older definition's fingerprint (16 hexadecimal digits, as the run-time error and
    /// the lock file name it).
    pub from: Spanned<String>,
    /// `state New was Old`: FSM states renamed.
    pub states: Vec<Rename>,
    /// `field new was old`: state fields renamed.
    pub fields: Vec<Rename>,
    /// `field name = literal`: values for fields older checkpoints lack.
    pub defaults: Vec<(Name, Spanned<Literal>)>,
    /// `with path::to_fn`: a `fn(&mut serde_json::Value) -> Result<(), String>` run last on
    /// the agent's checkpoint JSON, for anything else.
    pub with: Option<Spanned<syn::Path>>,
    /// The `migrate` keyword.
    pub span: Span,
}

/// `New was Old`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rename {
    /// The name in this definition.
    pub new: Name,
    /// The name in the older one.
    pub old: Name,
}

impl MigrationDef {
    /// An empty migration from `from`, declared at `span`.
    pub fn new(from: Spanned<String>, span: impl Into<Span>) -> Self {
        MigrationDef {
            from,
            states: Vec::new(),
            fields: Vec::new(),
            defaults: Vec::new(),
            with: None,
            span: span.into(),
        }
    }
}
