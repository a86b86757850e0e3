//! Statecharts: machines with compound states (`state X { ... }`) and history.
//!
//! The position is one leaf state; its ancestors are active with it. The generated transition
//! function already chose the row (innermost state first) and the leaf its target enters by
//! default; this module runs the rest as SCXML does: the states from the current leaf up to
//! the row's domain are left (innermost first, `exit` actions), the row's action runs, the
//! states from the domain down to the new leaf are entered (outermost first, `enter` actions,
//! `after` timers armed), all or nothing. Leaving a compound state with a history records the
//! leaf it was left from; a row to the history resumes it (deep) or its child there entered by
//! default (shallow).

use serde_json::Value;

use super::{
    FsmAction, FsmError, FsmName, FsmSpec, FsmState, Route, cancel_in_flight, failed, run_one,
    run_step, timer,
};
use crate::agent::Agent;
use crate::directive::Directive;
use crate::error::{AgentError, ErrorContext};

/// A bound on walks up the parent table: the generator's tables never nest deeper than the
/// language's nesting limit, so this only guards against a hand-written `FsmSpec`.
const MAX_DEPTH: usize = 256;

/// Whether `state` is `of` or inside it.
pub(super) fn within<S: FsmSpec>(state: S::State, of: S::State) -> bool {
    let mut at = Some(state);
    for _ in 0..MAX_DEPTH {
        match at {
            Some(s) if s == of => return true,
            Some(s) => at = S::parent(s),
            None => return false,
        }
    }
    false
}

/// `state` and its ancestors up to (not including) `domain`, innermost first: a walk up the
/// parent table, nothing collected.
pub(super) fn path<S: FsmSpec>(
    state: S::State,
    domain: Option<S::State>,
) -> impl Iterator<Item = S::State> {
    let mut at = Some(state);
    let mut steps = 0;
    std::iter::from_fn(move || {
        let s = at?;
        if Some(s) == domain || steps == MAX_DEPTH {
            return None;
        }
        steps += 1;
        at = S::parent(s);
        Some(s)
    })
}

/// The active states with `leaves`, outermost first (document order with parallel
/// regions), by name (a snapshot's `active`).
pub(super) fn active<S: FsmSpec>(leaves: &[S::State]) -> Value {
    let mut states: Vec<S::State> = Vec::new();
    for &leaf in leaves {
        let mut path = up_to::<S>(leaf, None);
        path.reverse();
        for s in path {
            if !states.contains(&s) {
                states.push(s);
            }
        }
    }
    Value::Array(states.into_iter().map(|s| Value::from(s.name())).collect())
}

/// [`path`], collected (cold paths only: the initial entry, a history's resumption).
pub(super) fn up_to<S: FsmSpec>(state: S::State, domain: Option<S::State>) -> Vec<S::State> {
    path::<S>(state, domain).collect()
}

/// Where a row to a history of `compound` leads, once the compound has been left.
fn resume<S: FsmSpec>(
    fsm: &FsmState<S::State>,
    compound: S::State,
    deep: bool,
) -> Option<S::State> {
    let leaf = fsm
        .chart
        .as_ref()?
        .history
        .iter()
        .find(|(c, _)| *c == compound)
        .map(|(_, leaf)| *leaf)?;
    if deep {
        return Some(leaf);
    }
    // Shallow: the child of `compound` that held the leaf, entered by default.
    let child = up_to::<S>(leaf, Some(compound)).pop()?;
    Some(S::default_leaf(child))
}

/// Runs the actions in order (each a hook with `null` parameters, or the row's action with
/// the event's), all or nothing.
pub(super) fn run_all<S: FsmSpec>(
    id: &str,
    state: &mut S,
    actions: &[(super::FsmAction<S>, bool)],
    params: &Value,
    out: &mut Vec<Directive>,
) -> Result<(), AgentError> {
    if actions.is_empty() {
        return Ok(());
    }
    let backup = state.clone();
    for (action, with_params) in actions {
        let params = if *with_params { params } else { &Value::Null };
        if let Err(error) = run_one(id, state, *action, params, out) {
            *state = backup;
            out.clear();
            return Err(error);
        }
    }
    Ok(())
}

/// Takes row `row` from the current leaf to `to` (the leaf its target enters by default).
///
/// Inlined into the caller, as the flat `take` is: returned out of line, the `Result` is
/// written to memory and read back at once (a store-forwarding stall that cost half its time).
/// The states left and entered come from the generated route of `(leaf, row)`, so a row with
/// nothing to run costs a lookup and the move.
#[inline(always)]
pub(super) fn take<S: FsmSpec>(
    id: &str,
    state: &mut S,
    fsm: &mut FsmState<S::State>,
    row: u32,
    to: S::State,
    params: &Value,
) -> Result<Vec<Directive>, FsmError<S>> {
    let Some(route) = S::route(fsm.state, row) else {
        return take_walking(id, state, fsm, row, to, params).map_err(failed);
    };
    if move_plain::<S>(fsm, row, to) {
        return Ok(Vec::new());
    }
    take_route(id, state, fsm, row, to, route, params)
}

/// Takes row `row` to `to` if it has nothing to run and nothing to keep (a generated route
/// that is `plain`, no row action, no async action to cancel, no timer or history kept):
/// the move alone. The caller returns its empty result itself, so it stays in registers (an
/// `out` whose address is taken lives in memory, and reading it back stalls on store
/// forwarding: most of the time of a plain row).
#[inline(always)]
pub(super) fn move_plain<S: FsmSpec>(fsm: &mut FsmState<S::State>, row: u32, to: S::State) -> bool {
    let plain = S::route(fsm.state, row).is_some_and(|r| r.plain)
        && S::row_action(row).is_none()
        && fsm.in_flight.is_empty()
        && fsm.chart.is_none();
    if plain {
        fsm.state = to;
        fsm.started = true;
        fsm.entered = true;
        fsm.generation += 1;
    }
    plain
}

/// [`take`] with actions to run or bookkeeping to do, from the generated route.
#[inline(never)]
fn take_route<S: FsmSpec>(
    id: &str,
    state: &mut S,
    fsm: &mut FsmState<S::State>,
    row: u32,
    to: S::State,
    route: &Route<S::State>,
    params: &Value,
) -> Result<Vec<Directive>, FsmError<S>> {
    let mut out = Vec::new();
    let action = S::row_action(row);
    if !route.plain || action.is_some() {
        run_route(id, state, route, row, action, params, &mut out).map_err(failed)?;
    }
    if !fsm.in_flight.is_empty() {
        cancel_in_flight(&mut fsm.in_flight, &mut out);
    }
    let from = fsm.state;
    fsm.state = to;
    fsm.started = true;
    fsm.entered = true;
    fsm.generation += 1;
    if !route.plain || fsm.chart.is_some() {
        keep_route::<S>(fsm, from, route, &mut out);
    }
    Ok(out)
}

/// Runs a route's `exit` actions, the row's action and the `enter` actions, all or nothing,
/// straight from the generated slices (nothing collected).
#[inline]
fn run_route<S: FsmSpec>(
    id: &str,
    state: &mut S,
    route: &Route<S::State>,
    row: u32,
    action: Option<FsmAction<S>>,
    params: &Value,
    out: &mut Vec<Directive>,
) -> Result<(), AgentError> {
    let exits = route.exits.iter().filter_map(|&s| S::exit(s));
    let entries = route.entries.iter().filter_map(|&s| S::enter(s));
    let writes = exits.clone().any(|a| a.writes)
        || action.is_some_and(|a| a.writes)
        || entries.clone().any(|a| a.writes);
    let mut backup = writes.then(|| state.clone());
    let ran = (|| {
        for exit in exits {
            let run = |s: &mut S| (exit.run)(s, &Value::Null);
            run_step(id, state, &mut backup, exit.name, run, out)?;
        }
        if let Some(action) = action {
            let run =
                |s: &mut S| S::run_row(row, s, params).unwrap_or_else(|| (action.run)(s, params));
            run_step(id, state, &mut backup, action.name, run, out)?;
        }
        for enter in entries {
            let run = |s: &mut S| (enter.run)(s, &Value::Null);
            run_step(id, state, &mut backup, enter.name, run, out)?;
        }
        Ok(())
    })();
    if ran.is_err() {
        if let Some(backup) = backup {
            *state = backup;
        }
        out.clear();
    }
    ran
}

/// A route's bookkeeping once the machine moved (the generation already counts the entry):
/// histories of the states left, timers of the states left dropped, timers of the states
/// entered armed.
fn keep_route<S: FsmSpec>(
    fsm: &mut FsmState<S::State>,
    from: S::State,
    route: &Route<S::State>,
    out: &mut Vec<Directive>,
) {
    for &left in route.exits {
        if S::keeps_history(left) {
            let history = &mut fsm.chart_mut().history;
            match history.iter_mut().find(|(c, _)| *c == left) {
                Some(record) => record.1 = from,
                None => history.push((left, from)),
            }
        }
    }
    if let Some(chart) = fsm.chart.as_mut().filter(|c| !c.timers.is_empty()) {
        chart.timers.retain(|(s, _)| !route.exits.contains(s));
    }
    for &s in route.entries {
        arm::<S>(fsm, s, out);
    }
}

/// [`take`] for a row without a generated route (a row to a history, whose entries depend on
/// the record; a hand-written `FsmSpec`): walks the parent table.
#[inline(never)]
fn take_walking<S: FsmSpec>(
    id: &str,
    state: &mut S,
    fsm: &mut FsmState<S::State>,
    row: u32,
    to: S::State,
    params: &Value,
) -> Result<Vec<Directive>, AgentError> {
    let from = fsm.state;
    let domain = S::domain(row);
    let to = match S::history(row) {
        Some((compound, deep)) => resume::<S>(fsm, compound, deep).unwrap_or(to),
        None => to,
    };
    let len = |s: S::State| path::<S>(s, domain).count();
    let (exits, entries) = (len(from), len(to));
    // The entered states, outermost first, without collecting them: `entry(i)` is the state `i`
    // levels below the domain (a walk of at most the nesting depth).
    let entry = |i: usize| path::<S>(to, domain).nth(entries - 1 - i);
    let row_action = S::row_action(row);
    let hooked = row_action.is_some()
        || path::<S>(from, domain).any(|s| S::exit(s).is_some())
        || path::<S>(to, domain).any(|s| S::enter(s).is_some());
    let mut out = Vec::new();
    if hooked {
        let mut actions = Vec::with_capacity(exits + 1 + entries);
        actions.extend(
            path::<S>(from, domain)
                .filter_map(S::exit)
                .map(|a| (a, false)),
        );
        actions.extend(row_action.map(|a| (a, true)));
        actions.extend(
            (0..entries)
                .filter_map(entry)
                .filter_map(S::enter)
                .map(|a| (a, false)),
        );
        run_all(id, state, &actions, params, &mut out)?;
    }
    if !fsm.in_flight.is_empty() {
        cancel_in_flight(&mut fsm.in_flight, &mut out);
    }
    for left in path::<S>(from, domain) {
        if S::keeps_history(left) {
            let history = &mut fsm.chart_mut().history;
            match history.iter_mut().find(|(c, _)| *c == left) {
                Some(record) => record.1 = from,
                None => history.push((left, from)),
            }
        }
    }
    if let Some(chart) = fsm.chart.as_mut().filter(|c| !c.timers.is_empty()) {
        chart
            .timers
            .retain(|(s, _)| !path::<S>(from, domain).any(|left| left == *s));
    }
    fsm.state = to;
    fsm.started = true;
    fsm.entered = true;
    fsm.generation += 1;
    for s in (0..entries).filter_map(entry) {
        arm::<S>(fsm, s, &mut out);
    }
    Ok(out)
}

/// Arms the `after` timer of a state just entered.
pub(super) fn arm<S: FsmSpec>(
    fsm: &mut FsmState<S::State>,
    entered: S::State,
    out: &mut Vec<Directive>,
) {
    if let Some(delay) = S::after(entered) {
        let generation = fsm.generation;
        fsm.chart_mut().timers.push((entered, generation));
        out.push(timer::<S>(entered, fsm.generation, delay));
    }
}

/// Enters the initial configuration: from the top down to the initial leaf.
pub(super) fn enter_initial<S: FsmSpec>(agent: &mut Agent<S>) -> Vec<Directive> {
    let (id, state, fsm) = agent.parts_with_id();
    let mut entries = up_to::<S>(fsm.state, None);
    entries.reverse();
    let actions: Vec<_> = entries
        .iter()
        .filter_map(|&s| S::enter(s))
        .map(|a| (a, false))
        .collect();
    let mut out = Vec::new();
    if let Err(error) = run_all(id, state, &actions, &Value::Null, &mut out) {
        // Not entered: the next command tries again.
        out.push(Directive::error(error, ErrorContext::Strategy));
        return out;
    }
    fsm.entered = true;
    if let Some(chart) = fsm.chart.as_mut() {
        chart.timers.clear();
    }
    for &s in &entries {
        arm::<S>(fsm, s, &mut out);
    }
    out
}
