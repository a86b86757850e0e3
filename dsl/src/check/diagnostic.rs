//! Diagnostics: what the checker reports, rendered by the macros (as `compile_error!`), by
//! `build.rs` and by `agentc`.

use crate::model::Span;

use super::codes::Code;

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The agent does not compile.
    Error,
    /// The agent compiles, but probably not as meant.
    Warning,
}

/// A secondary location with its own message ("first declared here").
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What it says.
    pub message: String,
}

/// One finding: a code, a message, where, and what to do about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// Stable code (`E0201`).
    pub code: Code,
    /// Error or warning.
    pub severity: Severity,
    /// Lowercase, no trailing period, names in backticks.
    pub message: String,
    /// The offending token.
    pub span: Span,
    /// Text under the offending token.
    pub label: Option<String>,
    /// Other places involved.
    pub secondary: Vec<Label>,
    /// What to do about it.
    pub help: Option<String>,
}

impl Diagnostic {
    /// An error.
    pub fn error(code: Code, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            span,
            label: None,
            secondary: Vec::new(),
            help: None,
        }
    }

    /// A warning.
    pub fn warning(code: Code, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, span, message)
        }
    }

    /// Sets the primary label.
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Adds a secondary label. Write it without "here" (`"first declared"`): renderers that
    /// show the location add it.
    #[must_use]
    pub fn secondary(mut self, span: Span, message: impl Into<String>) -> Self {
        self.secondary.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    /// Sets the help line.
    #[must_use]
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Sets the help line when there is one.
    #[must_use]
    pub fn maybe_help(self, help: Option<String>) -> Self {
        match help {
            Some(help) => self.help(help),
            None => self,
        }
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The diagnostic as one `syn::Error` at its span. `compile_error!` shows a single message
    /// at a single place, so the help, the secondary locations and the code ride along in the
    /// text, in rustc's `= help:` / `= note:` style.
    pub fn to_syn_error(&self) -> syn::Error {
        let mut text = self.message.clone();
        for note in &self.secondary {
            match note.span {
                Span::Macro(span) if span.start().line > 0 => {
                    let at = span.start();
                    text.push_str(&format!(
                        "\n  = note: {} at {}:{}",
                        note.message,
                        at.line,
                        at.column + 1
                    ));
                }
                _ => text.push_str(&format!("\n  = note: {}", note.message)),
            }
        }
        if let Some(help) = &self.help {
            text.push_str(&format!("\n  = help: {help}"));
        }
        // `compile_error!` cannot say `error[E0305]`; the code rides in a note, as the way to
        // read more about it.
        text.push_str(&format!(
            "\n  = note: `agentc explain {}` explains this error",
            self.code
        ));
        syn::Error::new(self.span.to_proc_macro(), text)
    }
}

/// Combines diagnostics into one `syn::Error` (each keeps its own span).
/// At most [`crate::limits::DIAGNOSTICS`] of them, then one counting the rest.
pub fn to_syn_error(diagnostics: &[Diagnostic]) -> Option<syn::Error> {
    let errors: Vec<Diagnostic> = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .cloned()
        .collect();
    super::cap(errors)
        .iter()
        .map(Diagnostic::to_syn_error)
        .reduce(|mut all, e| {
            all.combine(e);
            all
        })
}
