//! `routes { "pattern" => target [priority N] ... }`.

use pest::iterators::Pair;

use super::literal::{int, path, string};
use super::{Rule, children, span};
use crate::check::Ctxt;
use crate::model::{FileId, RouteDef, RouteTargetDef};

/// The routes of one `routes` block.
pub fn routes(cx: &Ctxt, file: FileId, pair: Pair<'_, Rule>) -> Vec<RouteDef> {
    children(pair)
        .filter_map(|route| self::route(cx, file, route))
        .collect()
}

fn route(cx: &Ctxt, file: FileId, pair: Pair<'_, Rule>) -> Option<RouteDef> {
    let at = span(file, &pair);
    let mut pattern = None;
    let mut target = None;
    let mut priority = None;
    for part in children(pair) {
        match part.as_rule() {
            Rule::string => pattern = Some(string(cx, file, &part)),
            Rule::route_tick => target = Some(RouteTargetDef::Tick(span(file, &part))),
            Rule::path => {
                let (path, name) = path(file, &part)?;
                // The route points at the target's name, as the macro front-end does.
                target = Some(RouteTargetDef::Named(crate::model::Spanned::new(
                    path.value, name.span,
                )));
            }
            Rule::route_priority => {
                let number = part.into_inner().find(|p| p.as_rule() == Rule::number)?;
                priority = int(cx, file, &number, "a route priority");
                priority.as_ref()?;
            }
            _ => {}
        }
    }
    Some(RouteDef {
        pattern: pattern?,
        target: target?,
        priority,
        span: at,
    })
}
