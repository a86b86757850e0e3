//! Interrupt checks (E0322-E0324, and E0311 for one declared twice): every `ask` names a
//! declared interrupt, every interrupt has a row that takes its answer, and no route fires an
//! interrupt's event (only `resume` does).

use std::collections::{HashMap, HashSet};

use crate::model::{FsmDef, InterruptDef, RouteDef};

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;
use super::suggest::did_you_mean;

/// Runs the interrupt checks of one machine and its agent's routes.
pub(crate) fn check_interrupts(cx: &Ctxt, fsm: &FsmDef, routes: &[RouteDef]) {
    if fsm.interrupts.is_empty() && fsm.rows.iter().all(|r| r.ask.is_none()) {
        return;
    }
    let mut declared: HashMap<&str, &InterruptDef> = HashMap::new();
    for interrupt in &fsm.interrupts {
        let first = *declared
            .entry(interrupt.name.value.as_str())
            .or_insert(interrupt);
        if !std::ptr::eq(first, interrupt) {
            cx.push(
                Diagnostic::error(
                    codes::FSM_DUPLICATE_DECLARATION,
                    interrupt.name.span,
                    format!("interrupt `{}` is declared twice", interrupt.name.value),
                )
                .label("declared again here")
                .secondary(first.name.span, "first declared")
                .help("remove one of the two declarations"),
            );
        }
    }
    for row in &fsm.rows {
        let Some(ask) = &row.ask else { continue };
        if declared.contains_key(ask.value.as_str()) {
            continue;
        }
        let mut diagnostic = Diagnostic::error(
            codes::FSM_UNKNOWN_INTERRUPT,
            ask.span,
            format!("`ask {}` names no declared interrupt", ask.value),
        )
        .label("unknown interrupt");
        diagnostic = match did_you_mean(&ask.value, declared.keys().copied()) {
            Some(hint) => diagnostic.help(hint),
            None => diagnostic.help(format!(
                "declare it in the machine: `interrupt {}(Payload) -> Answer`",
                ask.value
            )),
        };
        cx.push(diagnostic);
    }
    let answered: HashSet<&str> = fsm
        .rows
        .iter()
        .filter_map(|r| r.event())
        .map(|e| e.value.as_str())
        .collect();
    for interrupt in &fsm.interrupts {
        let name = &interrupt.name.value;
        if !answered.contains(name.as_str()) {
            cx.push(
                Diagnostic::error(
                    codes::FSM_UNANSWERED_INTERRUPT,
                    interrupt.name.span,
                    format!("no row takes the answer to interrupt `{name}`"),
                )
                .label("its answer would fire nothing")
                .help(format!(
                    "the answer fires the event `{name}`: add a row such as `Waiting -> Done on {name}`"
                )),
            );
        }
    }
    for route in routes {
        let Some(target) = route.target.name() else {
            continue;
        };
        if let Some(interrupt) = declared.get(target.as_str()) {
            cx.push(
                Diagnostic::error(
                    codes::FSM_INTERRUPT_ROUTED,
                    route.span,
                    format!(
                        "route {} fires `{target}`, the event that answers interrupt `{target}`",
                        super::quote::quote_name(&route.pattern.value)
                    ),
                )
                .label("routes to an interrupt's answer")
                .secondary(interrupt.name.span, "interrupt declared here")
                .help("an interrupt is answered only by `resume(id, value)`, which checks its id and type; remove the route"),
            );
        }
    }
}
