//! FSM checks: every rule of `transitions` (E0301-E0311), once, for both front-ends.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::model::ident::Case;
use crate::model::{
    FsmDef, HookDef, HookKind, Name, RowDef, Span, TerminalDef, Trigger, event_variant,
};

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
    // First declarations by state, and the state names, so this stays linear.
    let mut first_terminal: HashMap<&str, &TerminalDef> = HashMap::new();
    let known: HashSet<&str> = states.iter().map(|s| s.value.as_str()).collect();
    for terminal in &fsm.terminals {
        let first = *first_terminal
            .entry(terminal.state.value.as_str())
            .or_insert(terminal);
        if !std::ptr::eq(first, terminal) {
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
    let mut first_hook: HashMap<(HookKind, &str), &HookDef> = HashMap::new();
    for hook in &fsm.hooks {
        let keyword = hook.kind.value.keyword();
        let first = *first_hook
            .entry((hook.kind.value, hook.state.value.as_str()))
            .or_insert(hook);
        if !std::ptr::eq(first, hook) {
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
        if !known.contains(hook.state.value.as_str()) {
            let candidates = states.iter().map(|s| s.value.as_str());
            let help = match cx.suggest(|| closest(&hook.state.value, candidates)) {
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
    // The first unguarded row of each (state, event) and the first `after` row of each state:
    // all a later row is compared with, so many rows leaving one state stay linear.
    let mut unguarded: HashMap<(&str, &str), &RowDef> = HashMap::new();
    let mut timers: HashMap<&str, &RowDef> = HashMap::new();
    for row in &fsm.rows {
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
                let key = (row.from.value.as_str(), event.value.as_str());
                if let Some(shadow) = unguarded.get(&key) {
                    same_trigger(cx, row, shadow, &format!("on {}", event.value), event.span);
                } else if row.guard.is_none() {
                    unguarded.insert(key, row);
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
                let first = *timers.entry(row.from.value.as_str()).or_insert(row);
                if !std::ptr::eq(first, row) {
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
            Trigger::Done(at) => {
                let key = (row.from.value.as_str(), "when done");
                if let Some(shadow) = unguarded.get(&key) {
                    same_trigger(cx, row, shadow, "when done", *at);
                } else if row.guard.is_none() {
                    unguarded.insert(key, row);
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
    let mut terminals = HashSet::new();
    for t in &fsm.terminals {
        terminals.insert(t.state.value.as_str());
    }
    // States a row leaves from or `initial`/`terminal` name are declared; a name only ever
    // written as a row's target may be a typo of one. Suggestions only ever go from such a name
    // to a declared one, never the other way.
    let mut declared: HashSet<&str> = HashSet::new();
    declared.extend(fsm.initial.iter().map(|n| n.value.as_str()));
    declared.extend(terminals.iter().copied());
    declared.extend(by_state.keys().copied());
    let candidates: Vec<&str> = states
        .iter()
        .map(|s| s.value.as_str())
        .filter(|s| declared.contains(s))
        .collect();
    // A name only written as a target, close to a declared state: a typo, reported once (as a
    // dead end, with the suggestion). What the meant state reaches counts as reached, so the
    // typo does not also make it and the states after it unreachable.
    let mut typos: HashMap<&str, &str> = HashMap::new();
    for state in states {
        let name = state.value.as_str();
        if !declared.contains(name)
            && let Some(meant) = cx.suggest(|| closest(name, others(&candidates, name)))
        {
            typos.insert(name, meant);
        }
    }
    while let Some(state) = queue.pop_front() {
        for row in by_state.get(state).into_iter().flatten() {
            let to = row.to.value.as_str();
            for next in std::iter::once(to).chain(typos.get(to).copied()) {
                let seen = reached.entry(next).or_insert(false);
                if !*seen {
                    *seen = true;
                    queue.push_back(next);
                }
            }
        }
    }
    for state in states {
        if !reached[state.value.as_str()] {
            unreachable_among(cx, others(&candidates, &state.value), state, initial);
        }
        let terminal = terminals.contains(state.value.as_str());
        if !terminal && !by_state.contains_key(state.value.as_str()) {
            dead_end_meant(cx, state, typos.get(state.value.as_str()).copied());
        }
    }
}

/// The candidates other than `name`.
fn others<'a>(candidates: &'a [&'a str], name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    candidates.iter().copied().filter(move |c| *c != name)
}

/// E0307 for `state`, with a did-you-mean among the other states.
pub(super) fn unreachable(cx: &Ctxt, states: &[&Name], state: &Name, initial: &Name) {
    let others = states
        .iter()
        .map(|s| s.value.as_str())
        .filter(|s| *s != state.value);
    unreachable_among(cx, others, state, initial);
}

/// E0307 for `state`, with a did-you-mean among `candidates` (bounded by [`Ctxt::suggest`]).
fn unreachable_among<'a>(
    cx: &Ctxt,
    candidates: impl Iterator<Item = &'a str>,
    state: &Name,
    initial: &Name,
) {
    let help = match cx.suggest(|| closest(&state.value, candidates)) {
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
    dead_end_meant(cx, state, None);
}

/// E0308 for `state`, which may be a typo of the declared state `meant`.
fn dead_end_meant(cx: &Ctxt, state: &Name, meant: Option<&str>) {
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
        .help(match meant {
            Some(meant) => format!(
                "it may be a typo: did you mean `{meant}`? Otherwise mark it `terminal {}` or add a row that leaves it",
                state.value
            ),
            None => format!(
                "mark it `terminal {}` if it ends the machine, or add a row that leaves it",
                state.value
            ),
        }),
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
