//! The agent the cluster tests run: counts signals, and schedules a reminder on request.

use std::time::Duration;

use agent_macros::{action, agent};
use agent_runtime::{ActionError, Outcome, Signal};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Counts `tally.add` signals; `tally.remind` schedules a `tally.reminded` after `delay_ms`.
#[agent(strategy = Direct, crate = agent_runtime, actions [add, remind, reminded, slow],
    routes { "tally.add" => add, "tally.remind" => remind, "tally.reminded" => reminded,
             "tally.slow" => slow })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Tally {
    pub count: u64,
    pub reminders: u64,
    /// The nodes the reminders fired on.
    pub reminded_on: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Delay {
    pub delay_ms: u64,
}

/// Counts one.
#[action(crate = "agent_runtime")]
fn add(tally: &mut Tally) {
    tally.count += 1;
}

/// Schedules a reminder.
#[action(crate = "agent_runtime")]
fn remind(_tally: &mut Tally, params: Delay) -> Result<Outcome, ActionError> {
    Ok(Outcome::new().schedule(
        Duration::from_millis(params.delay_ms),
        Signal::new("tally.reminded", serde_json::json!({})),
    ))
}

/// Records where the reminder fired.
#[action(crate = "agent_runtime")]
fn reminded(tally: &mut Tally) {
    tally.reminders += 1;
    tally
        .reminded_on
        .push(std::env::var("STRATAGEM_TEST_NODE").unwrap_or_default());
}

/// Counts one, slowly (so a test can pause the node in the middle of a step).
#[action(crate = "agent_runtime")]
fn slow(tally: &mut Tally, params: Delay) {
    std::thread::sleep(Duration::from_millis(params.delay_ms));
    tally.count += 1;
}
