//! Routes as declared.

use super::span::{Span, Spanned};

/// `"pattern" => target [priority N]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteDef {
    /// The pattern, without quotes.
    pub pattern: Spanned<String>,
    /// What the route reaches.
    pub target: RouteTargetDef,
    /// `priority N`, if given (checked against -100..=100).
    pub priority: Option<Spanned<i64>>,
    /// The whole route.
    pub span: Span,
}

/// A route's target as written.
#[derive(Debug, Clone, PartialEq)]
pub enum RouteTargetDef {
    /// An action or event, by name or path (the last segment is the name).
    Named(Spanned<syn::Path>),
    /// `tick`: tick the strategy.
    Tick(Span),
}

impl RouteTargetDef {
    /// The target's name (the path's last segment), or `None` for `tick`.
    pub fn name(&self) -> Option<String> {
        match self {
            RouteTargetDef::Named(path) => path.value.segments.last().map(|s| s.ident.to_string()),
            RouteTargetDef::Tick(_) => None,
        }
    }

    /// Where the target was written.
    pub fn span(&self) -> Span {
        match self {
            RouteTargetDef::Named(path) => path.span,
            RouteTargetDef::Tick(span) => *span,
        }
    }
}
