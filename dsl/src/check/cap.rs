//! The cap on diagnostics per file or macro invocation: the first [`DIAGNOSTICS`], then one
//! `E0006` saying how many more there were.

use super::codes;
use super::diagnostic::Diagnostic;
use crate::limits::DIAGNOSTICS;

/// At most [`DIAGNOSTICS`] diagnostics in the order given, then, if any were left out, one
/// `E0006` at the first of them counting them (an error if an error was left out, so a capped
/// list fails exactly when the whole list would).
pub fn cap(mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    if diagnostics.len() <= DIAGNOSTICS {
        return diagnostics;
    }
    let rest = diagnostics.split_off(DIAGNOSTICS);
    let errors = rest.iter().filter(|d| d.is_error()).count();
    let warnings = rest.len() - errors;
    let what = match (errors, warnings) {
        (0, w) => count(w, "warning"),
        (e, 0) => count(e, "error"),
        (e, w) => format!("{} and {}", count(e, "error"), count(w, "warning")),
    };
    let summary = if errors > 0 {
        Diagnostic::error
    } else {
        Diagnostic::warning
    };
    diagnostics.push(
        summary(codes::TOO_MANY, rest[0].span, format!("{what} not shown"))
            .label("the first one not shown")
            .help(format!(
                "the compiler shows the first {DIAGNOSTICS} diagnostics; fix these and build again"
            )),
    );
    diagnostics
}

/// `1 more error`, `2 more errors`.
fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 more {what}")
    } else {
        format!("{n} more {what}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Span;

    fn errors(n: usize) -> Vec<Diagnostic> {
        (0..n)
            .map(|i| Diagnostic::error(codes::SYNTAX, Span::Synthetic, format!("e{i}")))
            .collect()
    }

    #[test]
    fn short_lists_are_kept_whole() {
        assert_eq!(cap(errors(DIAGNOSTICS)).len(), DIAGNOSTICS);
    }

    #[test]
    fn long_lists_end_with_a_count() {
        let capped = cap(errors(DIAGNOSTICS + 5));
        assert_eq!(capped.len(), DIAGNOSTICS + 1);
        assert_eq!(
            capped[DIAGNOSTICS - 1].message,
            format!("e{}", DIAGNOSTICS - 1)
        );
        let summary = &capped[DIAGNOSTICS];
        assert_eq!(summary.code, codes::TOO_MANY);
        assert_eq!(summary.message, "5 more errors not shown");
        assert!(summary.is_error());

        let mut mixed = errors(DIAGNOSTICS);
        mixed.push(Diagnostic::warning(codes::SYNTAX, Span::Synthetic, "w"));
        let capped = cap(mixed);
        assert_eq!(capped[DIAGNOSTICS].message, "1 more warning not shown");
        assert!(!capped[DIAGNOSTICS].is_error());
    }
}
