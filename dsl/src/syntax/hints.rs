//! Mistakes a parse failure is better explained by than pest's message: a `{`, `(` or `[` never
//! closed (pest only notices at the end of the file; rustc points at the opening brace, and at a
//! closing brace whose indentation suggests which block lost its own), and a duration whose unit
//! is a separate word (`after 30 seconds`, which pest would report on the next line). They run
//! only on a file that failed to parse, on the lexer's tokens.

use super::lexer::{Token, TokenKind};
use crate::check::{Diagnostic, codes};
use crate::model::{FileId, Span, separated_unit};

/// The first such mistake in the file, if any.
pub fn explain(file: FileId, source: &str, tokens: &[Token]) -> Option<Diagnostic> {
    let code: Vec<&Token> = tokens.iter().filter(|t| !t.is_comment()).collect();
    unit_word(file, source, &code).or_else(|| unclosed(file, source, &code))
}

/// `after 30 seconds`, `every 5 min`, `timeout(2 s)`: E0003 at the number and the word, with the
/// duration written as it should be.
fn unit_word(file: FileId, source: &str, code: &[&Token]) -> Option<Diagnostic> {
    for (i, window) in code.windows(2).enumerate() {
        let [number, word] = window else { continue };
        let digits = number.text(source);
        if number.kind != TokenKind::Number
            || word.kind != TokenKind::Word
            || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
        {
            continue;
        }
        let before = |back: usize| i.checked_sub(back).map(|j| code[j].text(source));
        let takes_duration = matches!(before(1), Some("after" | "every"))
            || (before(1) == Some("(") && matches!(before(2), Some("timeout" | "wait" | "delay")));
        if !takes_duration {
            continue;
        }
        let Some((message, help)) = separated_unit(digits, word.text(source)) else {
            continue;
        };
        let span = Span::File {
            file,
            start: number.start,
            end: word.end,
        };
        return Some(
            Diagnostic::error(codes::BAD_LITERAL, span, message)
                .label("a number, then a separate word")
                .help(help),
        );
    }
    None
}

/// The innermost delimiter still open at the end of the file, as E0007 at it.
fn unclosed(file: FileId, source: &str, code: &[&Token]) -> Option<Diagnostic> {
    // Open delimiters, and every pair closed so far with a different indentation on each side.
    let mut open: Vec<&Token> = Vec::new();
    let mut misindented: Vec<(&Token, &Token)> = Vec::new();
    for token in code.iter().filter(|t| t.kind == TokenKind::Punct) {
        let text = token.text(source);
        match text {
            "{" | "(" | "[" => open.push(token),
            "}" | ")" | "]" => {
                let opener = open.last()?;
                if closer_of(opener.text(source)) != text {
                    // A mismatched pair is pest's to report.
                    return None;
                }
                if first_on_line(source, token.start)
                    && indentation(source, opener.start) != indentation(source, token.start)
                {
                    misindented.push((opener, token));
                }
                open.pop();
            }
            _ => {}
        }
    }
    let never = *open.last()?;
    let delimiter = never.text(source);
    let span = |t: &Token| Span::File {
        file,
        start: t.start,
        end: t.end,
    };
    let mut diagnostic = Diagnostic::error(
        codes::UNCLOSED,
        span(never),
        format!("unclosed `{delimiter}`"),
    )
    .label("never closed");
    // A closing brace inside the unclosed block, at the unclosed block's indentation, most
    // likely meant to close it: the block it did close is the one missing a brace.
    let hint = misindented.iter().find(|(_, close)| {
        close.start > never.start
            && indentation(source, close.start) == indentation(source, never.start)
    });
    if let Some((inner, close)) = hint {
        diagnostic = diagnostic
            .secondary(
                span(inner),
                format!("this `{}` might not be closed...", inner.text(source)),
            )
            .secondary(
                span(close),
                format!(
                    "...as it is closed by this `{}`, whose indentation differs",
                    close.text(source)
                ),
            );
    }
    Some(diagnostic.help(format!("add the missing `{}`", closer_of(delimiter))))
}

fn closer_of(opener: &str) -> &'static str {
    match opener {
        "{" => "}",
        "(" => ")",
        _ => "]",
    }
}

/// The leading whitespace of the line holding byte `at`.
fn indentation(source: &str, at: usize) -> &str {
    let line_start = source[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &source[line_start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Whether only whitespace precedes byte `at` on its line.
fn first_on_line(source: &str, at: usize) -> bool {
    let line_start = source[..at].rfind('\n').map_or(0, |i| i + 1);
    source[line_start..at].trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::lexer::tokenize;

    fn explained(source: &str) -> Option<Diagnostic> {
        let tokens = tokenize(FileId(0), source).unwrap();
        explain(FileId(0), source, &tokens)
    }

    fn at(d: &Diagnostic, source: &str) -> String {
        let (_, r) = d.span.byte_range().unwrap();
        source[r].to_string()
    }

    #[test]
    fn a_unit_word_gets_the_duration_fix() {
        let source =
            "agent A { strategy fsm { initial X\n X -> Y after 30 seconds\n Y -> X on go } }";
        let d = explained(source).unwrap();
        assert_eq!(d.code, codes::BAD_LITERAL);
        assert_eq!(at(&d, source), "30 seconds");
        assert!(d.message.contains("`30s`"), "{}", d.message);
        // A number before any other word is left to the parser.
        assert!(explained("agent A { state { n: u8 = 3 s: u8 } }").is_none());
    }

    #[test]
    fn an_unclosed_brace_is_reported_where_it_opens() {
        let source = "agent A {\n    state {\n        n: u8 = 1\n    actions go\n}\n";
        let d = explained(source).unwrap();
        assert_eq!(d.code, codes::UNCLOSED);
        assert_eq!(d.message, "unclosed `{`");
        let (_, r) = d.span.byte_range().unwrap();
        assert_eq!(r.start, 8, "the agent's brace");
        // The `}` at column 0 closed `state {`: that block lost its brace.
        assert_eq!(d.secondary.len(), 2);
        let (_, inner) = d.secondary[0].span.byte_range().unwrap();
        assert_eq!(&source[inner.start - 6..inner.end], "state {");
        // Balanced files, and mismatched pairs, are not this mistake.
        assert!(explained("agent A { }").is_none());
        assert!(explained("agent A { ( }").is_none());
    }
}
