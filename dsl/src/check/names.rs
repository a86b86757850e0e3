//! Names that must become Rust identifiers.

use crate::model::Name;
use crate::model::ident::{Case, NameProblem, rust_ident};

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;
use super::quote::{quote_char, quote_name};

pub use crate::model::ident::is_keyword;

/// Whether `name` is, as written, a valid non-keyword Rust identifier.
pub fn is_identifier(name: &str) -> bool {
    rust_ident(name, Case::AsWritten).is_ok()
}

/// Reports `name` if it cannot become a Rust identifier as written; `what` says what it names.
pub fn check_identifier(cx: &Ctxt, name: &Name, what: &str) {
    check_ident(cx, name, what, Case::AsWritten);
}

/// Reports `name` if it cannot become a Rust identifier under `case` (events become upper camel
/// case variants); the message names the identifier it would become when that differs.
pub fn check_ident(cx: &Ctxt, name: &Name, what: &str, case: Case) {
    let Err(problem) = rust_ident(&name.value, case) else {
        return;
    };
    let shown = quote_name(&name.value);
    let becomes = if problem.ident() == name.value {
        String::new()
    } else if problem.ident().is_empty() {
        " (its variant drops every `_`, leaving nothing)".to_string()
    } else {
        format!(" (it becomes {})", quote_name(problem.ident()))
    };
    let diagnostic = match &problem {
        NameProblem::Keyword(_) => Diagnostic::error(
            codes::INVALID_NAME,
            name.span,
            format!("{what} {shown} is a Rust keyword{becomes}"),
        )
        .label("cannot become a Rust identifier")
        .help(format!(
            "rename it, for example `{}`",
            keyword_fix(&name.value, case)
        )),
        NameProblem::Placeholder(_) => Diagnostic::error(
            codes::INVALID_NAME,
            name.span,
            format!("{what} {shown} is not a valid Rust identifier{becomes}"),
        )
        .label("an identifier needs a letter")
        .help("use at least one letter"),
        NameProblem::LeadingDigit(_) => Diagnostic::error(
            codes::INVALID_NAME,
            name.span,
            format!("{what} {shown} is not a valid Rust identifier{becomes}"),
        )
        .label("a Rust identifier cannot start with a digit")
        .help(match case {
            Case::UpperCamel => {
                "start it with a letter: underscores are dropped in the generated variant"
            }
            Case::AsWritten => "start it with a letter",
        }),
        NameProblem::Character(_, c) => Diagnostic::error(
            codes::INVALID_NAME,
            name.span,
            format!("{what} {shown} is not a valid Rust identifier{becomes}"),
        )
        .label(format!(
            "{} cannot be part of a Rust identifier",
            quote_char(*c)
        ))
        .help("use letters, digits and `_`, not starting with a digit"),
    };
    cx.push(diagnostic);
}

/// A rename of the keyword `name` that is a valid identifier under `case`: `type_` as written,
/// `self_event` for an event (whose underscores the variant drops).
fn keyword_fix(name: &str, case: Case) -> String {
    match case {
        Case::AsWritten => format!("{name}_"),
        Case::UpperCamel => format!("{}_event", name.trim_end_matches('_')),
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
        for (name, case) in [
            ("type", Case::AsWritten),
            ("self_", Case::UpperCamel),
            ("Self", Case::UpperCamel),
        ] {
            assert!(rust_ident(&keyword_fix(name, case), case).is_ok(), "{name}");
        }
    }
}
