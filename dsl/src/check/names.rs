//! Names that must become Rust identifiers.

use crate::model::Name;

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;

/// Rust's strict and reserved keywords (2024 edition), which cannot name generated items.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// Whether `name` is a Rust keyword.
pub fn is_keyword(name: &str) -> bool {
    KEYWORDS.contains(&name)
}

/// Whether `name` is a valid, non-keyword Rust identifier.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
        && name != "_"
        && !is_keyword(name)
}

/// Reports `name` if it cannot become a Rust identifier; `what` says what it names.
pub fn check_identifier(cx: &Ctxt, name: &Name, what: &str) {
    if is_keyword(&name.value) {
        cx.push(
            Diagnostic::error(
                codes::INVALID_NAME,
                name.span,
                format!("{what} `{}` is a Rust keyword", name.value),
            )
            .label("cannot become a Rust identifier")
            .help(format!("rename it, for example `{}_`", name.value)),
        );
    } else if !is_identifier(&name.value) {
        cx.push(
            Diagnostic::error(
                codes::INVALID_NAME,
                name.span,
                format!("{what} `{}` is not a valid Rust identifier", name.value),
            )
            .help("use letters, digits and `_`, not starting with a digit"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert!(is_identifier("Pending"));
        assert!(is_identifier("_x1"));
        assert!(!is_identifier("type"));
        assert!(!is_identifier("1st"));
        assert!(!is_identifier("a-b"));
        assert!(!is_identifier("_"));
    }
}
