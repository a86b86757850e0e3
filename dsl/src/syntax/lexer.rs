//! A small lexer over `.agent` text. The grammar does the parsing; this finds what pest reports
//! badly (an unterminated string or comment, which pest only notices at the end of the file),
//! names the token a syntax error found, and gives `agentc fmt` the tokens and comments to print.

use crate::check::{Diagnostic, codes};
use crate::model::{FileId, Span};

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// A name or keyword.
    Word,
    /// A number or duration (`42`, `2.5`, `500ms`).
    Number,
    /// A string literal, quotes included.
    Str,
    /// A lifetime such as `'static`.
    Lifetime,
    /// `// ...` up to the end of the line.
    LineComment,
    /// `/* ... */`.
    BlockComment,
    /// Punctuation: `->`, `=>`, `::` or one character.
    Punct,
}

/// One token: its kind and byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Token {
    /// Its text.
    pub fn text<'a>(&self, source: &'a str) -> &'a str {
        &source[self.start..self.end]
    }

    /// Whether it is a comment.
    pub fn is_comment(&self) -> bool {
        matches!(self.kind, TokenKind::LineComment | TokenKind::BlockComment)
    }
}

/// Splits `source` into tokens and comments; an unterminated string or block comment is an
/// error at its opening.
pub fn tokenize(file: FileId, source: &str) -> Result<Vec<Token>, Box<Diagnostic>> {
    let bytes = source.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let kind = if c.is_ascii_whitespace() {
            i += 1;
            continue;
        } else if source[i..].starts_with("//") {
            i = source[i..].find('\n').map_or(bytes.len(), |n| i + n);
            TokenKind::LineComment
        } else if source[i..].starts_with("/*") {
            match source[i + 2..].find("*/") {
                Some(n) => i += 2 + n + 2,
                None => {
                    return Err(unterminated(
                        file,
                        start,
                        "unterminated block comment",
                        "close it with `*/`",
                    ));
                }
            }
            TokenKind::BlockComment
        } else if c == b'"' {
            i += 1;
            loop {
                match bytes.get(i) {
                    None => {
                        return Err(unterminated(
                            file,
                            start,
                            "unterminated string",
                            "close it with `\"`; write a quote inside a string as `\\\"`",
                        ));
                    }
                    Some(b'\\') => i += 2,
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(_) => i += 1,
                }
            }
            i = i.min(bytes.len());
            TokenKind::Str
        } else if c.is_ascii_alphabetic() || c == b'_' {
            i = word_end(bytes, i);
            TokenKind::Word
        } else if c.is_ascii_digit()
            || (c == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            i += 1;
            while i < bytes.len() {
                let b = bytes[i];
                if b.is_ascii_alphanumeric() || b == b'_' {
                    i += 1;
                } else if b == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    i += 2;
                } else {
                    break;
                }
            }
            TokenKind::Number
        } else if c == b'\''
            && bytes
                .get(i + 1)
                .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        {
            i = word_end(bytes, i + 1);
            TokenKind::Lifetime
        } else if ["->", "=>", "::"]
            .iter()
            .any(|p| source[i..].starts_with(p))
        {
            i += 2;
            TokenKind::Punct
        } else {
            i += source[i..].chars().next().map_or(1, char::len_utf8);
            TokenKind::Punct
        };
        tokens.push(Token {
            kind,
            start,
            end: i,
        });
    }
    Ok(tokens)
}

fn word_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
        i += 1;
    }
    i
}

fn unterminated(file: FileId, start: usize, message: &str, help: &str) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(
            codes::UNTERMINATED,
            Span::File {
                file,
                start,
                end: start + if message.contains("comment") { 2 } else { 1 },
            },
            message,
        )
        .label("starts here and never ends")
        .help(help),
    )
}

/// The token that starts at or after byte `at`, skipping whitespace and comments (for "found
/// ..." in syntax errors). `None` at the end of the input.
pub fn token_at(source: &str, at: usize) -> Option<(usize, usize)> {
    let rest = source.get(at..)?;
    let skipped = rest.len() - rest.trim_start().len();
    let at = at + skipped;
    if at >= source.len() {
        return None;
    }
    // Lex from `at` alone: a string or comment cut short here is still shown from its start.
    match tokenize(FileId(0), &source[at..]) {
        Ok(tokens) => tokens
            .into_iter()
            .find(|t| !t.is_comment())
            .map(|t| (at + t.start, at + t.end)),
        Err(_) => Some((at, at + 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(source: &str) -> Vec<(TokenKind, &str)> {
        tokenize(FileId(0), source)
            .unwrap()
            .into_iter()
            .map(|t| (t.kind, t.text(source)))
            .collect()
    }

    #[test]
    fn tokens() {
        use TokenKind::*;
        assert_eq!(
            kinds("a -> B on x // c\n\"s\\\"t\" 500ms -3 2.5 'a ::"),
            vec![
                (Word, "a"),
                (Punct, "->"),
                (Word, "B"),
                (Word, "on"),
                (Word, "x"),
                (LineComment, "// c"),
                (Str, "\"s\\\"t\""),
                (Number, "500ms"),
                (Number, "-3"),
                (Number, "2.5"),
                (Lifetime, "'a"),
                (Punct, "::"),
            ]
        );
    }

    #[test]
    fn unterminated() {
        let e = tokenize(FileId(0), "agent A { description \"oops }").unwrap_err();
        assert_eq!(e.code, codes::UNTERMINATED);
        assert_eq!(e.span.byte_range().unwrap().1, 22..23);
        let e = tokenize(FileId(0), "/* never").unwrap_err();
        assert_eq!(e.message, "unterminated block comment");
    }
}
