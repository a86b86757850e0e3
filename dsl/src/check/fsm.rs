//! FSM checks: every rule of `transitions` (E0301-E0311), once, for both front-ends.

use std::collections::{HashMap, VecDeque};

use crate::model::ident::Case;
use crate::model::{FsmDef, Name, RowDef, Span, Trigger, event_variant};

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;
use super::names::{check_ident, check_identifier};
use super::suggest::closest;

/// Names the generated `<Agent>State` / `<Agent>Event` enums use for their own items; a state or
/// event variant with one of these names would collide with them.
pub const RESERVED: &[&str] = &["ALL", "DOT", "MERMAID", "name", "from_name", "with"];

/// Runs every FSM check of one agent's machine.
pub(crate) fn check_fsm(cx: &Ctxt, fsm: &FsmDef) {
    let states = fsm.states();
    names(cx, fsm, &states);
    initial(cx, fsm);
    declarations(cx, fsm, &states);
    rows(cx, fsm);
    if fsm.is_nested() {
        super::statechart::check_statechart(cx, fsm);
    } else {
        reachability(cx, fsm, &states);
    }
}

/// States and events become Rust identifiers (variants of `<Agent>State` / `<Agent>Event`).
fn names(cx: &Ctxt, fsm: &FsmDef, states: &[&Name]) {
    for state in states {
        check_identifier(cx, state, "state");
        reserved(cx, state, &state.value, "state");
    }
    let events = fsm.events();
    let mut variants: HashMap<String, &Name> = HashMap::new();
    for event in &events {
        check_ident(cx, event, "event", Case::UpperCamel);
        let variant = event_variant(&event.value);
        reserved(cx, event, &variant, "event");
        let first = *variants.entry(variant.clone()).or_insert(event);
        if !std::ptr::eq(first, *event) {
            cx.push(
                Diagnostic::error(
                    codes::RESERVED_NAME,
                    event.span,
                    format!(
                        "events `{}` and `{}` both become the variant `{variant}` of the generated event enum",
                        first.value, event.value
                    ),
                )
                .label("collides with an earlier event")
                .secondary(first.span, format!("`{}` first used", first.value))
                .help("rename one of the two events"),
            );
        }
    }
}

fn reserved(cx: &Ctxt, name: &Name, variant: &str, what: &str) {
    if RESERVED.contains(&variant) {
        cx.push(
            Diagnostic::error(
                codes::RESERVED_NAME,
                name.span,
                format!(
                    "{what} `{}` collides with the generated item `{variant}` of the {what} enum",
                    name.value
                ),
            )
            .label("reserved by the generated code")
            .help(format!(
                "rename the {what}; {} are taken",
                super::suggest::list(RESERVED)
            )),
        );
    }
}

fn initial(cx: &Ctxt, fsm: &FsmDef) {
    match fsm.initial.as_slice() {
        [] => cx.push(
            Diagnostic::error(
                codes::FSM_NO_INITIAL,
                fsm.span,
                "this FSM has no `initial` state",
            )
            .label("no `initial` in this block")
            .help(match fsm.rows.first().map(|r| &r.from) {
                Some(first) => format!(
                    "declare where the machine starts, for example `initial {}`",
                    first.value
                ),
                None => "declare where the machine starts with `initial StateName`".to_string(),
            }),
        ),
        [first, rest @ ..] => {
            for again in rest {
                cx.push(
                    Diagnostic::error(
                        codes::FSM_TWO_INITIALS,
                        again.span,
                        format!(
                            "this FSM has more than one `initial` state: `{}` and `{}`",
                            first.value, again.value
                        ),
                    )
                    .label("second `initial`")
                    .secondary(first.span, "first `initial`")
                    .help("an FSM starts in exactly one state; keep one `initial`"),
                );
            }
        }
    }
}

/// Repeated `terminal`s and hooks, and hooks on states the machine does not have.
fn declarations(cx: &Ctxt, fsm: &FsmDef, states: &[&Name]) {
    for (i, terminal) in fsm.terminals.iter().enumerate() {
        if let Some(first) = fsm.terminals[..i]
            .iter()
            .find(|t| t.state.value == terminal.state.value)
        {
            cx.push(
                Diagnostic::error(
                    codes::FSM_DUPLICATE_DECLARATION,
                    terminal.state.span,
                    format!(
                        "state `{}` is declared `terminal` twice",
                        terminal.state.value
                    ),
                )
                .label("declared again")
                .secondary(first.state.span, "first declared")
                .help("keep one `terminal` declaration (with `as failure` if it ends in failure)"),
            );
        }
    }
    for (i, hook) in fsm.hooks.iter().enumerate() {
        let keyword = hook.kind.value.keyword();
        if let Some(first) = fsm.hooks[..i]
            .iter()
            .find(|h| h.kind.value == hook.kind.value && h.state.value == hook.state.value)
        {
            cx.push(
                Diagnostic::error(
                    codes::FSM_DUPLICATE_DECLARATION,
                    hook.state.span,
                    format!("state `{}` has two `{keyword}` actions", hook.state.value),
                )
                .label(format!("second `{keyword}`"))
                .secondary(first.state.span, format!("first `{keyword}`"))
                .help(format!(
                    "a state has at most one `{keyword}` action; call both from one action"
                )),
            );
        }
        if !states.iter().any(|s| s.value == hook.state.value) {
            let help = match closest(&hook.state.value, states.iter().map(|s| s.value.as_str())) {
                Some(close) => format!("did you mean `{close}`?"),
                None => format!(
                    "`{keyword}` attaches an action to a state of this machine; states are declared by `initial`, `terminal` and rows"
                ),
            };
            cx.push(
                Diagnostic::error(
                    codes::FSM_HOOK_UNKNOWN_STATE,
                    hook.state.span,
                    format!(
                        "`{keyword}` names state `{}`, which no `initial`, `terminal` or row mentions",
                        hook.state.value
                    ),
                )
                .label("unknown state")
                .help(help),
            );
        }
    }
}

/// Rows: leaving a terminal state, duplicates, shadowed guards, timers.
fn rows(cx: &Ctxt, fsm: &FsmDef) {
    // Indexes keep this linear in the number of rows (see `benches/compile.rs`).
    let mut terminals: HashMap<&str, &Name> = HashMap::new();
    for t in &fsm.terminals {
        terminals.entry(t.state.value.as_str()).or_insert(&t.state);
    }
    let mut seen: HashMap<&str, Vec<&RowDef>> = HashMap::new();
    for row in &fsm.rows {
        let earlier = seen.entry(row.from.value.as_str()).or_default();
        let earlier_rows = earlier.clone();
        earlier.push(row);
        let earlier = earlier_rows;
        if let Some(terminal_state) = terminals.get(row.from.value.as_str()) {
            cx.push(
                Diagnostic::error(
                    codes::FSM_TERMINAL_OUTGOING,
                    row.from.span,
                    format!("terminal state `{}` has an outgoing row", row.from.value),
                )
                .label("leaves a terminal state")
                .secondary(terminal_state.span, "declared terminal")
                .help(format!(
                    "no event leaves a terminal state; remove this row or drop `terminal {}`",
                    row.from.value
                )),
            );
        }
        match &row.trigger {
            Trigger::Event(event) => {
                let unguarded = earlier.iter().find(|r| {
                    r.event().is_some_and(|e| e.value == event.value) && r.guard.is_none()
                });
                if let Some(shadow) = unguarded {
                    same_trigger(cx, row, shadow, &format!("on {}", event.value), event.span);
                }
            }
            Trigger::After(after) => {
                if after.value.0 == 0 {
                    cx.push(
                        Diagnostic::error(
                            codes::FSM_ZERO_AFTER,
                            after.span,
                            format!(
                                "`after 0ms` on `{} -> {}` would fire at once",
                                row.from.value, row.to.value
                            ),
                        )
                        .label("zero duration")
                        .help("give a positive duration such as `500ms` or `30s`, or use an event row"),
                    );
                }
                if let Some(first) = earlier.iter().find(|r| r.after().is_some()) {
                    cx.push(
                        Diagnostic::error(
                            codes::FSM_TWO_AFTERS,
                            after.span,
                            format!("state `{}` has two `after` rows", row.from.value),
                        )
                        .label("second timer")
                        .secondary(first.span, "first `after` row")
                        .help("a state arms one timer on entry; keep the shorter `after` row, or move the other to a state of its own"),
                    );
                }
            }
        }
    }
}

/// `row` comes after `shadow`, an unguarded row for the same state and event.
fn same_trigger(cx: &Ctxt, row: &RowDef, shadow: &RowDef, trigger: &str, at: Span) {
    let diagnostic = match &row.guard {
        None => Diagnostic::error(
            codes::FSM_DUPLICATE_ROW,
            at,
            format!(
                "two unguarded rows for `{}` `{trigger}`",
                row.from.value
            ),
        )
        .label("second unguarded row")
        .secondary(shadow.span, format!("first unguarded row `{} -> {}`", shadow.from.value, shadow.to.value))
        .help("only the first of them could ever fire; remove one, or add `if guard` to the first"),
        Some(guard) => Diagnostic::error(
            codes::FSM_SHADOWED_ROW,
            guard.span,
            format!(
                "row `{} -> {} {trigger} if ...` can never fire: an unguarded row for `{}` `{trigger}` comes before it",
                row.from.value, row.to.value, row.from.value
            ),
        )
        .label("this guard is never tried")
        .secondary(
            shadow.span,
            format!("shadowed by the unguarded row `{} -> {} {trigger}`", shadow.from.value, shadow.to.value),
        )
        .help("rows are tried in order and the unguarded row always fires; move this guarded row above it"),
    };
    cx.push(diagnostic);
}

/// Unreachable states and non-terminal dead ends (of a flat machine).
fn reachability(cx: &Ctxt, fsm: &FsmDef, states: &[&Name]) {
    let Some(initial) = fsm.initial_state() else {
        return;
    };
    let mut reached: HashMap<&str, bool> =
        states.iter().map(|s| (s.value.as_str(), false)).collect();
    let mut queue = VecDeque::from([initial.value.as_str()]);
    reached.insert(&initial.value, true);
    let by_state = fsm.rows_by_state();
    let mut terminals = std::collections::HashSet::new();
    for t in &fsm.terminals {
        terminals.insert(t.state.value.as_str());
    }
    while let Some(state) = queue.pop_front() {
        for row in by_state.get(state).into_iter().flatten() {
            let seen = reached.entry(row.to.value.as_str()).or_insert(false);
            if !*seen {
                *seen = true;
                queue.push_back(&row.to.value);
            }
        }
    }
    for state in states {
        if !reached[state.value.as_str()] {
            unreachable(cx, states, state, initial);
        }
        let terminal = terminals.contains(state.value.as_str());
        if !terminal && !by_state.contains_key(state.value.as_str()) {
            dead_end(cx, state);
        }
    }
}

/// E0307 for `state`.
pub(super) fn unreachable(cx: &Ctxt, states: &[&Name], state: &Name, initial: &Name) {
    let others = states
        .iter()
        .map(|s| s.value.as_str())
        .filter(|s| *s != state.value);
    let help = match closest(&state.value, others) {
        Some(close) => format!(
            "it may be a typo: did you mean `{close}`? Otherwise add a row that leads to `{}`",
            state.value
        ),
        None => format!(
            "it may be a typo; otherwise add a row that leads to `{}`",
            state.value
        ),
    };
    cx.push(
        Diagnostic::error(
            codes::FSM_UNREACHABLE,
            state.span,
            format!(
                "state `{}` is unreachable from the initial state `{}`",
                state.value, initial.value
            ),
        )
        .label("no row leads here")
        .help(help),
    );
}

/// E0308 for `state`.
pub(super) fn dead_end(cx: &Ctxt, state: &Name) {
    cx.push(
        Diagnostic::error(
            codes::FSM_DEAD_END,
            state.span,
            format!(
                "state `{}` is not terminal and no row leaves it",
                state.value
            ),
        )
        .label("the machine would be stuck here")
        .help(format!(
            "mark it `terminal {}` if it ends the machine, or add a row that leaves it",
            state.value
        )),
    );
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use crate::check;
    use crate::model::AgentDef;

    fn agent(attr: proc_macro2::TokenStream) -> AgentDef {
        let item: syn::Item = syn::parse2(quote!(
            struct Order;
        ))
        .unwrap();
        crate::tokens::agent(attr, &item).unwrap()
    }

    fn codes(attr: proc_macro2::TokenStream) -> Vec<&'static str> {
        match check::agent(&agent(attr)) {
            Ok(_) => Vec::new(),
            Err(all) => all.iter().map(|d| d.code.id).collect(),
        }
    }

    #[test]
    fn the_order_machine_is_accepted() {
        let def = agent(quote!(strategy = Fsm, transitions {
            initial Cart
            terminal Delivered
            terminal Cancelled as failure
            enter Paid do send_receipt
            exit Pending do release_hold
            Cart    -> Pending   on checkout do validate_order
            Pending -> Paid      on pay      if paid_in_full do charge
            Pending -> Cancelled on cancel
            Pending -> Cancelled after 30m
            Paid    -> Delivered on deliver
        }, routes { "order.pay" => pay }));
        assert_eq!(check::agent(&def), Ok(Vec::new()));
        let crate::model::StrategyDef::Fsm(fsm) = def.strategy.get().unwrap() else {
            panic!()
        };
        let states: Vec<&str> = fsm.states().iter().map(|s| s.value.as_str()).collect();
        assert_eq!(
            states,
            ["Cart", "Delivered", "Cancelled", "Pending", "Paid"]
        );
        let events: Vec<&str> = fsm.events().iter().map(|s| s.value.as_str()).collect();
        assert_eq!(events, ["checkout", "pay", "cancel", "deliver"]);
    }

    #[test]
    fn every_rule_has_its_code() {
        assert_eq!(
            codes(quote!(transitions { terminal B  A -> B on go })),
            ["E0301"]
        );
        assert_eq!(
            codes(quote!(transitions { initial A initial B terminal B A -> B on go })),
            ["E0302"]
        );
        assert_eq!(
            codes(quote!(transitions { initial A terminal B enter C do x A -> B on go })),
            ["E0303"]
        );
        assert_eq!(
            codes(quote!(transitions { initial A terminal B A -> B on go B -> A on back })),
            ["E0304"]
        );
        assert_eq!(
            codes(quote!(transitions { initial A terminal B A -> B on go A -> A on go })),
            ["E0305"]
        );
        assert_eq!(
            codes(quote!(transitions { initial A terminal B A -> B on go A -> A on go if g })),
            ["E0306"]
        );
        assert_eq!(
            codes(quote!(transitions { initial A terminal B A -> B on go C -> B on go })),
            ["E0307"]
        );
        assert_eq!(
            codes(quote!(transitions { initial A terminal B A -> B on go A -> C on other })),
            ["E0308"]
        );
        assert_eq!(
            codes(quote!(transitions { initial A terminal B A -> B after 0ms })),
            ["E0309"]
        );
        assert_eq!(
            codes(quote!(transitions { initial A terminal B A -> B after 1s A -> B after 2s })),
            ["E0310"]
        );
        assert_eq!(
            codes(quote!(transitions { initial A terminal B terminal B A -> B on go })),
            ["E0311"]
        );
        assert_eq!(
            codes(
                quote!(transitions { initial A terminal B A -> B on pay_now A -> B on payNow if g })
            ),
            ["E0108"]
        );
        assert_eq!(
            codes(
                quote!(transitions { initial A terminal B A -> B on go }, routes { "x" => stop })
            ),
            ["E0203"]
        );
    }

    #[test]
    fn an_unreachable_typo_names_the_closest_state() {
        let Err(all) = check::agent(&agent(quote!(transitions {
            initial Cart terminal Done
            Cart -> Pending on checkout
            Pendng -> Done on pay
            Pending -> Done on cancel
        }))) else {
            panic!()
        };
        let unreachable = all.iter().find(|d| d.code.id == "E0307").unwrap();
        assert_eq!(
            unreachable.message,
            "state `Pendng` is unreachable from the initial state `Cart`"
        );
        assert!(
            unreachable
                .help
                .as_deref()
                .unwrap()
                .contains("did you mean `Pending`?"),
            "{unreachable:?}"
        );
    }
}
