//! The agent the cluster tests run: counts signals, schedules a reminder or a cron job on
//! request, and forwards signals to other agents.

use std::time::Duration;

use agent_macros::{action, agent};
use agent_runtime::{ActionError, Directive, Outcome, Signal};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Counts `tally.add` signals; `tally.remind` schedules a `tally.reminded` after `delay_ms`.
#[agent(strategy = Direct, crate = agent_runtime,
    actions [add, remind, reminded, slow, every, ticked, forward],
    routes { "tally.add" => add, "tally.remind" => remind, "tally.reminded" => reminded,
             "tally.slow" => slow, "tally.every" => every, "tally.tick" => ticked,
             "tally.forward" => forward })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Tally {
    pub count: u64,
    pub reminders: u64,
    /// The nodes the reminders fired on.
    pub reminded_on: Vec<String>,
    /// The nodes the cron job fired on, one entry per firing.
    pub ticked_on: Vec<String>,
    /// Signals forwarded to other agents.
    pub forwarded: u64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Every {
    pub expression: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Forward {
    /// The id of the `Tally` to send a `tally.add` to.
    pub to: String,
}

fn node() -> String {
    std::env::var("STRATAGEM_TEST_NODE").unwrap_or_default()
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
    tally.reminded_on.push(node());
}

/// Starts the cron job `tick`.
#[action(crate = "agent_runtime")]
fn every(_tally: &mut Tally, params: Every) -> Result<Outcome, ActionError> {
    Ok(Outcome::new().directive(Directive::Cron {
        id: "tick".to_string(),
        expression: params.expression,
        signal: Signal::new("tally.tick", serde_json::json!({})),
    }))
}

/// Records where the cron job fired.
#[action(crate = "agent_runtime")]
fn ticked(tally: &mut Tally) {
    tally.ticked_on.push(node());
}

/// Sends a `tally.add` to another `Tally`, wherever it runs.
#[action(crate = "agent_runtime")]
fn forward(tally: &mut Tally, params: Forward) -> Result<Outcome, ActionError> {
    tally.forwarded += 1;
    let add = Signal::new("tally.add", serde_json::json!({}));
    Ok(Outcome::new().emit(agent_cluster::address::<Tally>(add, &params.to)))
}

/// Counts one, slowly (so a test can pause the node in the middle of a step).
#[action(crate = "agent_runtime")]
fn slow(tally: &mut Tally, params: Delay) {
    std::thread::sleep(Duration::from_millis(params.delay_ms));
    tally.count += 1;
}
