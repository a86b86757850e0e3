//! One JSON object per diagnostic, for tools: `severity`, `code`, `message`, `file`, `line`,
//! `column`, `end_line`, `end_column` (all 1-based), plus `label`, `help` and `secondary`.

use serde_json::{Value, json};

use super::Sources;
use crate::check::{Diagnostic, Severity};
use crate::model::Span;

/// Where a span starts and ends, 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file's name.
    pub file: String,
    /// First line.
    pub line: usize,
    /// First column, in characters.
    pub column: usize,
    /// Last line.
    pub end_line: usize,
    /// Column just past the end.
    pub end_column: usize,
}

/// The location of a file span; `None` for spans that are not in a file.
pub fn location(sources: &Sources, span: Span) -> Option<Location> {
    let (file, range) = span.byte_range()?;
    let (line, column) = sources.line_column(file, range.start)?;
    let (end_line, end_column) = sources.line_column(file, range.end)?;
    Some(Location {
        file: sources.name(file).to_string(),
        line,
        column,
        end_line,
        end_column,
    })
}

/// A diagnostic as one line of JSON (no trailing newline).
pub fn json_line(sources: &Sources, diagnostic: &Diagnostic) -> String {
    let at = location(sources, diagnostic.span);
    let field = |f: fn(&Location) -> Value| at.as_ref().map_or(Value::Null, f);
    let secondary: Vec<Value> = diagnostic
        .secondary
        .iter()
        .map(|label| {
            let at = location(sources, label.span);
            json!({
                "message": label.message,
                "file": at.as_ref().map(|l| l.file.clone()),
                "line": at.as_ref().map(|l| l.line),
                "column": at.as_ref().map(|l| l.column),
            })
        })
        .collect();
    json!({
        "severity": match diagnostic.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        },
        "code": diagnostic.code.id,
        "message": diagnostic.message,
        "file": field(|l| json!(l.file)),
        "line": field(|l| json!(l.line)),
        "column": field(|l| json!(l.column)),
        "end_line": field(|l| json!(l.end_line)),
        "end_column": field(|l| json!(l.end_column)),
        "label": diagnostic.label,
        "help": diagnostic.help,
        "secondary": secondary,
    })
    .to_string()
}
