//! Routes: which signals reach which targets.
//!
//! A pattern is dot-separated; each segment is a literal of `[A-Za-z0-9_-]`, `*` (exactly one
//! segment) or `**` (zero or more segments). Every matching route runs, ordered by:
//! 1. specificity, most specific first: more literal segments, then more `*` segments, then fewer
//!    `**` segments;
//! 2. priority, highest first (-100..=100; strategy routes default to 50, agent routes to 0,
//!    plugin routes to -10);
//! 3. declaration order.
//!
//! The build-time checks in `agent-dsl` accept exactly the patterns [`RoutePattern::parse`] accepts.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Default priorities of the three route sources.
pub mod priority {
    /// Routes a strategy contributes.
    pub const STRATEGY: i32 = 50;
    /// Routes declared on the agent.
    pub const AGENT: i32 = 0;
    /// Routes plugins contribute.
    pub const PLUGIN: i32 = -10;
    /// The lowest allowed priority.
    pub const MIN: i32 = -100;
    /// The highest allowed priority.
    pub const MAX: i32 = 100;
}

/// Why a route is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[non_exhaustive]
pub enum RouteError {
    /// The pattern is empty.
    #[error("route pattern is empty")]
    EmptyPattern,
    /// A segment is empty (`a..b`, a leading or trailing dot).
    #[error("route pattern `{pattern}` has an empty segment at position {position}")]
    EmptySegment {
        /// The pattern.
        pattern: String,
        /// 1-based segment position.
        position: usize,
    },
    /// A segment is neither a literal, `*` nor `**`.
    #[error(
        "route pattern `{pattern}` has an invalid segment `{segment}`; a segment is `*`, `**` or letters, digits, `_` and `-`"
    )]
    InvalidSegment {
        /// The pattern.
        pattern: String,
        /// The offending segment.
        segment: String,
    },
    /// The priority is outside -100..=100.
    #[error("route priority {priority} is outside -100..=100")]
    PriorityOutOfRange {
        /// The priority given.
        priority: i32,
    },
    /// Two mounted plugins share a state key (a plugin mounted twice).
    #[error("plugin state key `{key}` is mounted twice; each plugin is mounted once")]
    DuplicatePlugin {
        /// The key.
        key: String,
    },
    /// A plugin route has exactly the pattern of one of the agent's own routes.
    #[error(
        "plugin `{plugin}` routes `{pattern}`, which the agent routes too; give the agent's route another pattern or leave the signal to the plugin"
    )]
    PluginRouteCollision {
        /// The plugin's state key.
        plugin: String,
        /// The pattern both declare.
        pattern: String,
    },
}

/// One segment of a pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Segment {
    /// Matches itself.
    Literal(String),
    /// `*`: exactly one segment.
    One,
    /// `**`: zero or more segments.
    Many,
}

/// A parsed route pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RoutePattern {
    raw: String,
    segments: Vec<Segment>,
}

impl RoutePattern {
    /// Parses and validates a pattern.
    ///
    /// ```
    /// use agent_runtime::RoutePattern;
    /// assert!(RoutePattern::parse("order.*.cancel").is_ok());
    /// assert!(RoutePattern::parse("order..cancel").is_err());
    /// assert!(RoutePattern::parse("order.***").is_err());
    /// ```
    pub fn parse(pattern: &str) -> Result<Self, RouteError> {
        if pattern.is_empty() {
            return Err(RouteError::EmptyPattern);
        }
        let segments = pattern
            .split('.')
            .enumerate()
            .map(|(i, seg)| match seg {
                "" => Err(RouteError::EmptySegment {
                    pattern: pattern.to_string(),
                    position: i + 1,
                }),
                "*" => Ok(Segment::One),
                "**" => Ok(Segment::Many),
                lit if lit.bytes().all(is_literal_byte) => Ok(Segment::Literal(lit.to_string())),
                bad => Err(RouteError::InvalidSegment {
                    pattern: pattern.to_string(),
                    segment: bad.to_string(),
                }),
            })
            .collect::<Result<_, _>>()?;
        Ok(RoutePattern {
            raw: pattern.to_string(),
            segments,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// The parsed segments.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Whether a signal type matches.
    ///
    /// ```
    /// use agent_runtime::RoutePattern;
    /// let p = RoutePattern::parse("order.**").unwrap();
    /// assert!(p.matches("order"));
    /// assert!(p.matches("order.a.b"));
    /// assert!(!p.matches("cart.a"));
    /// ```
    pub fn matches(&self, signal_type: &str) -> bool {
        // Iterative glob matching over segments: `*` is a one-segment wildcard, `**` a
        // zero-or-more one; on a mismatch we backtrack to the last `**` and let it eat one more.
        let pat = &self.segments;
        if !pat.contains(&Segment::Many) {
            // Nothing to backtrack to: one pass, segment against segment, no allocation.
            if signal_type.is_empty() {
                return pat.is_empty();
            }
            let mut text = signal_type.split('.');
            for segment in pat {
                match (segment, text.next()) {
                    (Segment::One, Some(_)) => {}
                    (Segment::Literal(lit), Some(t)) if lit == t => {}
                    _ => return false,
                }
            }
            return text.next().is_none();
        }
        let text: Vec<&str> = if signal_type.is_empty() {
            Vec::new()
        } else {
            signal_type.split('.').collect()
        };
        let (mut p, mut t) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while t < text.len() {
            match pat.get(p) {
                Some(Segment::Many) => {
                    star = Some((p, t));
                    p += 1;
                }
                Some(Segment::One) => {
                    p += 1;
                    t += 1;
                }
                Some(Segment::Literal(lit)) if lit == text[t] => {
                    p += 1;
                    t += 1;
                }
                _ => match star {
                    Some((sp, st)) => {
                        p = sp + 1;
                        t = st + 1;
                        star = Some((sp, st + 1));
                    }
                    None => return false,
                },
            }
        }
        pat[p..].iter().all(|s| *s == Segment::Many)
    }

    /// The ordering key: higher is more specific.
    fn specificity(&self) -> (usize, usize, Reverse<usize>) {
        let count = |kind: fn(&Segment) -> bool| self.segments.iter().filter(|s| kind(s)).count();
        (
            count(|s| matches!(s, Segment::Literal(_))),
            count(|s| matches!(s, Segment::One)),
            Reverse(count(|s| matches!(s, Segment::Many))),
        )
    }
}

impl fmt::Display for RoutePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

fn is_literal_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Where a matched signal goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum RouteTarget {
    /// Run this action with the signal's data as parameters.
    Action(Cow<'static, str>),
    /// Fire this FSM event with the signal's data.
    Event(Cow<'static, str>),
    /// Tick the strategy.
    Tick,
    /// A strategy-defined input (the AI strategies' `ai.*` results, for example).
    Custom(Cow<'static, str>),
}

impl RouteTarget {
    /// The action, event or custom name; `None` for `Tick`.
    pub fn name(&self) -> Option<&str> {
        match self {
            RouteTarget::Action(n) | RouteTarget::Event(n) | RouteTarget::Custom(n) => Some(n),
            RouteTarget::Tick => None,
        }
    }
}

/// A route as declared: not yet validated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteSpec {
    /// The pattern.
    pub pattern: Cow<'static, str>,
    /// The target.
    pub target: RouteTarget,
    /// The priority (-100..=100).
    pub priority: i32,
}

impl RouteSpec {
    /// A route declaration.
    pub const fn new(pattern: &'static str, target: RouteTarget, priority: i32) -> Self {
        RouteSpec {
            pattern: Cow::Borrowed(pattern),
            target,
            priority,
        }
    }
}

/// A validated route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The pattern.
    pub pattern: RoutePattern,
    /// The target.
    pub target: RouteTarget,
    /// The priority.
    pub priority: i32,
}

impl Route {
    /// Validates a declaration.
    pub fn new(spec: &RouteSpec) -> Result<Self, RouteError> {
        if !(priority::MIN..=priority::MAX).contains(&spec.priority) {
            return Err(RouteError::PriorityOutOfRange {
                priority: spec.priority,
            });
        }
        Ok(Route {
            pattern: RoutePattern::parse(&spec.pattern)?,
            target: spec.target.clone(),
            priority: spec.priority,
        })
    }
}

/// A set of routes, kept in match order so that matching is a filter.
#[derive(Debug, Clone, Default)]
pub struct Router {
    routes: Vec<Route>,
}

impl Router {
    /// Validates the declarations; the first invalid one is the error.
    pub fn new<'a>(specs: impl IntoIterator<Item = &'a RouteSpec>) -> Result<Self, RouteError> {
        let mut routes: Vec<(usize, Route)> = specs
            .into_iter()
            .map(Route::new)
            .enumerate()
            .map(|(i, r)| r.map(|r| (i, r)))
            .collect::<Result<_, _>>()?;
        routes.sort_by_key(|(order, r)| {
            (
                Reverse(r.pattern.specificity()),
                Reverse(r.priority),
                *order,
            )
        });
        Ok(Router {
            routes: routes.into_iter().map(|(_, r)| r).collect(),
        })
    }

    /// This router plus more declarations (a host's plugin routes), validated, in one match
    /// order. On a tie the routes already here run first, as if declared before `extra`.
    ///
    /// ```
    /// use agent_runtime::{RouteSpec, RouteTarget, Router};
    /// use std::borrow::Cow;
    /// let agent = [RouteSpec::new("a.*", RouteTarget::Action(Cow::Borrowed("agent")), 0)];
    /// let plugin = [RouteSpec::new("a.b", RouteTarget::Action(Cow::Borrowed("plugin")), -10)];
    /// let router = Router::new(&agent).unwrap().extended(&plugin).unwrap();
    /// let order: Vec<_> = router.matches("a.b").map(|r| r.target.name().unwrap()).collect();
    /// assert_eq!(order, ["plugin", "agent"]); // more specific first, whatever the priority
    /// ```
    pub fn extended<'a>(
        &self,
        extra: impl IntoIterator<Item = &'a RouteSpec>,
    ) -> Result<Router, RouteError> {
        let mut routes = self.routes.clone();
        for spec in extra {
            routes.push(Route::new(spec)?);
        }
        // Both halves are already in declaration order, so a stable sort keeps ours first on ties.
        routes.sort_by_key(|r| (Reverse(r.pattern.specificity()), Reverse(r.priority)));
        Ok(Router { routes })
    }

    /// Every route matching `signal_type`, in run order.
    pub fn matches<'a>(&'a self, signal_type: &'a str) -> impl Iterator<Item = &'a Route> + 'a {
        self.routes
            .iter()
            .filter(move |r| r.pattern.matches(signal_type))
    }

    /// All routes, in the order they would run for a type matching them all.
    pub fn routes(&self) -> &[Route] {
        &self.routes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(p: &str) -> RoutePattern {
        RoutePattern::parse(p).unwrap()
    }

    #[test]
    fn matching_table() {
        let table: &[(&str, &str, bool)] = &[
            // exact
            ("order.pay", "order.pay", true),
            ("order.pay", "order.pay.now", false),
            ("order.pay", "order", false),
            ("order.pay", "order.cancel", false),
            // `*`: exactly one segment
            ("order.*", "order.pay", true),
            ("order.*", "order", false),
            ("order.*", "order.pay.now", false),
            ("order.*.cancel", "order.17.cancel", true),
            ("order.*.cancel", "order.cancel", false),
            ("*", "anything", true),
            ("*", "two.parts", false),
            // `**`: zero or more
            ("order.**", "order", true),
            ("order.**", "order.pay", true),
            ("order.**", "order.a.b.c", true),
            ("order.**", "cart.pay", false),
            ("**", "a", true),
            ("**", "a.b.c", true),
            ("a.**.z", "a.z", true),
            ("a.**.z", "a.b.z", true),
            ("a.**.z", "a.b.c.d.z", true),
            ("a.**.z", "a.b.c", false),
            ("a.**.z.**", "a.z", true),
            ("a.**.b.**.c", "a.x.b.y.b.c", true),
            ("a.**.*", "a", false),
            ("a.**.*", "a.b", true),
            ("**.end", "end", true),
            ("**.end", "x.y.end", true),
            ("**.end", "x.y.end.no", false),
        ];
        for (p, t, expected) in table {
            assert_eq!(pattern(p).matches(t), *expected, "`{p}` against `{t}`");
        }
    }

    #[test]
    fn parse_rejections() {
        assert_eq!(RoutePattern::parse(""), Err(RouteError::EmptyPattern));
        assert!(matches!(
            RoutePattern::parse("a..b"),
            Err(RouteError::EmptySegment { position: 2, .. })
        ));
        assert!(matches!(
            RoutePattern::parse(".a"),
            Err(RouteError::EmptySegment { position: 1, .. })
        ));
        for bad in ["a.***", "a.b c", "a.é", "a.*b", "a/b"] {
            assert!(
                matches!(
                    RoutePattern::parse(bad),
                    Err(RouteError::InvalidSegment { .. })
                ),
                "{bad}"
            );
        }
        assert!(RoutePattern::parse("Order_1.x-y.*.**").is_ok());
    }

    #[test]
    fn priority_range_is_checked() {
        let spec = |priority| RouteSpec::new("a", RouteTarget::Tick, priority);
        assert!(Route::new(&spec(100)).is_ok());
        assert!(Route::new(&spec(-100)).is_ok());
        assert_eq!(
            Route::new(&spec(101)),
            Err(RouteError::PriorityOutOfRange { priority: 101 })
        );
        assert!(Route::new(&spec(-101)).is_err());
    }

    fn action(name: &'static str) -> RouteTarget {
        RouteTarget::Action(Cow::Borrowed(name))
    }

    fn order_of(router: &Router, signal_type: &str) -> Vec<String> {
        router
            .matches(signal_type)
            .map(|r| r.target.name().unwrap_or("tick").to_string())
            .collect()
    }

    #[test]
    fn ordering_by_specificity_then_priority_then_declaration() {
        let specs = [
            RouteSpec::new("order.**", action("audit"), 0),
            RouteSpec::new("order.*", action("star_low"), -5),
            RouteSpec::new("order.pay", action("exact"), -50),
            RouteSpec::new("order.*", action("star_high"), 10),
            RouteSpec::new("**", action("everything"), 100),
            RouteSpec::new("order.*", action("star_tie_first"), 0),
            RouteSpec::new("order.*", action("star_tie_second"), 0),
        ];
        let router = Router::new(&specs).unwrap();
        assert_eq!(
            order_of(&router, "order.pay"),
            [
                // most literal segments wins, even at the lowest priority
                "exact",
                // one literal + one `*`: by priority, ties by declaration
                "star_high",
                "star_tie_first",
                "star_tie_second",
                "star_low",
                // one literal + `**`
                "audit",
                // no literal at all, despite priority 100
                "everything",
            ]
        );
        assert_eq!(order_of(&router, "order"), ["audit", "everything"]);
        // An empty type has zero segments: only a pattern of `**` alone matches it.
        assert_eq!(order_of(&router, ""), ["everything"]);
    }

    #[test]
    fn single_wildcard_outranks_double_with_equal_literals() {
        let specs = [
            RouteSpec::new("a.**", action("many"), 50),
            RouteSpec::new("a.*", action("one"), 0),
        ];
        let router = Router::new(&specs).unwrap();
        assert_eq!(order_of(&router, "a.b"), ["one", "many"]);
    }

    #[test]
    fn extended_routers_merge_in_match_order() {
        let agent = [
            RouteSpec::new("order.*", action("agent_star"), 0),
            RouteSpec::new("order.**", action("agent_audit"), 0),
        ];
        let plugin = [
            RouteSpec::new("order.*", action("plugin_star"), 0),
            RouteSpec::new("order.pay", action("plugin_exact"), priority::PLUGIN),
            RouteSpec::new("order.**", action("plugin_audit"), 5),
        ];
        let router = Router::new(&agent).unwrap().extended(&plugin).unwrap();
        assert_eq!(
            order_of(&router, "order.pay"),
            [
                "plugin_exact",
                // a tie: the router's own route first
                "agent_star",
                "plugin_star",
                // same specificity: priority decides
                "plugin_audit",
                "agent_audit",
            ]
        );
        let bad = [RouteSpec::new("order", action("x"), 101)];
        assert_eq!(
            Router::new(&agent).unwrap().extended(&bad).unwrap_err(),
            RouteError::PriorityOutOfRange { priority: 101 }
        );
    }

    #[test]
    fn an_invalid_route_fails_the_router() {
        let specs = [
            RouteSpec::new("ok", action("a"), 0),
            RouteSpec::new("bad..route", action("b"), 0),
        ];
        assert!(matches!(
            Router::new(&specs),
            Err(RouteError::EmptySegment { position: 2, .. })
        ));
    }
}
