//! The nesting limit for `.agent` files, checked on tokens before pest runs: pest, the lowering
//! and every later walk recurse once per level, so a file nested past [`NESTING`] is one clear
//! error at the delimiter that crosses it instead of a stack overflow (or pest's own depth guard
//! reporting a legal token as unexpected).

use super::lexer::{Token, TokenKind};
use crate::check::{Diagnostic, codes};
use crate::limits::NESTING;
use crate::model::{FileId, Span};

/// What is open at one point: a bracket, or a run of `&` in a type (each `&` is a level for
/// the type parsers), which ends with the type.
#[derive(Clone, Copy, PartialEq)]
enum Open {
    Bracket,
    Reference,
}

/// `Err` at the first token that opens level `NESTING + 1`.
pub fn check(file: FileId, source: &str, tokens: &[Token]) -> Result<(), Box<Diagnostic>> {
    let mut open: Vec<Open> = Vec::new();
    for token in tokens.iter().filter(|t| t.kind == TokenKind::Punct) {
        match token.text(source) {
            "{" | "(" | "[" | "<" => open.push(Open::Bracket),
            "&" => open.push(Open::Reference),
            "}" | ")" | "]" | ">" => {
                end_type(&mut open);
                // A stray closer is pest's to report.
                open.pop();
            }
            // What ends a type: the next field's `:`, a separator, a default.
            ":" | "," | ";" | "=" => end_type(&mut open),
            _ => {}
        }
        if open.len() > NESTING {
            return Err(Box::new(too_deep(file, token)));
        }
    }
    Ok(())
}

fn end_type(open: &mut Vec<Open>) {
    while open.last() == Some(&Open::Reference) {
        open.pop();
    }
}

fn too_deep(file: FileId, token: &Token) -> Diagnostic {
    Diagnostic::error(
        codes::NESTING,
        Span::File {
            file,
            start: token.start,
            end: token.end,
        },
        format!("nesting deeper than {NESTING} levels"),
    )
    .label(format!("level {} starts here", NESTING + 1))
    .help(format!(
        "the compiler reads at most {NESTING} levels of `{{`, `(`, `[`, `<` and `&`; move deep branches into their own `behavior` and name them with `subtree`"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::lexer::tokenize;

    fn depth_error(source: &str) -> Option<usize> {
        let tokens = tokenize(FileId(0), source).unwrap();
        check(FileId(0), source, &tokens)
            .err()
            .map(|d| d.span.byte_range().unwrap().1.start)
    }

    #[test]
    fn the_error_is_at_the_delimiter_past_the_limit() {
        let at_limit = format!("{}{}", "{".repeat(NESTING), "}".repeat(NESTING));
        assert_eq!(depth_error(&at_limit), None);
        let past = format!("{}{}", "(".repeat(NESTING + 1), ")".repeat(NESTING + 1));
        assert_eq!(depth_error(&past), Some(NESTING));
    }

    #[test]
    fn references_count_until_their_type_ends() {
        let refs = |n: usize| format!("agent A {{ state {{ a: {}u8 b: u8 }} }}", "&".repeat(n));
        assert_eq!(depth_error(&refs(NESTING - 2)), None);
        assert!(depth_error(&refs(NESTING - 1)).is_some());
        // Many fields of reference types do not add up.
        let fields: String = (0..NESTING).map(|i| format!("f{i}: &&u8 ")).collect();
        assert_eq!(
            depth_error(&format!("agent A {{ state {{ {fields} }} }}")),
            None
        );
    }
}
