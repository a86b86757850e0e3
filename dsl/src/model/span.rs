//! Where a model element came from: a macro token or a range of a `.agent` file.

use std::fmt;

/// An index into the set of source files a compilation read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// The origin of a model element, for diagnostics.
#[derive(Clone, Copy)]
pub enum Span {
    /// Generated or unknown: reported without a location.
    Synthetic,
    /// A token of macro input.
    Macro(proc_macro2::Span),
    /// A byte range in a `.agent` file.
    File {
        /// Which file.
        file: FileId,
        /// First byte.
        start: usize,
        /// One past the last byte.
        end: usize,
    },
}

impl Span {
    /// The span to put on generated tokens: the macro token itself, or the call site.
    pub fn to_proc_macro(self) -> proc_macro2::Span {
        match self {
            Span::Macro(span) => span,
            Span::Synthetic | Span::File { .. } => proc_macro2::Span::call_site(),
        }
    }

    /// The byte range, for file spans.
    pub fn byte_range(self) -> Option<(FileId, std::ops::Range<usize>)> {
        match self {
            Span::File { file, start, end } => Some((file, start..end)),
            _ => None,
        }
    }
}

impl From<proc_macro2::Span> for Span {
    fn from(span: proc_macro2::Span) -> Self {
        Span::Macro(span)
    }
}

impl fmt::Debug for Span {
    // Macro spans print as `#macro`: their Debug output differs between contexts, and the model's
    // Debug form is used in snapshots.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Span::Synthetic => f.write_str("#synthetic"),
            Span::Macro(_) => f.write_str("#macro"),
            Span::File { file, start, end } => write!(f, "#{}:{start}..{end}", file.0),
        }
    }
}

impl PartialEq for Span {
    /// Spans never make two model elements differ: equality of models is equality of meaning.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// A value and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub span: Span,
}

impl<T> Spanned<T> {
    /// Pairs a value with its span.
    pub fn new(value: T, span: impl Into<Span>) -> Self {
        Spanned {
            value,
            span: span.into(),
        }
    }
}

/// A name as written (an agent, a state, an event, an action, a field).
pub type Name = Spanned<String>;
