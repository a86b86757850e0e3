//! `agent Name { ... }` -> [`AgentDef`].

use pest::iterators::Pair;

use super::literal::{duration, literal, name, path, rust_type, string};
use super::routes::routes;
use super::{Rule, children, span};
use crate::check::Ctxt;
use crate::model::{
    ActionRef, AgentDef, Field, FileId, MigrationDef, PluginDef, PluginOption, Rename, Span,
    Spanned, StateDef, StrategyDef,
};

/// Lowers an `agent` pair. Parts may come in any order; repeated once-only parts are recorded
/// for the checker, repeated `state`, `actions` and `routes` blocks append.
pub fn agent(cx: &Ctxt, file: FileId, pair: Pair<'_, Rule>) -> AgentDef {
    let mut parts = children(pair);
    let name = parts
        .next()
        .map(|p| name(file, &p))
        .expect("the grammar requires an agent name");
    let mut def = AgentDef::new(name, StateDef::Fields(Vec::new()));
    for part in parts {
        let at = span(file, &part);
        match part.as_rule() {
            Rule::description => {
                if let Some(text) = children(part).next() {
                    let text = string(cx, file, &text);
                    def.description.set(text.value, text.span);
                }
            }
            Rule::state => {
                let StateDef::Fields(fields) = &mut def.state else {
                    unreachable!("file agents declare their fields")
                };
                let declared: Vec<Field> =
                    children(part).filter_map(|f| field(cx, file, f)).collect();
                def.schema
                    .extend(declared.iter().map(|f| (f.name.clone(), f.ty.clone())));
                fields.extend(declared);
            }
            Rule::actions => {
                for p in children(part) {
                    if let Some((path, name)) = path(file, &p) {
                        def.actions.push(ActionRef { path, name });
                    }
                }
            }
            Rule::tick => {
                if let Some(d) = children(part).next().and_then(|d| duration(cx, file, &d)) {
                    def.tick.set(d.value, at);
                }
            }
            Rule::routes => def.routes.extend(routes(cx, file, part)),
            Rule::plugins => {
                let plugins = children(part).filter_map(|p| plugin(cx, file, p)).collect();
                def.plugins.set(plugins, at);
            }
            Rule::migrate => {
                if let Some(migration) = migration(cx, file, part) {
                    def.migrations.push(migration);
                }
            }
            Rule::default_plugins => {
                if let Some(value) = children(part).next() {
                    def.default_plugins
                        .set(value.as_rule() == Rule::lit_true, span(file, &value));
                }
            }
            Rule::strategy => {
                // "Given twice" points at `strategy fsm`, not at the whole block.
                let head = head_span(file, &part).unwrap_or(at);
                if let Some(strategy) = strategy(cx, file, part) {
                    def.strategy.set(strategy, head);
                }
            }
            _ => {}
        }
    }
    def
}

/// `Name { option value ... }` or `custom(path) { ... }` -> [`PluginDef`].
fn plugin(cx: &Ctxt, file: FileId, pair: Pair<'_, Rule>) -> Option<PluginDef> {
    let mut parts = children(pair);
    let head = parts.next()?;
    let (name, custom) = if head.as_rule() == Rule::plugin_custom {
        let keyword = head.clone().into_inner().next()?;
        let (path, _) = children(head).find_map(|p| path(file, &p))?;
        let name = Spanned::new("custom".to_string(), span(file, &keyword));
        (name, Some(path))
    } else {
        (name(file, &head), None)
    };
    let options = parts
        .filter_map(|p| super::ai::reasoning_option(cx, file, p))
        .map(|o| PluginOption {
            name: o.name,
            value: o.value,
        })
        .collect();
    Some(PluginDef {
        name,
        custom,
        options,
    })
}

fn field(cx: &Ctxt, file: FileId, pair: Pair<'_, Rule>) -> Option<Field> {
    let mut parts = children(pair);
    let name = name(file, &parts.next()?);
    let ty = rust_type(cx, file, &parts.next()?)?;
    let default = match parts.next() {
        Some(lit) => Some(literal(cx, file, lit)?),
        None => None,
    };
    Some(Field { name, ty, default })
}

fn strategy(cx: &Ctxt, file: FileId, pair: Pair<'_, Rule>) -> Option<StrategyDef> {
    let inner = children(pair).next()?;
    match inner.as_rule() {
        Rule::strategy_direct => Some(StrategyDef::Direct),
        Rule::strategy_fsm => Some(StrategyDef::Fsm(super::fsm::fsm(cx, file, inner))),
        Rule::strategy_behavior => Some(StrategyDef::BehaviorTree(super::tree::strategy(
            cx, file, inner,
        ))),
        Rule::strategy_ai => super::ai::ai(cx, file, inner).map(|ai| StrategyDef::Ai(Box::new(ai))),
        _ => None,
    }
}

/// `strategy <kind>`: from the `strategy` keyword to the end of the kind's keyword.
fn head_span(file: FileId, part: &Pair<'_, Rule>) -> Option<Span> {
    let start = part.as_span().start();
    let inner = children(part.clone()).next()?;
    let kind = inner.into_inner().next()?;
    Some(Span::File {
        file,
        start,
        end: kind.as_span().end(),
    })
}

/// `migrate "<fingerprint>" { ... }`.
fn migration(cx: &Ctxt, file: FileId, pair: Pair<'_, Rule>) -> Option<MigrationDef> {
    let keyword = pair
        .clone()
        .into_inner()
        .next()
        .map_or_else(|| span(file, &pair), |k| span(file, &k));
    let mut parts = children(pair);
    let from = string(cx, file, &parts.next()?);
    let mut def = MigrationDef::new(from, keyword);
    for part in parts {
        let rule = part.as_rule();
        let mut inner = children(part);
        match rule {
            Rule::migrate_state | Rule::migrate_field => {
                let new = name(file, &inner.next()?);
                let next = inner.next()?;
                match next.as_rule() {
                    Rule::ident => {
                        let rename = Rename {
                            new,
                            old: name(file, &next),
                        };
                        if rule == Rule::migrate_state {
                            def.states.push(rename);
                        } else {
                            def.fields.push(rename);
                        }
                    }
                    _ => def.defaults.push((new, literal(cx, file, next)?)),
                }
            }
            Rule::migrate_with => def.with = Some(path(file, &inner.next()?)?.0),
            _ => {}
        }
    }
    Some(def)
}
