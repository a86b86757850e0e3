//! Statecharts with parallel regions and completion (`parallel X { ... }`, `final S`,
//! `when done`): the configuration is a set of active leaves, one per active region, and an
//! event runs SCXML's microstep over it.
//!
//! - Selection: each active leaf, in document order, picks its first enabled row (its own,
//!   then its ancestors', as the generated transition function already orders them). A row
//!   picked by two leaves (a row of their common ancestor) runs once. Two rows whose exit
//!   sets overlap conflict: the one from the deeper source wins, otherwise the earlier one.
//! - The microstep: every state the chosen rows leave is exited (reverse document order),
//!   then the rows' actions run (document order), then every state they enter is entered
//!   (document order: a parallel state's regions in the order written). Entering a state
//!   inside a region enters its sibling regions by default. All or nothing.
//! - Interrupts: a chosen row with `ask x` raises `x` after the macrostep, its payload built
//!   from the state after it; a payload that cannot be built undoes the macrostep. The answer
//!   is the event `x`, fired through the regions like any other.
//! - Completion: entering a `final` state completes its parent; a parallel state completes
//!   when every region has. Each completion is an internal event handled before `cmd`
//!   returns, by the completed state's `when done` row, as its own microstep.
//!
//! Only machines with regions or completion come here (`FsmSpec::PARALLEL`): a statechart
//! without them keeps the single-leaf path of `statechart.rs`, a flat machine the flat one.

use std::collections::VecDeque;

use serde_json::Value;

use super::statechart::{arm, path, run_all, within};
use super::{FsmAction, FsmError, FsmSpec, FsmState, Step, cancel_in_flight, failed};
use crate::agent::Agent;
use crate::directive::Directive;
use crate::error::{AgentError, ErrorContext};

/// A bound on the completions handled after one event: a `when done` row that re-enters a
/// state completing at once would otherwise loop.
const MAX_COMPLETIONS: usize = 1024;

/// A bound on the states one default entry visits (the generated tables are finite trees;
/// this guards a hand-written `FsmSpec`).
const MAX_STATES: usize = 65_536;

/// A chosen row: its index and, for an external row, the leaf its target enters by default
/// (`None`: an internal row, which leaves and enters nothing).
#[derive(Clone, Copy)]
struct Chosen<St> {
    row: u32,
    to: Option<St>,
}

/// The active leaves, in document order.
fn leaves<S: FsmSpec>(fsm: &FsmState<S::State>) -> Vec<S::State> {
    match fsm.chart.as_deref() {
        Some(chart) if !chart.leaves.is_empty() => chart.leaves.clone(),
        _ => vec![fsm.state],
    }
}

/// Appends the leaves entered when `state` is entered by default: following `initial`
/// down, and into every region of a parallel state.
fn default_leaves<S: FsmSpec>(state: S::State, out: &mut Vec<S::State>) {
    let mut stack = vec![state];
    let mut visited = 0;
    while let Some(at) = stack.pop() {
        visited += 1;
        if visited > MAX_STATES {
            break;
        }
        let leaf = S::default_leaf(at);
        if S::parallel(leaf) {
            stack.extend(S::children(leaf).iter().rev());
        } else if !out.contains(&leaf) {
            out.push(leaf);
        }
    }
}

fn sort<S: FsmSpec>(states: &mut Vec<S::State>) {
    states.sort_by_key(|&s| S::position(s));
    states.dedup();
}

/// Whether `leaf` is left by `chosen`: an external row leaves every active state inside its
/// domain.
fn exits<S: FsmSpec>(chosen: &Chosen<S::State>, leaf: S::State) -> bool {
    chosen.to.is_some() && S::domain(chosen.row).is_none_or(|d| within::<S>(leaf, d))
}

/// Adds `new` to the rows chosen for one event, as SCXML's `removeConflictingTransitions`.
fn choose<S: FsmSpec>(
    chosen: &mut Vec<Chosen<S::State>>,
    new: Chosen<S::State>,
    config: &[S::State],
) {
    if chosen.iter().any(|c| c.row == new.row) {
        return;
    }
    let source = S::row_source(new.row);
    let mut preempted = Vec::new();
    for (i, kept) in chosen.iter().enumerate() {
        let overlap = config
            .iter()
            .any(|&l| exits::<S>(kept, l) && exits::<S>(&new, l));
        if !overlap {
            continue;
        }
        let deeper = match (source, S::row_source(kept.row)) {
            (Some(s), Some(k)) => s != k && within::<S>(s, k),
            _ => false,
        };
        if !deeper {
            return;
        }
        preempted.push(i);
    }
    for i in preempted.into_iter().rev() {
        chosen.remove(i);
    }
    chosen.push(new);
}

/// Where a row to a history of `compound` leads, once the compound has been left: the
/// recorded leaves (deep), or the recorded children entered by default (shallow).
fn resume<S: FsmSpec>(
    fsm: &FsmState<S::State>,
    compound: S::State,
    deep: bool,
    out: &mut Vec<S::State>,
) -> bool {
    let Some(chart) = fsm.chart.as_deref() else {
        return false;
    };
    let before = out.len();
    for &(c, leaf) in &chart.history {
        if c != compound {
            continue;
        }
        if deep {
            out.push(leaf);
        } else if let Some(child) = path::<S>(leaf, Some(compound)).last() {
            default_leaves::<S>(child, out);
        }
    }
    out.len() > before
}

/// Whether `state` is in a final configuration: a compound state whose active child is
/// `final`, a parallel state whose every region is.
fn completed<S: FsmSpec>(state: S::State, config: &[S::State]) -> bool {
    let mut stack = vec![state];
    let mut visited = 0;
    while let Some(at) = stack.pop() {
        visited += 1;
        if visited > MAX_STATES {
            return false;
        }
        if S::parallel(at) {
            stack.extend(S::children(at));
        } else if !config
            .iter()
            .any(|&l| S::parent(l) == Some(at) && S::is_final(l))
        {
            return false;
        }
    }
    true
}

/// One microstep: leaves the states `chosen` leave, runs the actions, enters the states they
/// enter, all or nothing. Queues the completions it causes in `done`.
fn microstep<S: FsmSpec>(
    id: &str,
    state: &mut S,
    fsm: &mut FsmState<S::State>,
    chosen: &[Chosen<S::State>],
    params: &Value,
    out: &mut Vec<Directive>,
    done: &mut VecDeque<S::State>,
) -> Result<(), AgentError> {
    let config = leaves::<S>(fsm);
    let mut exited = Vec::new();
    let mut entered = Vec::new();
    let mut new_leaves = Vec::new();
    for c in chosen {
        let Some(to) = c.to else { continue };
        let domain = S::domain(c.row);
        for &leaf in config.iter().filter(|&&l| exits::<S>(c, l)) {
            exited.extend(path::<S>(leaf, domain));
        }
        let mut targets = Vec::new();
        let resumed = S::history(c.row)
            .is_some_and(|(compound, deep)| resume::<S>(fsm, compound, deep, &mut targets));
        if !resumed {
            default_leaves::<S>(to, &mut targets);
        }
        // Entering a state inside a region enters its sibling regions by default.
        let mut i = 0;
        while i < targets.len() {
            for a in path::<S>(targets[i], domain) {
                if !S::parallel(a) {
                    continue;
                }
                for &region in S::children(a) {
                    if !targets.iter().any(|&l| within::<S>(l, region)) {
                        default_leaves::<S>(region, &mut targets);
                    }
                }
            }
            i += 1;
        }
        for &leaf in &targets {
            entered.extend(path::<S>(leaf, domain));
        }
        new_leaves.extend(targets);
    }
    sort::<S>(&mut exited);
    exited.reverse();
    sort::<S>(&mut entered);
    let hooks = |states: &[S::State], hook: fn(S::State) -> Option<FsmAction<S>>| {
        states
            .iter()
            .filter_map(move |&s| hook(s))
            .map(|a| (a, false))
            .collect::<Vec<_>>()
    };
    let mut actions = hooks(&exited, S::exit);
    actions.extend(
        chosen
            .iter()
            .filter_map(|c| S::row_action(c.row))
            .map(|a| (a, true)),
    );
    actions.extend(hooks(&entered, S::enter));
    run_all(id, state, &actions, params, out)?;

    let external = chosen.iter().any(|c| c.to.is_some());
    if !external {
        fsm.started = true;
        return Ok(());
    }
    if !fsm.in_flight.is_empty() {
        cancel_in_flight(&mut fsm.in_flight, out);
    }
    let mut next: Vec<S::State> = config
        .iter()
        .copied()
        .filter(|l| !exited.contains(l))
        .chain(new_leaves)
        .collect();
    sort::<S>(&mut next);
    fsm.state = next.first().copied().unwrap_or(fsm.state);
    let chart = fsm.chart_mut();
    for &left in &exited {
        if S::keeps_history(left) {
            chart.history.retain(|(c, _)| *c != left);
            let records = config.iter().filter(|&&l| within::<S>(l, left));
            chart.history.extend(records.map(|&l| (left, l)));
        }
    }
    chart.timers.retain(|(s, _)| !exited.contains(s));
    chart.leaves = next;
    fsm.started = true;
    fsm.entered = true;
    fsm.generation += 1;
    for &s in &entered {
        arm::<S>(fsm, s, out);
    }
    queue_completions::<S>(fsm, &entered, done);
    Ok(())
}

/// Queues the completions entering `entered` (in document order) causes, as SCXML's
/// `enterStates` does: each `final` state's parent, and a parallel grandparent whose every
/// region is final once that state is entered. States entered after it in document order do
/// not count yet, so a parallel state whose regions all become final in one microstep
/// completes once, after its regions.
fn queue_completions<S: FsmSpec>(
    fsm: &FsmState<S::State>,
    entered: &[S::State],
    done: &mut VecDeque<S::State>,
) {
    let config = leaves::<S>(fsm);
    let entered_later = |leaf: S::State, f: S::State| {
        S::position(leaf) > S::position(f)
            && entered
                .binary_search_by_key(&S::position(leaf), |&s| S::position(s))
                .is_ok()
    };
    for &f in entered.iter().filter(|&&s| S::is_final(s)) {
        let Some(parent) = S::parent(f) else { continue };
        done.push_back(parent);
        if let Some(grand) = S::parent(parent).filter(|&g| S::parallel(g)) {
            let so_far: Vec<S::State> = config
                .iter()
                .copied()
                .filter(|&l| !entered_later(l, f))
                .collect();
            if completed::<S>(grand, &so_far) {
                done.push_back(grand);
            }
        }
    }
}

/// Runs the `when done` rows of the completions in `done`, each its own microstep.
fn complete<S: FsmSpec>(
    id: &str,
    state: &mut S,
    fsm: &mut FsmState<S::State>,
    out: &mut Vec<Directive>,
    done: &mut VecDeque<S::State>,
) -> Result<(), AgentError> {
    let mut handled = 0;
    while let Some(completed) = done.pop_front() {
        handled += 1;
        if handled > MAX_COMPLETIONS {
            return Err(AgentError::Strategy {
                message: format!(
                    "`when done` rows did not settle after {MAX_COMPLETIONS} completions: a row re-enters a state that completes at once"
                ),
            });
        }
        // Left by an earlier completion's row.
        if !leaves::<S>(fsm).iter().any(|&l| within::<S>(l, completed)) {
            continue;
        }
        if let Step::Fire(row, to) = S::done(state, completed) {
            let chosen = [Chosen { row, to: Some(to) }];
            microstep(id, state, fsm, &chosen, &Value::Null, out, done)?;
        }
    }
    Ok(())
}

/// A macrostep: the chosen rows' microstep, the completions it causes and, with `asks`, the
/// interrupts the chosen rows raise; all or nothing.
fn macrostep<S: FsmSpec>(
    id: &str,
    state: &mut S,
    fsm: &mut FsmState<S::State>,
    chosen: &[Chosen<S::State>],
    params: &Value,
    asks: bool,
) -> Result<Vec<Directive>, AgentError> {
    let backup = (state.clone(), fsm.clone());
    let mut out = Vec::new();
    let mut done = VecDeque::new();
    let ran = microstep(id, state, fsm, chosen, params, &mut out, &mut done)
        .and_then(|()| complete(id, state, fsm, &mut out, &mut done))
        .and_then(|()| {
            if asks {
                raise_asks(id, state, fsm, chosen, &mut out)
            } else {
                Ok(())
            }
        });
    match ran {
        Ok(()) => Ok(out),
        Err(error) => {
            (*state, *fsm) = backup;
            Err(error)
        }
    }
}

/// Raises the interrupts of the chosen rows that ask (`... ask approval` in a region), in
/// document order, once the macrostep ran: each payload is built from the state after it, and
/// one that cannot be built fails the macrostep, every region's part of it undone.
#[cold]
#[inline(never)]
fn raise_asks<S: FsmSpec>(
    id: &str,
    state: &S,
    fsm: &mut FsmState<S::State>,
    chosen: &[Chosen<S::State>],
    out: &mut Vec<Directive>,
) -> Result<(), AgentError> {
    for interrupt in chosen.iter().filter_map(|c| S::ask(c.row)) {
        out.extend(super::raise::<S>(id, state, fsm, interrupt)?);
    }
    Ok(())
}

/// Fires `event`: every active region may take a row.
pub(super) fn fire<S: FsmSpec>(
    id: &str,
    state: &mut S,
    fsm: &mut FsmState<S::State>,
    event: S::Event,
    params: &Value,
) -> Result<Vec<Directive>, FsmError<S>> {
    let config = leaves::<S>(fsm);
    let mut chosen = Vec::new();
    let mut refusal = None;
    for &leaf in &config {
        match S::transition(state, leaf, event, params) {
            Step::Fire(row, to) => choose::<S>(&mut chosen, Chosen { row, to: Some(to) }, &config),
            Step::Stay(row) => choose::<S>(&mut chosen, Chosen { row, to: None }, &config),
            Step::Invalid => {}
            step => {
                refusal.get_or_insert((step, leaf));
            }
        }
    }
    if chosen.is_empty() {
        return Err(match refusal {
            Some((Step::GuardFailed(row), leaf)) => {
                super::guard_failed::<S>(state, row, leaf, event, params)
            }
            Some((_, leaf)) => FsmError::GuardRejected { state: leaf, event },
            None => FsmError::InvalidTransition {
                state: fsm.state,
                event,
            },
        });
    }
    let asks = chosen.iter().any(|c| S::ask(c.row).is_some());
    macrostep(id, state, fsm, &chosen, params, asks).map_err(failed)
}

/// Takes one row (a timer's): its microstep and the completions it causes.
pub(super) fn take_one<S: FsmSpec>(
    id: &str,
    state: &mut S,
    fsm: &mut FsmState<S::State>,
    row: u32,
    to: S::State,
    params: &Value,
) -> Result<Vec<Directive>, AgentError> {
    macrostep(
        id,
        state,
        fsm,
        &[Chosen { row, to: Some(to) }],
        params,
        false,
    )
}

/// Enters the initial configuration: every region's default leaf, outermost states first,
/// then the completions that entry causes.
pub(super) fn enter_initial<S: FsmSpec>(agent: &mut Agent<S>) -> Vec<Directive> {
    let (id, state, fsm) = agent.parts_with_id();
    let mut initial = Vec::new();
    default_leaves::<S>(fsm.state, &mut initial);
    sort::<S>(&mut initial);
    let mut entered: Vec<S::State> = initial.iter().flat_map(|&l| path::<S>(l, None)).collect();
    sort::<S>(&mut entered);
    let actions: Vec<_> = entered
        .iter()
        .filter_map(|&s| S::enter(s))
        .map(|a| (a, false))
        .collect();
    let backup = (state.clone(), fsm.clone());
    let mut out = Vec::new();
    let entry = run_all(id, state, &actions, &Value::Null, &mut out).and_then(|()| {
        fsm.entered = true;
        fsm.state = initial.first().copied().unwrap_or(fsm.state);
        let chart = fsm.chart_mut();
        chart.timers.clear();
        chart.leaves = initial;
        for &s in &entered {
            arm::<S>(fsm, s, &mut out);
        }
        let mut done = VecDeque::new();
        queue_completions::<S>(fsm, &entered, &mut done);
        complete(id, state, fsm, &mut out, &mut done)
    });
    if let Err(error) = entry {
        // Not entered: the next command tries again.
        (*state, *fsm) = backup;
        return vec![Directive::error(error, ErrorContext::Strategy)];
    }
    out
}
