//! Route checks: pattern syntax, priority range, targets, duplicates.
//!
//! The pattern rules are the runtime's (`agent_runtime::RoutePattern::parse`); a test in the
//! workspace asserts both accept exactly the same patterns.

use std::collections::{HashMap, HashSet};

use crate::model::{RouteDef, RouteTargetDef, Span};

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;
use super::quote::{quote_char, quote_name};
use super::suggest::{did_you_mean, list};

/// What a route may target in this agent.
pub struct Targets<'a> {
    /// The agent's actions.
    pub actions: Vec<&'a str>,
    /// The strategy's events (empty unless the strategy has events).
    pub events: Vec<&'a str>,
    /// The agent's name, for messages.
    pub agent: &'a str,
    /// Every action and event, for lookups.
    names: HashSet<&'a str>,
}

impl<'a> Targets<'a> {
    /// The targets of an agent with these actions and events.
    pub fn new(agent: &'a str, actions: Vec<&'a str>, events: Vec<&'a str>) -> Self {
        let names = actions.iter().chain(&events).copied().collect();
        Targets {
            actions,
            events,
            agent,
            names,
        }
    }

    fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    fn describe(&self) -> &'static str {
        if self.events.is_empty() {
            "an action"
        } else {
            "an event or action"
        }
    }
}

/// Checks every route of an agent.
pub fn check_routes(cx: &Ctxt, routes: &[RouteDef], targets: &Targets<'_>) {
    // The first route of each (pattern, target), so duplicates are found in one pass.
    let mut first: HashMap<(&str, Option<String>), &RouteDef> = HashMap::new();
    for route in routes {
        check_pattern(cx, &route.pattern.value, route.pattern.span);
        if let Some(priority) = &route.priority
            && !(-100..=100).contains(&priority.value)
        {
            cx.push(
                Diagnostic::error(
                    codes::ROUTE_PRIORITY,
                    priority.span,
                    format!("route priority {} is outside -100..=100", priority.value),
                )
                .label("out of range")
                .help("use a priority between -100 and 100 (agent routes default to 0)"),
            );
        }
        check_target(cx, &route.target, targets);
        let key = (route.pattern.value.as_str(), route.target.name());
        let first = *first.entry(key).or_insert(route);
        if !std::ptr::eq(first, route) {
            cx.push(
                Diagnostic::error(
                    codes::DUPLICATE_ROUTE,
                    route.span,
                    format!(
                        "duplicate route {} => `{}`",
                        quote_name(&route.pattern.value),
                        route.target.name().unwrap_or_else(|| "tick".into())
                    ),
                )
                .label("routed again here")
                .secondary(first.span, "first routed")
                .help("remove one of the two routes"),
            );
        }
    }
}

fn check_target(cx: &Ctxt, target: &RouteTargetDef, targets: &Targets<'_>) {
    let RouteTargetDef::Named(path) = target else {
        return;
    };
    let name = target.name().unwrap_or_default();
    if targets.contains(&name) {
        return;
    }
    let candidates = targets.actions.iter().chain(&targets.events).copied();
    let help = cx
        .suggest(|| did_you_mean(&name, candidates.clone()))
        .unwrap_or_else(|| {
            let all: Vec<&str> = candidates.collect();
            if all.is_empty() {
                format!("declare it with `actions [{name}]`")
            } else {
                format!(
                    "route to {} or declare it with `actions [..., {name}]`",
                    list(&all)
                )
            }
        });
    cx.push(
        Diagnostic::error(
            codes::ROUTE_TARGET,
            path.span,
            format!(
                "route target `{name}` is not {} of agent `{}`",
                targets.describe(),
                targets.agent
            ),
        )
        .label("unknown target")
        .help(help),
    );
}

/// Checks a pattern; reports at most one problem (the first), pointing at the segment when the
/// span allows it.
pub fn check_pattern(cx: &Ctxt, pattern: &str, span: Span) {
    let example =
        "a pattern is dot-separated segments such as `order.paid`, `order.*` or `order.**`";
    if pattern.is_empty() {
        cx.push(
            Diagnostic::error(codes::ROUTE_PATTERN, span, "route pattern is empty")
                .label("empty pattern")
                .help(example),
        );
        return;
    }
    let mut offset = 0;
    for segment in pattern.split('.') {
        let at = inner_span(span, offset, segment.len().max(1));
        match segment {
            "" => {
                cx.push(
                    Diagnostic::error(
                        codes::ROUTE_PATTERN,
                        at,
                        format!("route pattern {} has an empty segment", quote_name(pattern)),
                    )
                    .label("empty segment")
                    .help(example),
                );
                return;
            }
            "*" | "**" => {}
            stars if stars.bytes().all(|b| b == b'*') => {
                cx.push(
                    Diagnostic::error(
                        codes::ROUTE_PATTERN,
                        at,
                        format!(
                            "route pattern {} has an invalid segment {}",
                            quote_name(pattern),
                            quote_name(stars)
                        ),
                    )
                    .label("invalid wildcard")
                    .help("use `*` for exactly one segment or `**` for any number of segments"),
                );
                return;
            }
            literal => {
                if let Some((i, bad)) = literal
                    .char_indices()
                    .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
                {
                    cx.push(
                        Diagnostic::error(
                            codes::ROUTE_PATTERN,
                            inner_span(span, offset + i, bad.len_utf8()),
                            format!(
                                "route pattern {} has an invalid character {} in segment {}",
                                quote_name(pattern),
                                quote_char(bad),
                                quote_name(literal)
                            ),
                        )
                        .label("invalid character")
                        .help("a segment is `*`, `**`, or letters, digits, `_` and `-`"),
                    );
                    return;
                }
            }
        }
        offset += segment.len() + 1;
    }
}

/// The span of bytes `offset..offset + len` of a string literal's contents; the literal's own
/// span when it cannot be narrowed (macro input).
fn inner_span(literal: Span, offset: usize, len: usize) -> Span {
    match literal {
        Span::File { file, start, end } => {
            let from = (start + 1 + offset).min(end);
            Span::File {
                file,
                start: from,
                end: (from + len).min(end),
            }
        }
        other => other,
    }
}
