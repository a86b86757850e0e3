//! `agentc fmt`: the canonical layout of a `.agent` file.
//!
//! The parse tree says where each statement (an item, an agent part, a field, a row, a route, a
//! tree node) starts; the lexer gives every token and comment. Printing the tokens in order with
//! canonical whitespace (one statement per line, four-space indentation, one space between
//! tokens except around `(`, `)`, `,`, `:` and inside types) keeps every comment, keeps at most
//! one blank line where the author left one, and changes nothing but whitespace, so the result
//! means the same and formatting it again changes nothing.

use std::collections::HashSet;

use pest::iterators::Pair;

use super::lexer::{Token, TokenKind, tokenize};
use super::{Rule, parse_tree};
use crate::check::Diagnostic;
use crate::model::FileId;

/// The file in canonical layout, or its syntax errors.
pub fn format(file: FileId, source: &str) -> Result<String, Vec<Diagnostic>> {
    crate::stack::with_stack(|| format_here(file, source))
}

fn format_here(file: FileId, source: &str) -> Result<String, Vec<Diagnostic>> {
    let root = parse_tree(file, source)?;
    let tokens = tokenize(file, source).map_err(|d| vec![*d])?;
    let mut layout = Layout::default();
    layout.visit(root);
    Ok(Printer::new(source, &layout).print(&tokens))
}

#[derive(Default)]
struct Layout {
    /// Bytes where a statement starts: it goes on a line of its own.
    starts: HashSet<usize>,
    /// Byte ranges of Rust types, printed compactly (`Vec<String>`).
    types: Vec<(usize, usize)>,
}

impl Layout {
    fn visit(&mut self, pair: Pair<'_, Rule>) {
        let span = pair.as_span();
        match pair.as_rule() {
            Rule::rust_type => {
                self.types.push((span.start(), span.end()));
                return;
            }
            Rule::agent
            | Rule::behavior
            | Rule::description
            | Rule::state
            | Rule::field
            | Rule::actions
            | Rule::tick
            | Rule::strategy
            | Rule::routes
            | Rule::route
            | Rule::fsm_initial
            | Rule::fsm_terminal
            | Rule::fsm_hook
            | Rule::fsm_row
            | Rule::fsm_state
            | Rule::fsm_parallel
            | Rule::fsm_final
            | Rule::fsm_history
            | Rule::fsm_interrupt
            | Rule::migrate
            | Rule::migrate_state
            | Rule::migrate_field
            | Rule::migrate_with
            | Rule::ai_model
            | Rule::ai_system
            | Rule::ai_tools
            | Rule::ai_approve
            | Rule::ai_max_iterations
            | Rule::ai_temperature
            | Rule::ai_max_tokens
            | Rule::ai_option
            | Rule::plugins
            | Rule::plugin
            | Rule::plugin_option
            | Rule::default_plugins
            | Rule::node => {
                self.starts.insert(span.start());
            }
            Rule::path | Rule::string | Rule::number | Rule::duration | Rule::ident => return,
            _ => {}
        }
        for inner in pair.into_inner() {
            self.visit(inner);
        }
    }

    fn in_type(&self, at: usize) -> bool {
        // The ranges are in source order and never overlap (a type is not visited inside):
        // the one that could hold `at` is the last that starts at or before it.
        let after = self.types.partition_point(|&(start, _)| start <= at);
        after > 0 && at < self.types[after - 1].1
    }
}

struct Printer<'a> {
    source: &'a str,
    layout: &'a Layout,
    out: String,
    depth: usize,
    /// The next token starts a new line.
    line_break: bool,
    /// The last token printed, and where it ended in the source.
    prev: Option<Token>,
}

impl<'a> Printer<'a> {
    fn new(source: &'a str, layout: &'a Layout) -> Self {
        Printer {
            source,
            layout,
            out: String::with_capacity(source.len() + source.len() / 4),
            depth: 0,
            line_break: false,
            prev: None,
        }
    }

    fn print(mut self, tokens: &[Token]) -> String {
        for token in tokens {
            self.token(*token);
        }
        let trimmed = self.out.trim_end().len();
        self.out.truncate(trimmed);
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        self.out
    }

    /// Newlines in the source between the previous token and `at`.
    fn newlines_before(&self, at: usize) -> usize {
        let from = self.prev.map_or(0, |p| p.end);
        self.source[from..at].matches('\n').count()
    }

    fn new_line(&mut self, blank: bool) {
        let trimmed = self.out.trim_end_matches([' ', '\t']).len();
        self.out.truncate(trimmed);
        if !self.out.is_empty() {
            if !self.out.ends_with('\n') {
                self.out.push('\n');
            }
            if blank && !self.out.ends_with("{\n") && !self.out.ends_with("\n\n") {
                self.out.push('\n');
            }
        }
        for _ in 0..self.depth {
            self.out.push_str("    ");
        }
        self.line_break = false;
    }

    fn token(&mut self, token: Token) {
        let text = token.text(self.source);
        let newlines = self.newlines_before(token.start);
        let blank = newlines >= 2;
        let prev_text = self.prev.map(|p| p.text(self.source));
        match token.kind {
            TokenKind::LineComment | TokenKind::BlockComment => {
                if newlines == 0 && self.prev.is_some() && !self.out.ends_with('\n') {
                    self.out.push(' ');
                } else {
                    self.new_line(blank);
                }
                self.out.push_str(text.trim_end());
                // A line comment must end its line; a block comment on its own line does too.
                if token.kind == TokenKind::LineComment || newlines > 0 || self.prev.is_none() {
                    self.line_break = true;
                }
                self.prev = Some(token);
                return;
            }
            _ if text == "}" => {
                self.depth = self.depth.saturating_sub(1);
                if prev_text == Some("{") && !self.line_break_pending_comment() {
                    let trimmed = self.out.trim_end().len();
                    self.out.truncate(trimmed);
                    self.out.push('}');
                } else {
                    self.new_line(false);
                    self.out.push('}');
                }
                self.line_break = true;
            }
            _ => {
                let starts = self.layout.starts.contains(&token.start);
                if starts || self.line_break {
                    self.new_line(blank);
                } else if self.space_before(token, prev_text) {
                    self.out.push(' ');
                }
                self.out.push_str(text);
                if text == "{" {
                    self.depth += 1;
                    self.line_break = true;
                }
            }
        }
        self.prev = Some(token);
    }

    /// Whether the last thing printed was a comment (then `{}` cannot be joined).
    fn line_break_pending_comment(&self) -> bool {
        self.prev.is_some_and(|p| p.is_comment())
    }

    fn space_before(&self, token: Token, prev: Option<&str>) -> bool {
        let Some(prev) = prev else {
            return false;
        };
        let text = token.text(self.source);
        let word = |kind: TokenKind| {
            matches!(
                kind,
                TokenKind::Word | TokenKind::Number | TokenKind::Lifetime | TokenKind::Str
            )
        };
        let prev_kind = self.prev.map(|p| p.kind).unwrap_or(TokenKind::Punct);
        if self.layout.in_type(token.start)
            && self.prev.is_some_and(|p| self.layout.in_type(p.start))
        {
            return (word(prev_kind) && word(token.kind)) || prev == "," || prev == ";";
        }
        if matches!(text, "," | ")" | "]" | ":" | "::" | "(") || matches!(prev, "(" | "[" | "::") {
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(source: &str) -> String {
        format(FileId(0), source).unwrap_or_else(|d| panic!("{d:?}"))
    }

    #[test]
    fn canonical_layout_keeps_comments() {
        let source = "// the order\nagent   Order{description \"x\" state{items:Vec<String>=[]   total : f64=0.0 // money\n note:Option<String>}\n\n\n  actions a,b routes{\"o.*\"=>a priority -5 \"o.b\"=>b}/* end */}";
        let expected = "// the order\nagent Order {\n    description \"x\"\n    state {\n        items: Vec<String> = []\n        total: f64 = 0.0 // money\n        note: Option<String>\n    }\n\n    actions a, b\n    routes {\n        \"o.*\" => a priority -5\n        \"o.b\" => b\n    } /* end */\n}\n";
        assert_eq!(fmt(source), expected);
        assert_eq!(fmt(expected), expected);
    }

    #[test]
    fn trees_and_empty_blocks() {
        let source = "behavior P { sequence { timeout(2s){ action move_to(speed=2, mode=\"fast\") } wait(500ms) } }\nagent A { state {} strategy behavior P tick every 100ms }";
        let expected = "behavior P {\n    sequence {\n        timeout(2s) {\n            action move_to(speed = 2, mode = \"fast\")\n        }\n        wait(500ms)\n    }\n}\nagent A {\n    state {}\n    strategy behavior P\n    tick every 100ms\n}\n";
        assert_eq!(fmt(source), expected);
        assert_eq!(fmt(expected), expected);
    }

    #[test]
    fn internal_rows_are_statements() {
        let source = "agent A { strategy fsm { initial Idle terminal Done Idle on ping  if ready do count Idle -> Idle on reset Idle->Done on stop } }";
        let expected = "agent A {\n    strategy fsm {\n        initial Idle\n        terminal Done\n        Idle on ping if ready do count\n        Idle -> Idle on reset\n        Idle -> Done on stop\n    }\n}\n";
        assert_eq!(fmt(source), expected);
        assert_eq!(fmt(expected), expected);
    }
}
