//! `#[action]` functions, as written. The checker decides whether the signature is supported.

use super::literal::DurationMs;
use super::setting::Setting;
use super::span::{Name, Span, Spanned};

/// A function marked `#[action]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionDef {
    /// The function's name, which is the action's name.
    pub name: Name,
    /// The function's visibility, given to the generated marker type.
    pub vis: syn::Visibility,
    /// `async fn`.
    pub asyncness: Option<Span>,
    /// The parameters as written.
    pub params: Vec<ActionParam>,
    /// Qualifiers an action cannot have (`unsafe`, `extern`, `const`, generics, variadics).
    pub unsupported: Vec<Spanned<&'static str>>,
    /// `description = "..."`, else the doc comment.
    pub description: Setting<String>,
    /// The first paragraph of the doc comment.
    pub doc: Option<String>,
    /// Execution options for async actions.
    pub exec: ExecSettings,
    /// `on_halt = path`: the function a behaviour tree calls when it halts a running leaf of
    /// the action.
    pub on_halt: Setting<syn::Path>,
    /// `crate = path`.
    pub runtime: Setting<syn::Path>,
    /// The return type (or the name, when there is none): where a bad return type is reported.
    pub output: Span,
    /// The return type is `()` (written or not) or `Result<(), _>`: a run of the function
    /// always finishes, so a behaviour tree keeps no progress flag for its leaves.
    pub finishes_each_run: bool,
}

/// One parameter of an action function.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionParam {
    /// How it is taken.
    pub kind: ParamKind,
    /// The type (for references, the referenced type).
    pub ty: syn::Type,
    /// The whole parameter.
    pub span: Span,
}

/// How a parameter is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// `self`, `&self`, `&mut self`.
    Receiver,
    /// `x: &mut T`.
    MutRef,
    /// `x: &T`.
    SharedRef,
    /// `x: T`.
    Value,
    /// `x: impl Trait`.
    ImplTrait,
}

/// `timeout`, `max_retries`, `backoff`, `backoff_cap` on `#[action(...)]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecSettings {
    /// Per-attempt timeout.
    pub timeout: Setting<DurationMs>,
    /// Retries of retryable failures.
    pub max_retries: Setting<u32>,
    /// First backoff.
    pub backoff: Setting<DurationMs>,
    /// Longest backoff.
    pub backoff_cap: Setting<DurationMs>,
}

impl ExecSettings {
    /// Whether any option is given.
    pub fn any(&self) -> bool {
        self.timeout.is_set()
            || self.max_retries.is_set()
            || self.backoff.is_set()
            || self.backoff_cap.is_set()
    }
}
