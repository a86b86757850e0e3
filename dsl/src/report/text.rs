//! rustc-style text: `error[E0203]: message`, `--> file:line:col`, the source snippet with the
//! primary and secondary labels, and `= help:`.

use codespan_reporting::diagnostic as cs;
use codespan_reporting::term;

use super::Sources;
use crate::check::{Diagnostic, Severity};
use crate::model::Span;

/// Renders every diagnostic, separated by blank lines as rustc does.
pub fn render(sources: &Sources, diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| render_one(sources, d))
        .collect::<Vec<_>>()
        .join("")
}

/// Renders one diagnostic (ending with a blank line).
pub fn render_one(sources: &Sources, diagnostic: &Diagnostic) -> String {
    let severity = match diagnostic.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
    };
    let mut labels = Vec::new();
    if let Some((file, range)) = diagnostic.span.byte_range() {
        labels.push(
            cs::Label::primary(file.0 as usize, range)
                .with_message(diagnostic.label.clone().unwrap_or_default()),
        );
    }
    let mut notes = Vec::new();
    for secondary in &diagnostic.secondary {
        match secondary.span {
            Span::File { .. } => {
                let (file, range) = secondary.span.byte_range().expect("a file span");
                labels.push(
                    cs::Label::secondary(file.0 as usize, range)
                        .with_message(secondary.message.clone()),
                );
            }
            _ => notes.push(format!("note: {}", secondary.message)),
        }
    }
    if let Some(help) = &diagnostic.help {
        notes.push(format!("help: {help}"));
    }
    let rendered = cs::Diagnostic::new(severity)
        .with_code(diagnostic.code.id)
        .with_message(diagnostic.message.clone())
        .with_labels(labels)
        .with_notes(notes);
    // rustc's look: `--> file:line:col`, `|` borders.
    let config = term::Config {
        chars: term::Chars::ascii(),
        ..term::Config::default()
    };
    term::emit_into_string(&config, sources.files(), &rendered).unwrap_or_else(|_| {
        // Only a span outside its file gets here; say what we can rather than nothing.
        format!(
            "{}[{}]: {}\n\n",
            match diagnostic.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            },
            diagnostic.code.id,
            diagnostic.message
        )
    })
}
