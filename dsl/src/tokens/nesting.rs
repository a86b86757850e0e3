//! The nesting limit for macro input, the same [`NESTING`] as `.agent` files: checked on the
//! token groups before syn parses them, since the parsers (and every later walk) recurse once
//! per level.

use proc_macro2::{TokenStream, TokenTree};

use crate::limits::NESTING;

/// `Err` at the delimiter of the first group nested deeper than [`NESTING`].
pub fn check(input: &TokenStream) -> syn::Result<()> {
    // An explicit stack of the streams being walked: the walk itself must not recurse.
    let mut stack = vec![input.clone().into_iter()];
    while let Some(top) = stack.last_mut() {
        match top.next() {
            Some(TokenTree::Group(group)) => {
                // The group opens level `stack.len()` (the input itself is level 0).
                if stack.len() > NESTING {
                    return Err(syn::Error::new(
                        group.span_open(),
                        format!(
                            "nesting deeper than {NESTING} levels\n  = help: the compiler reads at most {NESTING} levels of `{{`, `(` and `[`; move deep branches into their own `behavior` and name them with `subtree`{}",
                            super::common::explained(crate::check::codes::NESTING)
                        ),
                    ));
                }
                stack.push(group.stream().into_iter());
            }
            Some(_) => {}
            None => {
                stack.pop();
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> TokenStream {
        let text = format!("{}{}", "{ a ".repeat(levels), "}".repeat(levels));
        text.parse().unwrap()
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
