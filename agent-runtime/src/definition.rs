//! Definition fingerprints: which build of an agent a checkpoint was taken from.
//!
//! The compiler gives every generated agent a [`Definition`]: a fingerprint of what its
//! checkpoints depend on (the state type's fields and their types, the strategy and its
//! version, the FSM's states and interrupts, the tree's nodes), and the migrations the
//! definition declares from older fingerprints. Every checkpoint records the fingerprint
//! (`"definition"` in the agent's JSON). Thawing one taken from another definition applies the
//! migration declared from that fingerprint, or is refused with
//! [`CheckpointError::UnknownDefinition`](crate::store::CheckpointError::UnknownDefinition)
//! naming both: a checkpoint is never loaded as a state it was not taken from.

use std::collections::HashMap;

use serde_json::Value;

/// The strategy versions: a change to what a strategy keeps in checkpoints bumps its number,
/// which changes every fingerprint of that strategy.
pub mod strategy_version {
    /// `Direct`.
    pub const DIRECT: u32 = 1;
    /// `Fsm` (and statecharts).
    pub const FSM: u32 = 1;
    /// `BehaviorTree`.
    pub const BEHAVIOR_TREE: u32 = 1;
    /// The AI strategies.
    pub const AI: u32 = 1;
    /// A user's own strategy.
    pub const CUSTOM: u32 = 1;
}

/// What a generated agent's checkpoints are checked against.
#[derive(Debug, Clone, Copy)]
pub struct Definition {
    /// The fingerprint of this definition (16 hexadecimal digits).
    pub fingerprint: &'static str,
    /// The migrations from older definitions, by their fingerprints.
    pub migrations: &'static [Migration],
}

/// A migration's own function (`with path::to_fn`): it edits the agent's checkpoint JSON, or
/// says why it cannot.
pub type MigrateFn = fn(&mut Value) -> Result<(), String>;

/// How a checkpoint of an older definition becomes one of this definition.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// The older definition's fingerprint.
    pub from: &'static str,
    /// FSM states renamed: `(old, new)`.
    pub states: &'static [(&'static str, &'static str)],
    /// State fields renamed: `(old, new)`.
    pub fields: &'static [(&'static str, &'static str)],
    /// Values for fields the older checkpoints lack: `(field, JSON)`.
    pub defaults: &'static [(&'static str, &'static str)],
    /// A function for anything else, run last on the agent's JSON (`{"state", "strategy",
    /// ...}`): it returns what is wrong when it cannot migrate.
    pub with: Option<MigrateFn>,
}

impl Definition {
    /// The migration from `fingerprint`, if this definition declares one.
    pub fn migration(&self, fingerprint: &str) -> Option<&Migration> {
        self.migrations.iter().find(|m| m.from == fingerprint)
    }
}

impl Migration {
    /// Migrates an agent's checkpoint JSON (`{"agent", "id", "state", "strategy", ...}`) and
    /// the FSM timers that name states (`timers`, as `(state name, signal data)` pairs).
    pub fn apply(&self, agent: &mut Value, timer_states: &mut [&mut Value]) -> Result<(), String> {
        let renames: HashMap<&str, &str> = self.states.iter().copied().collect();
        let rename_state = |value: &mut Value| {
            if let Some(new) = value.as_str().and_then(|old| renames.get(old)) {
                *value = Value::String((*new).to_string());
            }
        };
        if let Some(strategy) = agent.get_mut("strategy") {
            if let Some(state) = strategy.get_mut("state") {
                rename_state(state);
            }
            // A statechart's configuration: `timers` are `[state, generation]`, `history`
            // `[compound, leaf]`, `leaves` the active leaf of each region.
            if let Some(chart) = strategy.get_mut("chart") {
                if let Some(Value::Array(timers)) = chart.get_mut("timers") {
                    for timer in timers {
                        if let Some(state) = timer.get_mut(0) {
                            rename_state(state);
                        }
                    }
                }
                if let Some(Value::Array(history)) = chart.get_mut("history") {
                    for pair in history {
                        if let Value::Array(parts) = pair {
                            parts.iter_mut().for_each(rename_state);
                        }
                    }
                }
                if let Some(Value::Array(leaves)) = chart.get_mut("leaves") {
                    leaves.iter_mut().for_each(rename_state);
                }
            }
        }
        for state in timer_states.iter_mut() {
            rename_state(state);
        }
        if let Some(Value::Object(fields)) = agent.get_mut("state") {
            for (old, new) in self.fields {
                if let Some(value) = fields.remove(*old) {
                    fields.insert((*new).to_string(), value);
                }
            }
            for (field, json) in self.defaults {
                if !fields.contains_key(*field) {
                    let value = serde_json::from_str(json)
                        .map_err(|e| format!("the default of `{field}` is not JSON: {e}"))?;
                    fields.insert((*field).to_string(), value);
                }
            }
        }
        match self.with {
            Some(migrate) => migrate(agent),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_migration_renames_states_and_fields_and_fills_defaults() {
        let migration = Migration {
            from: "0",
            states: &[("Paid", "Settled")],
            fields: &[("total", "amount")],
            defaults: &[("note", "\"none\"")],
            with: None,
        };
        let mut agent = json!({
            "state": {"total": 3},
            "strategy": {"state": "Paid", "chart": {
                "timers": [["Paid", 2], ["On", 1]],
                "history": [["On", "Paid"]],
                "leaves": ["Paid", "Lamp"],
            }},
        });
        let mut timer = json!("Paid");
        migration.apply(&mut agent, &mut [&mut timer]).unwrap();
        assert_eq!(
            agent,
            json!({
                "state": {"amount": 3, "note": "none"},
                "strategy": {"state": "Settled", "chart": {
                    "timers": [["Settled", 2], ["On", 1]],
                    "history": [["On", "Settled"]],
                    "leaves": ["Settled", "Lamp"],
                }},
            })
        );
        assert_eq!(timer, "Settled");
    }
}
