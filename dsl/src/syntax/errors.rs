//! Pest errors in a user's words: what was expected (keywords, punctuation, "a name", "a
//! duration such as `500ms`"), what was found, and a "did you mean" when a keyword is misspelt.

use pest::error::{Error, ErrorVariant, InputLocation};

use super::Rule;
use super::lexer::token_at;
use crate::check::quote::quote_name;
use crate::check::suggest::did_you_mean;
use crate::check::{Diagnostic, codes};
use crate::model::{FileId, Span};

/// Converts a pest error into one syntax diagnostic.
pub fn syntax_error(file: FileId, source: &str, error: &Error<Rule>) -> Diagnostic {
    let mut at = match error.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((s, _)) => s,
    };
    // pest reports a failed rule where it started; the attempts know how far parsing got
    // (`total f64` fails at `f64`, where `:` was expected, not at `total`).
    let attempts = error.parse_attempts();
    let further = attempts.as_ref().is_some_and(|a| a.max_position > at);
    if let Some(a) = &attempts
        && further
    {
        at = a.max_position;
    }
    let mut expected: Vec<String> = Vec::new();
    let mut keywords: Vec<String> = Vec::new();
    let mut add = |word: String, keyword: Option<String>| {
        if !expected.contains(&word) {
            expected.push(word);
        }
        if let Some(k) = keyword
            && !keywords.contains(&k)
        {
            keywords.push(k);
        }
    };
    if let Some(a) = &attempts
        && further
    {
        for stack in a.call_stacks() {
            // `ParseAttempt` is not exported: read the rule back from its Debug form.
            let deepest = format!("{:?}", stack.deepest);
            let rule = Rule::all_rules()
                .iter()
                .find(|r| deepest == format!("Rule({r:?})"));
            // Statements (a field, a route) started fine; what failed is inside them.
            let inside = |r: &&Rule| {
                !matches!(
                    r,
                    Rule::field
                        | Rule::route
                        | Rule::fsm_row
                        | Rule::node
                        | Rule::composite
                        | Rule::decorator
                        | Rule::leaf
                )
            };
            if let Some((word, keyword)) = rule.filter(inside).and_then(|r| rule_words(*r)) {
                add(word.to_string(), keyword.map(str::to_string));
            }
        }
    }
    if let ErrorVariant::ParsingError { positives, .. } = &error.variant
        && !further
    {
        for rule in positives {
            if let Some((word, keyword)) = rule_words(*rule) {
                add(word.to_string(), keyword.map(str::to_string));
            }
        }
    }
    if let Some(attempts) = attempts
        && attempts.max_position == at
    {
        for token in attempts.expected_tokens() {
            // `ParsingToken` is not exported; its Display form is the token itself, a range
            // `a..z`, or `BUILTIN_RULE`.
            let token = token.to_string();
            let is_range =
                token.chars().count() == 4 && token.chars().skip(1).take(2).all(|c| c == '.');
            if token == "BUILTIN_RULE" || is_range || is_noise(&token) {
                continue;
            }
            let keyword = token
                .chars()
                .all(|c| c.is_ascii_alphabetic() || c == '_')
                .then(|| token.clone());
            add(format!("`{token}`"), keyword);
        }
    }
    // Seventeen node keywords say less than "a tree node".
    let node_word = rule_words(Rule::node)
        .map(|(w, _)| w.to_string())
        .unwrap_or_default();
    let is_node_keyword = |w: &String| NODE_KEYWORDS.iter().any(|k| w.trim_matches('`') == *k);
    if expected.iter().filter(|w| is_node_keyword(w)).count() >= 3 {
        expected.retain(|w| !is_node_keyword(w));
        if !expected.contains(&node_word) {
            expected.push(node_word);
        }
    }
    // A keyword a longer entry already names ("`enter` or `exit`") is not listed again.
    let single = |w: &String| w.starts_with('`') && w.ends_with('`') && w.matches('`').count() == 2;
    let listed: Vec<String> = expected.iter().filter(|w| !single(w)).cloned().collect();
    expected.retain(|w| !single(w) || !listed.iter().any(|l| l.contains(w.as_str())));
    expected.sort_by_key(|w| (!w.starts_with('`'), w.clone()));
    expected.dedup();

    let (found, span) = match token_at(source, at) {
        Some((start, end)) => (
            quote_name(&source[start..end]),
            Span::File { file, start, end },
        ),
        None => (
            "end of file".to_string(),
            Span::File {
                file,
                start: source.len(),
                end: source.len(),
            },
        ),
    };
    let message = match expected.as_slice() {
        [] => format!("unexpected {found}"),
        [one] => format!("expected {one}, found {found}"),
        [init @ .., last] => format!("expected {} or {last}, found {found}", init.join(", ")),
    };
    let found_word = span
        .byte_range()
        .map(|(_, r)| &source[r])
        .filter(|w| w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or("");
    let help = if found_word.is_empty() {
        None
    } else {
        did_you_mean(found_word, keywords.iter().map(String::as_str))
    };
    Diagnostic::error(codes::SYNTAX, span, message)
        .label(if found == "end of file" {
            "the file ends here".to_string()
        } else {
            format!("unexpected {found}")
        })
        .maybe_help(help)
}

/// The keywords that start a tree node.
const NODE_KEYWORDS: &[&str] = crate::model::NodeKind::KEYWORDS;

/// Tokens pest records that say nothing to a user: whitespace and comment openers, pieces of
/// numbers and names.
fn is_noise(token: &str) -> bool {
    token.trim().is_empty()
        || matches!(
            token,
            "//" | "/*" | "\n" | "\r" | "\t" | "\u{feff}" | "-" | "." | "_" | "'" | "\\"
        )
}

/// A rule in words, and the keyword it stands for (for suggestions). `None` for rules that only
/// make noise in a message (their parts are reported instead).
fn rule_words(rule: Rule) -> Option<(&'static str, Option<&'static str>)> {
    let kw = |k: &'static str| Some((k, Some(k.trim_matches('`'))));
    Some(match rule {
        Rule::EOI => ("end of file", None),
        Rule::ident => ("a name", None),
        Rule::path => ("a name or path", None),
        Rule::string => ("a string", None),
        Rule::number => ("a number", None),
        Rule::duration => ("a duration such as `500ms`", None),
        Rule::rust_type => ("a type", None),
        Rule::literal => ("a value", None),
        Rule::node | Rule::composite | Rule::decorator | Rule::leaf => (
            "a tree node (`sequence`, `selector`, `action`, `condition`...)",
            None,
        ),
        Rule::fsm_row => ("a transition such as `A -> B on event`", None),
        Rule::route => ("a route such as `\"order.paid\" => action`", None),
        Rule::field => ("a state field such as `total: f64 = 0.0`", None),
        Rule::ai_kind => (
            "`react`, `cot`, `cod`, `tot`, `got`, `aot`, `trm` or `adaptive`",
            None,
        ),
        Rule::ai_option => ("an option such as `branching_factor 3`", None),
        Rule::plugin => ("a plugin such as `Quota { max_requests 50 }`", None),
        Rule::plugin_option => ("a plugin option such as `max_requests 50`", None),
        Rule::option_value => ("a number, a string or a name", None),
        Rule::hook_kind => ("`enter` or `exit`", None),
        Rule::outcome => ("`success` or `failure`", None),
        Rule::lit_true => return kw("`true`"),
        Rule::lit_false => return kw("`false`"),
        Rule::lit_none => return kw("`none`"),
        Rule::agent => return kw("`agent`"),
        Rule::behavior => return kw("`behavior`"),
        other => return keyword(other).map(|k| (k, Some(k.trim_matches('`')))),
    })
}

fn keyword(rule: Rule) -> Option<&'static str> {
    Some(match rule {
        Rule::kw_agent => "`agent`",
        Rule::kw_behavior => "`behavior`",
        Rule::kw_description => "`description`",
        Rule::kw_state => "`state`",
        Rule::kw_actions => "`actions`",
        Rule::kw_strategy => "`strategy`",
        Rule::kw_routes => "`routes`",
        Rule::kw_tick => "`tick`",
        Rule::kw_every => "`every`",
        Rule::kw_direct => "`direct`",
        Rule::kw_fsm => "`fsm`",
        Rule::kw_initial => "`initial`",
        Rule::kw_interrupt => "`interrupt`",
        Rule::kw_migrate => "`migrate`",
        Rule::kw_was => "`was`",
        Rule::kw_field => "`field`",
        Rule::kw_with => "`with`",
        Rule::kw_ask => "`ask`",
        Rule::kw_history => "`history`",
        Rule::kw_deep => "`deep`",
        Rule::kw_local => "`local`",
        Rule::kw_final => "`final`",
        Rule::kw_when => "`when`",
        Rule::kw_done => "`done`",
        Rule::kw_terminal => "`terminal`",
        Rule::kw_as => "`as`",
        Rule::kw_do => "`do`",
        Rule::kw_on => "`on`",
        Rule::kw_after => "`after`",
        Rule::kw_if => "`if`",
        Rule::kw_model => "`model`",
        Rule::kw_system => "`system`",
        Rule::kw_tools => "`tools`",
        Rule::kw_approve => "`approve`",
        Rule::kw_max_iterations => "`max_iterations`",
        Rule::kw_temperature => "`temperature`",
        Rule::kw_max_tokens => "`max_tokens`",
        Rule::kw_priority => "`priority`",
        Rule::kw_sequence => "`sequence`",
        Rule::kw_reactive_sequence => "`reactive_sequence`",
        Rule::kw_selector => "`selector`",
        Rule::kw_reactive_selector => "`reactive_selector`",
        Rule::kw_parallel => "`parallel`",
        Rule::kw_success => "`success`",
        Rule::kw_failure => "`failure`",
        Rule::kw_invert => "`invert`",
        Rule::kw_force_success => "`force_success`",
        Rule::kw_force_failure => "`force_failure`",
        Rule::kw_run_once => "`run_once`",
        Rule::kw_repeat => "`repeat`",
        Rule::kw_retry => "`retry`",
        Rule::kw_timeout => "`timeout`",
        Rule::kw_delay => "`delay`",
        Rule::kw_action => "`action`",
        Rule::kw_condition => "`condition`",
        Rule::kw_wait => "`wait`",
        Rule::kw_subtree => "`subtree`",
        Rule::kw_mut => "`mut`",
        Rule::kw_plugins => "`plugins`",
        Rule::kw_custom => "`custom`",
        Rule::kw_default_plugins => "`default_plugins`",
        _ => return None,
    })
}
