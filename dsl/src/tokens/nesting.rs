//! The nesting limit for macro input, the same [`NESTING`] as `.agent` files: checked on the
//! tokens before syn parses them, since the parsers (and every later walk) recurse once per
//! level: per group, and per `<` and `&` of a type.

use proc_macro2::{Spacing, TokenStream, TokenTree};

use crate::limits::NESTING;

/// What is open inside one group besides groups: a `<` of generic arguments, or a `&` of a
/// reference type. syn's type parser recurses once for each, like once per group.
#[derive(Clone, Copy, PartialEq)]
enum Open {
    Angle,
    Reference,
}

/// One group being walked: its remaining tokens, what is open in it, and the previous punct
/// (to tell `->` and `=>` from a closing `>`).
struct Frame {
    tokens: proc_macro2::token_stream::IntoIter,
    open: Vec<Open>,
    arrow: bool,
}

/// `Err` at the first token that opens level [`NESTING`] + 1: a group's delimiter, or a `<` or
/// `&` in a type (`Vec<Vec<...>>`, `&&&...u8`), counted like the `.agent` front-end counts them.
pub fn check(input: &TokenStream) -> syn::Result<()> {
    // An explicit stack of the streams being walked: the walk itself must not recurse.
    let mut stack = vec![Frame::new(input.clone())];
    // Levels open: one per group below the input, plus every frame's `open`.
    let mut depth = 0usize;
    while let Some(top) = stack.last_mut() {
        match top.tokens.next() {
            Some(TokenTree::Group(group)) => {
                top.arrow = false;
                depth += 1;
                if depth > NESTING {
                    return Err(too_deep(group.span_open()));
                }
                stack.push(Frame::new(group.stream()));
            }
            Some(TokenTree::Punct(punct)) => {
                let c = punct.as_char();
                let after_arrow_head = top.arrow;
                top.arrow = matches!(c, '-' | '=') && punct.spacing() == Spacing::Joint;
                match c {
                    '<' => top.open.push(Open::Angle),
                    '&' => top.open.push(Open::Reference),
                    '>' if !after_arrow_head => {
                        top.end_references(&mut depth);
                        if top.open.pop().is_some() {
                            depth -= 1;
                        }
                        continue;
                    }
                    ',' | '=' => {
                        top.end_references(&mut depth);
                        continue;
                    }
                    // A statement ends whatever a comparison (`a < b`) left open.
                    ';' => {
                        depth -= top.open.len();
                        top.open.clear();
                        continue;
                    }
                    _ => continue,
                }
                depth += 1;
                if depth > NESTING {
                    return Err(too_deep(punct.span()));
                }
            }
            Some(_) => top.arrow = false,
            None => {
                depth = depth.saturating_sub(top.open.len() + 1);
                stack.pop();
            }
        }
    }
    Ok(())
}

impl Frame {
    fn new(stream: TokenStream) -> Self {
        Frame {
            tokens: stream.into_iter(),
            open: Vec::new(),
            arrow: false,
        }
    }

    /// A `>` or `,` ends the reference types written since the last `<`.
    fn end_references(&mut self, depth: &mut usize) {
        while self.open.last() == Some(&Open::Reference) {
            self.open.pop();
            *depth -= 1;
        }
    }
}

fn too_deep(at: proc_macro2::Span) -> syn::Error {
    syn::Error::new(
        at,
        format!(
            "nesting deeper than {NESTING} levels\n  = help: the compiler reads at most {NESTING} levels of `{{`, `(`, `[`, `<` and `&`; move deep branches into their own `behavior` and name them with `subtree`, and nest types less deeply{}",
            super::common::explained(crate::check::codes::NESTING)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> TokenStream {
        let text = format!("{}{}", "{ a ".repeat(levels), "}".repeat(levels));
        text.parse().unwrap()
    }

    fn deepest(text: &str) -> syn::Result<()> {
        check(&text.parse().unwrap())
    }

    #[test]
    fn angles_and_references_count_as_levels() {
        let vecs = |n: usize| format!("struct S {{ f: {}u8{} }}", "Vec<".repeat(n), ">".repeat(n));
        // The struct's braces are one level.
        assert!(deepest(&vecs(NESTING - 1)).is_ok());
        assert!(deepest(&vecs(NESTING)).is_err());
        let refs = |n: usize| {
            format!(
                "struct S<'a> {{ f: {}u8, g: {}u8 }}",
                "&'a ".repeat(n),
                "&'a ".repeat(n)
            )
        };
        assert!(deepest(&refs(NESTING - 1)).is_ok());
        assert!(deepest(&refs(NESTING)).is_err());
        // Arrows, comparisons ended by `;`, and many fields side by side are not nesting.
        let wide = format!(
            "struct S {{ {} }}",
            (0..1000)
                .map(|i| format!("f{i}: Vec<HashMap<u8, &'static str>>,"))
                .collect::<String>()
        );
        assert!(deepest(&wide).is_ok());
        let arrows = format!(
            "fn f() {{ {} }}",
            "let _ = |x: u8| -> u8 { x }; a < b; ".repeat(1000)
        );
        assert!(deepest(&arrows).is_ok());
        let error = deepest(&vecs(NESTING)).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("nesting deeper than 256 levels")
        );
    }

    #[test]
    fn groups_up_to_the_limit_pass() {
        assert!(check(&nested(NESTING)).is_ok());
        let error = check(&nested(NESTING + 1)).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("nesting deeper than 256 levels")
        );
    }
}
