//! Agents for the server's tests, written by hand (the macros target the `stratagem` facade).

use std::borrow::Cow;
use std::time::Duration;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::action::{Action, ActionEntry, AsyncAction, NoParams, Outcome, SyncAction};
use crate::agent::{Agent, AgentSpec};
use crate::directive::{ChildAgent, CustomDirective, CustomDirectiveKind, Directive};
use crate::error::{ActionError, AgentError, ErrorContext};
use crate::instruction::{ExecOptions, Instruction};
use crate::route::{RouteSpec, RouteTarget, priority};
use crate::signal::Signal;
use crate::snapshot::{Snapshot, Status};
use crate::strategy::{Direct, Strategy};

macro_rules! sync_action {
    ($ty:ident, $name:literal, $params:ty, |$s:ident, $p:ident| $body:expr) => {
        pub(crate) struct $ty;
        impl Action<Worker> for $ty {
            type Params = $params;
            const NAME: &'static str = $name;
            const DESCRIPTION: &'static str = $name;
            const ENTRY: ActionEntry<Worker> = ActionEntry::sync::<Self>();
        }
        impl SyncAction<Worker> for $ty {
            #[allow(unused_variables)]
            fn run($s: &mut Worker, $p: $params) -> Result<Outcome, ActionError> {
                $body
            }
        }
    };
}

/// A Direct agent with one action per thing the server does.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Worker {
    /// What `record` saw, as `type:data`.
    pub(crate) log: Vec<String>,
    pub(crate) count: u64,
    /// Bumped by `arm`; a `timeout` of an older generation is stale.
    pub(crate) generation: u64,
    pub(crate) timeouts: Vec<u64>,
    pub(crate) stale: u64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Emit {
    #[serde(rename = "type")]
    pub(crate) signal_type: String,
    #[serde(default)]
    pub(crate) data: Value,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Later {
    pub(crate) delay_ms: u64,
    #[serde(rename = "type")]
    pub(crate) signal_type: String,
    #[serde(default)]
    pub(crate) data: Value,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Arm {
    pub(crate) delay_ms: u64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Generation {
    pub(crate) generation: u64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Tag {
    pub(crate) tag: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Reason {
    pub(crate) reason: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct CronJob {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) expression: String,
    #[serde(default, rename = "type")]
    pub(crate) signal_type: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Channel {
    pub(crate) channel: String,
}

sync_action!(Record, "record", Value, |w, data| {
    w.log.push(data.to_string());
    Ok(Outcome::new())
});
sync_action!(Count, "count", NoParams, |w, p| {
    w.count += 1;
    Ok(Outcome::new())
});
sync_action!(Fail, "fail", NoParams, |w, p| {
    w.count += 1000;
    Err(ActionError::new("fail was asked to fail"))
});
sync_action!(Explode, "explode", NoParams, |w, p| {
    w.count += 1000;
    panic!("explode was asked to panic")
});
sync_action!(EmitAction, "emit", Emit, |w, p| {
    Ok(Outcome::new().emit(Signal::new(p.signal_type, p.data)))
});
sync_action!(Schedule, "schedule", Later, |w, p| {
    Ok(Outcome::new().schedule(
        Duration::from_millis(p.delay_ms),
        Signal::new(p.signal_type, p.data),
    ))
});
sync_action!(ArmAction, "arm", Arm, |w, p| {
    w.generation += 1;
    let signal = Signal::new("worker.timeout", json!({ "generation": w.generation }));
    Ok(Outcome::new().schedule(Duration::from_millis(p.delay_ms), signal))
});
sync_action!(Timeout, "timeout", Generation, |w, p| {
    // The FSM pattern: a timer armed for an earlier generation is stale and ignored.
    if p.generation == w.generation {
        w.timeouts.push(p.generation);
    } else {
        w.stale += 1;
    }
    Ok(Outcome::new())
});
sync_action!(Spawn, "spawn", Tag, |w, p| {
    let child = Agent::new(Worker::default()).with_id(format!("child-{}", p.tag));
    Ok(Outcome::new().directive(Directive::SpawnAgent {
        tag: p.tag,
        agent: ChildAgent::new(child),
    }))
});
sync_action!(StopChild, "stop_child", Tag, |w, p| {
    Ok(Outcome::new().directive(Directive::StopChild { tag: p.tag }))
});
sync_action!(Halt, "halt", Reason, |w, p| {
    Ok(Outcome::new()
        .directive(Directive::Stop { reason: p.reason })
        .emit(Signal::new("worker.after_halt", json!({}))))
});
sync_action!(Cron, "cron", CronJob, |w, p| {
    Ok(Outcome::new().directive(Directive::Cron {
        id: p.id,
        expression: p.expression,
        signal: Signal::new(p.signal_type, json!({})),
    }))
});
sync_action!(Uncron, "uncron", CronJob, |w, p| {
    Ok(Outcome::new().directive(Directive::CronCancel { id: p.id }))
});
sync_action!(Again, "again", NoParams, |w, p| {
    // Re-arms itself with no delay, forever.
    w.count += 1;
    Ok(Outcome::new().schedule(Duration::ZERO, Signal::new("worker.again", json!(null))))
});
sync_action!(NotifyAction, "notify", Channel, |w, p| {
    Ok(Outcome::new().directive(CustomDirective::new(Notify { channel: p.channel }).into()))
});

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct FetchParams {
    pub(crate) sleep_ms: u64,
    pub(crate) value: u64,
    /// A signal type to emit when done.
    #[serde(default)]
    pub(crate) emit: Option<String>,
}

/// Async: sleeps, then sets `count` to `value` (and emits `emit`, when given).
pub(crate) struct Fetch;

impl Action<Worker> for Fetch {
    type Params = FetchParams;
    const NAME: &'static str = "fetch";
    const DESCRIPTION: &'static str = "fetch";
    // Long enough for the slowest test fetch (30 minutes of virtual time).
    const EXEC: ExecOptions = ExecOptions {
        timeout: Duration::from_secs(7200),
        max_retries: 0,
        ..ExecOptions::DEFAULT
    };
    const ENTRY: ActionEntry<Worker> = ActionEntry::asynchronous::<Self>();
}

impl AsyncAction<Worker> for Fetch {
    fn run(_: Worker, p: FetchParams) -> BoxFuture<'static, Result<Outcome, ActionError>> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(p.sleep_ms)).await;
            let outcome = Outcome::new().set(json!({ "count": p.value }));
            Ok(match p.emit {
                Some(kind) => outcome.emit(Signal::new(kind, json!({}))),
                None => outcome,
            })
        })
    }
}

/// A custom directive.
#[derive(Debug)]
pub(crate) struct Notify {
    pub(crate) channel: String,
}

impl CustomDirectiveKind for Notify {
    fn kind(&self) -> &str {
        "notify"
    }
    fn to_json(&self) -> Value {
        json!({ "channel": self.channel })
    }
}

const fn route(pattern: &'static str, action: &'static str) -> RouteSpec {
    RouteSpec::new(pattern, RouteTarget::Action(Cow::Borrowed(action)), 0)
}

impl AgentSpec for Worker {
    const NAME: &'static str = "Worker";
    type Strategy = Direct;

    fn actions() -> &'static [ActionEntry<Self>] {
        static ACTIONS: [ActionEntry<Worker>; 16] = [
            Record::ENTRY,
            Count::ENTRY,
            Fail::ENTRY,
            Explode::ENTRY,
            EmitAction::ENTRY,
            Schedule::ENTRY,
            ArmAction::ENTRY,
            Timeout::ENTRY,
            Spawn::ENTRY,
            StopChild::ENTRY,
            Halt::ENTRY,
            Cron::ENTRY,
            Uncron::ENTRY,
            NotifyAction::ENTRY,
            Fetch::ENTRY,
            Again::ENTRY,
        ];
        &ACTIONS
    }

    fn routes() -> &'static [RouteSpec] {
        static ROUTES: [RouteSpec; 20] = [
            route("worker.record", "record"),
            route("worker.count", "count"),
            route("worker.fail", "fail"),
            route("worker.explode", "explode"),
            route("worker.emit", "emit"),
            route("worker.schedule", "schedule"),
            route("worker.arm", "arm"),
            route("worker.timeout", "timeout"),
            route("worker.spawn", "spawn"),
            route("worker.stop_child", "stop_child"),
            route("worker.halt", "halt"),
            route("worker.cron", "cron"),
            route("worker.uncron", "uncron"),
            route("worker.notify", "notify"),
            route("worker.fetch", "fetch"),
            route("worker.again", "again"),
            // Two routes for one signal: both run, as one cmd, most specific first.
            route("audit.*", "record"),
            route("audit.**", "count"),
            // What children emit, and their exits.
            route("child.**", "record"),
            route("stratagem.child.exit", "record"),
        ];
        &ROUTES
    }
}

/// Implemented by agents the [`Stepping`] strategy runs.
pub(crate) trait Stepped: AgentSpec<Strategy = Stepping> + Default {
    fn ticks(&mut self) -> &mut u32;
}

/// A strategy that reports `Running` for as many ticks as it is told, then `Success`.
#[derive(Debug)]
pub(crate) struct Stepping;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct SteppingState {
    pub(crate) remaining: u32,
    pub(crate) done: bool,
    pub(crate) panic_on_tick: bool,
}

impl<S: Stepped> Strategy<S> for Stepping {
    type State = SteppingState;

    fn cmd(agent: &mut Agent<S>, instructions: Vec<Instruction>) -> Vec<Directive> {
        let mut out = Vec::new();
        for instruction in instructions {
            let (_, strategy) = agent.parts_mut();
            match instruction.action.as_str() {
                "start" => {
                    strategy.remaining = instruction.params["ticks"].as_u64().unwrap_or(0) as u32;
                    strategy.done = strategy.remaining == 0;
                }
                "panic" => {
                    // Change both states, then panic: isolation must undo both.
                    strategy.remaining = 99;
                    *agent.state_mut().ticks() = 99;
                    panic!("the stepping strategy was asked to panic");
                }
                "panic_on_tick" => strategy.panic_on_tick = true,
                other => out.push(Directive::error(
                    AgentError::Strategy {
                        message: format!("stepping has no input `{other}`"),
                    },
                    ErrorContext::Strategy,
                )),
            }
        }
        out
    }

    fn tick(agent: &mut Agent<S>) -> Vec<Directive> {
        let (state, strategy) = agent.parts_mut();
        if strategy.panic_on_tick {
            strategy.remaining += 100;
            panic!("tick was asked to panic");
        }
        if strategy.remaining == 0 {
            return Vec::new();
        }
        strategy.remaining -= 1;
        *state.ticks() += 1;
        strategy.done = strategy.remaining == 0;
        vec![Directive::Emit(Signal::new(
            "steps.ticked",
            json!({ "remaining": strategy.remaining }),
        ))]
    }

    fn snapshot(agent: &Agent<S>) -> Snapshot {
        let strategy = agent.strategy_state();
        if strategy.done {
            Snapshot::new(Status::Success).with_result(json!(strategy.remaining))
        } else if strategy.remaining > 0 {
            Snapshot::new(Status::Running).with_details(json!({ "remaining": strategy.remaining }))
        } else {
            Snapshot::new(Status::Idle)
        }
    }

    fn signal_routes() -> Vec<RouteSpec> {
        let custom = |pattern: &'static str, name: &'static str| {
            RouteSpec::new(
                pattern,
                RouteTarget::Custom(Cow::Borrowed(name)),
                priority::STRATEGY,
            )
        };
        vec![
            custom("steps.start", "start"),
            custom("steps.panic", "panic"),
            custom("steps.panic_on_tick", "panic_on_tick"),
            RouteSpec::new("steps.tick", RouteTarget::Tick, priority::STRATEGY),
        ]
    }
}

/// Ticked every 250 ms, as it declares.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Steps {
    pub(crate) ticks: u32,
}

impl Stepped for Steps {
    fn ticks(&mut self) -> &mut u32 {
        &mut self.ticks
    }
}

impl AgentSpec for Steps {
    const NAME: &'static str = "Steps";
    const TICK_INTERVAL: Option<Duration> = Some(Duration::from_millis(250));
    type Strategy = Stepping;

    fn actions() -> &'static [ActionEntry<Self>] {
        &[]
    }
}

/// Declares no tick interval: the server's default applies.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Plain {
    pub(crate) ticks: u32,
}

impl Stepped for Plain {
    fn ticks(&mut self) -> &mut u32 {
        &mut self.ticks
    }
}

impl AgentSpec for Plain {
    const NAME: &'static str = "Plain";
    type Strategy = Stepping;

    fn actions() -> &'static [ActionEntry<Self>] {
        &[]
    }
}

/// An agent whose routes cannot be built.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct BadPattern;

impl AgentSpec for BadPattern {
    const NAME: &'static str = "BadPattern";
    type Strategy = Direct;

    fn actions() -> &'static [ActionEntry<Self>] {
        &[]
    }

    fn routes() -> &'static [RouteSpec] {
        static ROUTES: [RouteSpec; 1] = [route("order..pay", "pay")];
        &ROUTES
    }
}

/// An agent with a route priority out of range.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct BadPriority;

impl AgentSpec for BadPriority {
    const NAME: &'static str = "BadPriority";
    type Strategy = Direct;

    fn actions() -> &'static [ActionEntry<Self>] {
        &[]
    }

    fn routes() -> &'static [RouteSpec] {
        static ROUTES: [RouteSpec; 1] = [RouteSpec::new(
            "order.pay",
            RouteTarget::Action(Cow::Borrowed("pay")),
            101,
        )];
        &ROUTES
    }
}

/// A signal with data.
pub(crate) fn signal(signal_type: &str, data: Value) -> Signal {
    Signal::new(signal_type, data)
}
