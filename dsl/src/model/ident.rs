//! How a DSL name becomes a Rust identifier. This is the one place that decides: the checker
//! reports every name [`rust_ident`] refuses, and the generator builds identifiers only through
//! it, so whatever the checker accepts emits valid Rust.
//!
//! Names are plain words in both front-ends: the macro front-end reads a raw identifier
//! (`r#move`) as the word it spells, and a keyword is refused rather than emitted raw, because
//! names also appear in strings (logs, graphs, serialized states) and in `.agent` files, which
//! have no raw syntax.

/// How a name is spelled in generated code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// As written: agents, states, state fields, actions, behaviours.
    AsWritten,
    /// Upper camel case, dropping underscores: events become variants of `<Agent>Event`
    /// (`add_item` -> `AddItem`).
    UpperCamel,
}

/// Why a name cannot become a Rust identifier. Each carries the identifier it would become.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameProblem {
    /// It is (or becomes) a Rust keyword.
    Keyword(String),
    /// It is (or becomes) `_`, or nothing at all: placeholders, not names.
    Placeholder(String),
    /// It starts (or, after case conversion, starts) with a digit, or another character that
    /// may only continue an identifier (`_1` -> `1`).
    LeadingDigit(String),
    /// It holds a character Rust identifiers cannot hold (the first such character).
    Character(String, char),
}

impl NameProblem {
    /// The identifier the name would become.
    pub fn ident(&self) -> &str {
        match self {
            NameProblem::Keyword(s)
            | NameProblem::Placeholder(s)
            | NameProblem::LeadingDigit(s)
            | NameProblem::Character(s, _) => s,
        }
    }
}

/// Rust's strict and reserved keywords (2024 edition), which cannot name generated items.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// Whether `word` is a Rust keyword.
pub fn is_keyword(word: &str) -> bool {
    KEYWORDS.contains(&word)
}

/// The text `name` becomes in generated code under `case`, valid or not.
pub fn convert(name: &str, case: Case) -> String {
    match case {
        Case::AsWritten => name.to_string(),
        Case::UpperCamel => {
            let mut out = String::with_capacity(name.len());
            let mut upper = true;
            for c in name.chars() {
                if c == '_' {
                    upper = true;
                } else if upper {
                    out.extend(c.to_uppercase());
                    upper = false;
                } else {
                    out.push(c);
                }
            }
            out
        }
    }
}

/// The Rust identifier `name` becomes under `case`, or why there is none.
pub fn rust_ident(name: &str, case: Case) -> Result<String, NameProblem> {
    let ident = convert(name, case);
    let mut chars = ident.chars();
    let Some(first) = chars.next() else {
        return Err(NameProblem::Placeholder(ident));
    };
    if ident == "_" {
        return Err(NameProblem::Placeholder(ident));
    }
    // Digits (and combining marks) may continue an identifier but not start one.
    if first != '_' && !unicode_ident::is_xid_start(first) && unicode_ident::is_xid_continue(first)
    {
        return Err(NameProblem::LeadingDigit(ident));
    }
    if let Some(bad) = ident.chars().find(|&c| !unicode_ident::is_xid_continue(c)) {
        return Err(NameProblem::Character(ident, bad));
    }
    if is_keyword(&ident) {
        return Err(NameProblem::Keyword(ident));
    }
    Ok(ident)
}

/// A `proc_macro2` identifier for `name` under `case`, located at `span`. Never panics: a name
/// the checker would have refused becomes `__invalid_name`, which rustc then reports, so a
/// checker gap shows as a compile error, not as a crash of the build.
pub fn to_ident(name: &str, case: Case, span: proc_macro2::Span) -> proc_macro2::Ident {
    match rust_ident(name, case) {
        Ok(ident) => proc_macro2::Ident::new(&ident, span),
        Err(_) => proc_macro2::Ident::new("__invalid_name", span),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_written() {
        assert_eq!(
            rust_ident("Pending", Case::AsWritten).as_deref(),
            Ok("Pending")
        );
        assert_eq!(rust_ident("_x1", Case::AsWritten).as_deref(), Ok("_x1"));
        assert_eq!(rust_ident("état", Case::AsWritten).as_deref(), Ok("état"));
        assert_eq!(
            rust_ident("type", Case::AsWritten),
            Err(NameProblem::Keyword("type".into()))
        );
        assert_eq!(
            rust_ident("r#type", Case::AsWritten),
            Err(NameProblem::Character("r#type".into(), '#'))
        );
        assert_eq!(
            rust_ident("1st", Case::AsWritten),
            Err(NameProblem::LeadingDigit("1st".into()))
        );
        assert_eq!(
            rust_ident("a-b", Case::AsWritten),
            Err(NameProblem::Character("a-b".into(), '-'))
        );
        assert_eq!(
            rust_ident("_", Case::AsWritten),
            Err(NameProblem::Placeholder("_".into()))
        );
        assert_eq!(
            rust_ident("", Case::AsWritten),
            Err(NameProblem::Placeholder(String::new()))
        );
        // A combining mark continues an identifier but cannot start one.
        assert!(matches!(
            rust_ident("\u{301}a", Case::AsWritten),
            Err(NameProblem::LeadingDigit(_))
        ));
    }

    #[test]
    fn events_in_upper_camel_case() {
        let camel = |n: &str| rust_ident(n, Case::UpperCamel);
        assert_eq!(camel("checkout").as_deref(), Ok("Checkout"));
        assert_eq!(camel("add_item").as_deref(), Ok("AddItem"));
        assert_eq!(camel("Pay").as_deref(), Ok("Pay"));
        assert_eq!(camel("track2_go").as_deref(), Ok("Track2Go"));
        assert_eq!(camel("_1"), Err(NameProblem::LeadingDigit("1".into())));
        assert_eq!(camel("a_1").as_deref(), Ok("A1"));
        assert_eq!(camel("__"), Err(NameProblem::Placeholder(String::new())));
        assert_eq!(camel("self_"), Err(NameProblem::Keyword("Self".into())));
        assert_eq!(camel("straße").as_deref(), Ok("Straße"));
    }

    #[test]
    fn identifiers_never_panic() {
        for name in [
            "_1", "__", "", "_", "type", "a b", "1", "\u{0}", "r#", "r#_",
        ] {
            for case in [Case::AsWritten, Case::UpperCamel] {
                let _ = to_ident(name, case, proc_macro2::Span::call_site());
            }
        }
    }
}
