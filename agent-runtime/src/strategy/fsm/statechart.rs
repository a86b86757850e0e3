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
    FsmAction, FsmError, FsmName, FsmSpec, FsmState, append, cancel_in_flight, failed, moved,
    no_action, run_one, run_step, timer,
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

/// Takes row `row` from the current leaf to `to` (the leaf its target enters by default), once
/// [`move_plain`](super::move_plain) found it has something to run or keep.
///
/// Inlined into the caller, as the flat `take` is: returned out of line, the `Result` is
/// written to memory and read back at once (a store-forwarding stall that cost half its time).
/// The states left and entered come from the generated route of `(leaf, row)`.
#[inline(always)]
pub(super) fn take<S: FsmSpec>(
    id: &str,
    state: &mut S,
    fsm: &mut FsmState<S::State>,
    row: u32,
    to: S::State,
    params: &Value,
) -> Result<Vec<Directive>, FsmError<S>> {
    match S::route(fsm.state, row) {
        Some(route) => {
            let moves = Moves {
                exits: route.exits,
                entries: route.entries,
                plain: route.plain,
            };
            take_moves(id, state, fsm, row, to, &moves, params)
        }
        None => take_walking(id, state, fsm, row, to, params),
    }
}

/// What a row leaves and enters from the current leaf: a generated [`Route`](super::Route)'s slices, or the
/// walking path's own.
struct Moves<'a, St> {
    /// The states left, innermost first.
    exits: &'a [St],
    /// The states entered, outermost first.
    entries: &'a [St],
    /// No `exit`/`enter` action, no timer, no history on the way.
    plain: bool,
}

/// [`take`] with actions to run or bookkeeping to do.
#[inline(never)]
fn take_moves<S: FsmSpec>(
    id: &str,
    state: &mut S,
    fsm: &mut FsmState<S::State>,
    row: u32,
    to: S::State,
    moves: &Moves<'_, S::State>,
    params: &Value,
) -> Result<Vec<Directive>, FsmError<S>> {
    let mut out = Vec::new();
    let action = S::row_action(row);
    if !moves.plain || action.is_some() {
        run_moves(id, state, moves, row, action, params, &mut out).map_err(failed)?;
    }
    if !fsm.in_flight.is_empty() {
        cancel_in_flight(&mut fsm.in_flight, &mut out);
    }
    let from = fsm.state;
    moved(fsm, to);
    if !moves.plain || fsm.chart.is_some() {
        keep_moves::<S>(fsm, from, moves, &mut out);
    }
    Ok(out)
}

/// Runs the `exit` actions, the row's action and the `enter` actions, all or nothing,
/// straight from the slices (nothing collected).
#[inline]
fn run_moves<S: FsmSpec>(
    id: &str,
    state: &mut S,
    moves: &Moves<'_, S::State>,
    row: u32,
    action: Option<FsmAction<S>>,
    params: &Value,
    out: &mut Vec<Directive>,
) -> Result<(), AgentError> {
    let exits = moves.exits.iter().filter_map(|&s| S::exit(s));
    let entries = moves.entries.iter().filter_map(|&s| S::enter(s));
    let writes = exits.clone().any(|a| a.writes)
        || action.is_some_and(|a| a.writes)
        || entries.clone().any(|a| a.writes);
    let mut backup = writes.then(|| state.clone());
    let ran = (|| {
        for exit in exits {
            let run = |s: &mut S| (exit.run)(s, &Value::Null);
            append(out, run_step(id, state, &mut backup, exit.name, run)?);
        }
        if let Some(action) = action {
            let run = |s: &mut S| S::run_row(row, s, params).unwrap_or_else(no_action);
            append(out, run_step(id, state, &mut backup, action.name, run)?);
        }
        for enter in entries {
            let run = |s: &mut S| (enter.run)(s, &Value::Null);
            append(out, run_step(id, state, &mut backup, enter.name, run)?);
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

/// The bookkeeping once the machine moved (the generation already counts the entry):
/// histories of the states left, timers of the states left dropped, timers of the states
/// entered armed.
fn keep_moves<S: FsmSpec>(
    fsm: &mut FsmState<S::State>,
    from: S::State,
    moves: &Moves<'_, S::State>,
    out: &mut Vec<Directive>,
) {
    for &left in moves.exits {
        if S::keeps_history(left) {
            let history = &mut fsm.chart_mut().history;
            match history.iter_mut().find(|(c, _)| *c == left) {
                Some(record) => record.1 = from,
                None => history.push((left, from)),
            }
        }
    }
    if let Some(chart) = fsm.chart.as_mut().filter(|c| !c.timers.is_empty()) {
        chart.timers.retain(|(s, _)| !moves.exits.contains(s));
    }
    for &s in moves.entries {
        arm::<S>(fsm, s, out);
    }
}

/// [`take`] for a row without a generated route (a row to a history, whose entries depend on
/// the record; a hand-written `FsmSpec`): the states left and entered, collected from a walk
/// up the parent table, then the route's path.
#[cold]
#[inline(never)]
fn take_walking<S: FsmSpec>(
    id: &str,
    state: &mut S,
    fsm: &mut FsmState<S::State>,
    row: u32,
    to: S::State,
    params: &Value,
) -> Result<Vec<Directive>, FsmError<S>> {
    let domain = S::domain(row);
    let to = match S::history(row) {
        Some((compound, deep)) => resume::<S>(fsm, compound, deep).unwrap_or(to),
        None => to,
    };
    let exits = up_to::<S>(fsm.state, domain);
    let mut entries = up_to::<S>(to, domain);
    entries.reverse();
    let moves = Moves {
        exits: &exits,
        entries: &entries,
        plain: false,
    };
    take_moves(id, state, fsm, row, to, &moves, params)
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
