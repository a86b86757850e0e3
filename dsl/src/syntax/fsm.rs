//! `strategy fsm { ... }` -> [`FsmDef`]: the same model `transitions { ... }` builds in a macro,
//! so the FSM checks, generator and graphs run unchanged.

use pest::iterators::Pair;

use super::literal::{duration, name, path};
use super::{Rule, children, span};
use crate::check::Ctxt;
use crate::model::{
    CompoundDef, FileId, FinalDef, FsmDef, HistoryDef, HookDef, HookKind, RowDef, Span, Spanned,
    TerminalDef, TerminalKind, Trigger,
};

/// Lowers a `strategy_fsm` pair.
pub fn fsm(cx: &Ctxt, file: FileId, pair: Pair<'_, Rule>) -> FsmDef {
    let keyword = pair
        .clone()
        .into_inner()
        .next()
        .map_or_else(|| span(file, &pair), |k| span(file, &k));
    let mut fsm = FsmDef::new(keyword);
    parts(cx, file, pair, &mut fsm, None);
    fsm
}

/// The parts of the top level or of a `state X { ... }` block (`block`). Recursion is bounded:
/// the file's nesting was checked against the limit before pest ran.
fn parts(cx: &Ctxt, file: FileId, pair: Pair<'_, Rule>, fsm: &mut FsmDef, block: Option<&str>) {
    let owner = || block.map(str::to_string);
    for part in children(pair) {
        match part.as_rule() {
            Rule::fsm_initial => {
                if let Some(state) = children(part).next() {
                    let initial = name(file, &state);
                    let compound = block
                        .and_then(|b| fsm.compounds.iter_mut().rev().find(|c| c.state.value == b));
                    match compound {
                        Some(compound) => compound.initial.push(initial),
                        None => fsm.initial.push(initial),
                    }
                }
            }
            Rule::fsm_state | Rule::fsm_parallel => {
                let parallel = part.as_rule() == Rule::fsm_parallel;
                // `kw_state` is skipped by `children`; the first child is the name.
                let Some(state) = children(part.clone()).next() else {
                    continue;
                };
                let keyword = part
                    .clone()
                    .into_inner()
                    .next()
                    .map_or_else(|| span(file, &part), |k| span(file, &k));
                let state = name(file, &state);
                fsm.compounds.push(CompoundDef {
                    state: state.clone(),
                    block: owner(),
                    initial: Vec::new(),
                    parallel,
                    span: keyword,
                });
                parts(cx, file, part, fsm, Some(&state.value));
            }
            Rule::fsm_history => {
                let keyword = part
                    .clone()
                    .into_inner()
                    .next()
                    .map_or_else(|| span(file, &part), |k| span(file, &k));
                let mut deep = false;
                let mut names = Vec::new();
                for p in children(part) {
                    match p.as_rule() {
                        Rule::history_deep => deep = true,
                        Rule::ident => names.push(name(file, &p)),
                        _ => {}
                    }
                }
                let mut names = names.into_iter();
                let Some(history) = names.next() else {
                    continue;
                };
                fsm.histories.push(HistoryDef {
                    name: history,
                    deep,
                    default: names.next(),
                    block: owner(),
                    span: keyword,
                });
            }
            Rule::fsm_terminal => {
                let mut parts = children(part);
                let Some(state) = parts.next() else { continue };
                let kind = match parts.next().map(|o| o.as_str()) {
                    Some("failure") => TerminalKind::Failure,
                    _ => TerminalKind::Success,
                };
                fsm.terminals.push(TerminalDef {
                    state: name(file, &state),
                    kind,
                    block: owner(),
                });
            }
            Rule::fsm_final => {
                if let Some(state) = children(part).next() {
                    fsm.finals.push(FinalDef {
                        state: name(file, &state),
                        block: owner(),
                    });
                }
            }
            Rule::fsm_hook => {
                let mut parts = children(part);
                let (Some(kind), Some(state), Some(action)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    continue;
                };
                let hook = if kind.as_str() == "enter" {
                    HookKind::Enter
                } else {
                    HookKind::Exit
                };
                if let Some((action, _)) = path(file, &action) {
                    fsm.hooks.push(HookDef {
                        kind: Spanned::new(hook, span(file, &kind)),
                        state: name(file, &state),
                        action,
                    });
                }
            }
            Rule::fsm_row => {
                if let Some(mut row) = row(cx, file, part) {
                    row.block = owner();
                    fsm.rows.push(row);
                }
            }
            _ => {}
        }
    }
}

fn row(cx: &Ctxt, file: FileId, pair: Pair<'_, Rule>) -> Option<RowDef> {
    let text = pair.as_str();
    let base = pair.as_span().start();
    let mut parts = children(pair).peekable();
    let from_pair = parts.next()?;
    let from = name(file, &from_pair);
    let internal = parts.peek()?.as_rule() == Rule::row_on;
    let local = parts.peek()?.as_rule() == Rule::row_local;
    if local {
        parts.next();
    }
    let (to, arrow) = if internal {
        // An internal row has no `->`: it is reported at its `on`, as in the macro front-end.
        let on = parts.peek()?.clone().into_inner().next()?;
        (from.clone(), span(file, &on))
    } else {
        // Diagnostics about a whole row point at its `->`, as in the macro front-end.
        let rest = from_pair.as_span().end() - base;
        let arrow_at = rest + text[rest..].find("->")?;
        let arrow = Span::File {
            file,
            start: base + arrow_at,
            end: base + arrow_at + 2,
        };
        (name(file, &parts.next()?), arrow)
    };
    let mut trigger = None;
    let mut guard = None;
    let mut action = None;
    for part in parts {
        match part.as_rule() {
            Rule::row_on => trigger = Some(Trigger::Event(name(file, &children(part).next()?))),
            Rule::row_after => {
                let at = children(part).next()?;
                // A malformed duration is already reported; keep the row (with a stand-in delay
                // that is never generated, since the file has an error) so the machine's other
                // checks do not report it as missing.
                let d = duration(cx, file, &at)
                    .unwrap_or_else(|| Spanned::new(crate::model::DurationMs(1), span(file, &at)));
                trigger = Some(Trigger::After(d));
            }
            Rule::row_done => trigger = Some(Trigger::Done(span(file, &part))),
            Rule::row_guard => guard = Some(path(file, &children(part).next()?)?.0),
            Rule::row_action => action = Some(path(file, &children(part).next()?)?.0),
            _ => {}
        }
    }
    Some(RowDef {
        from,
        to,
        internal,
        local,
        block: None,
        trigger: trigger?,
        guard,
        action,
        span: arrow,
    })
}
