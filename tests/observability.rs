//! The runtime's `tracing` events, captured by a recording subscriber: FSM transitions and
//! refusals, action runs, tree node status changes (inside the `tree` span that names the
//! agent), and in the server the directives executed and the signals emitted. Field names are
//! part of the API (the guide's observability chapter lists them), so they are asserted here.
//!
//! A test binary of its own: `tracing` caches per-callsite interest globally, and every test
//! here installs the same kind of subscriber.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use stratagem::prelude::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// One event: its target, level, message and fields, plus the fields of its enclosing spans
/// (under `span.<name>.<field>`).
#[derive(Debug, Clone)]
struct Record {
    target: String,
    level: tracing::Level,
    message: String,
    fields: BTreeMap<String, String>,
}

impl Record {
    fn field(&self, name: &str) -> &str {
        self.fields.get(name).map_or("", String::as_str)
    }
}

#[derive(Default)]
struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_string(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Record>>>);

impl Recorder {
    fn records(&self) -> Vec<Record> {
        self.0.lock().unwrap().clone()
    }

    /// The events with this message under `stratagem::*`.
    fn with_message(&self, message: &str) -> Vec<Record> {
        self.records()
            .into_iter()
            .filter(|r| r.target.starts_with("stratagem::") && r.message == message)
            .collect()
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        if let Some(scope) = ctx.event_scope(event) {
            for span in scope {
                if let Some(span_fields) = span.extensions().get::<Fields>() {
                    for (k, v) in &span_fields.0 {
                        fields
                            .0
                            .insert(format!("span.{}.{k}", span.name()), v.clone());
                    }
                }
            }
        }
        let message = fields.0.remove("message").unwrap_or_default();
        self.0.lock().unwrap().push(Record {
            target: event.metadata().target().to_string(),
            level: *event.metadata().level(),
            message,
            fields: fields.0,
        });
    }
}

/// Installs a recorder as this thread's subscriber for the guard's life.
fn record() -> (Recorder, tracing::subscriber::DefaultGuard) {
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    (recorder, tracing::subscriber::set_default(subscriber))
}

#[agent(
    strategy = Fsm,
    transitions {
        initial Closed
        Closed -> Open on open
        Open -> Closed on close do count
        Open -> Open on hold
        Open on knock
    }
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Door {
    closings: u32,
}

#[action]
fn count(door: &mut Door) {
    door.closings += 1;
}

#[test]
fn fsm_transitions_refusals_and_row_actions_are_events_naming_the_agent() {
    let (recorder, _guard) = record();
    let mut door = Door::new().with_id("door-1");
    door.cmd(DoorEvent::Open).unwrap();
    door.cmd(DoorEvent::Hold).unwrap();
    door.cmd(DoorEvent::Knock).unwrap();
    door.cmd(DoorEvent::Close).unwrap();
    let refused = door.cmd(DoorEvent::Close).unwrap_err();

    let transitions = recorder.with_message("transition");
    let seen: Vec<_> = transitions
        .iter()
        .map(|r| {
            (
                r.field("from"),
                r.field("event"),
                r.field("to"),
                r.field("internal"),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("Closed", "open", "Open", "false"),
            ("Open", "hold", "Open", "false"),
            ("Open", "knock", "Open", "true"),
            ("Open", "close", "Closed", "false"),
        ]
    );
    for t in &transitions {
        assert_eq!(t.target, "stratagem::fsm");
        assert_eq!(t.level, tracing::Level::DEBUG);
        assert_eq!(t.field("agent"), Door::NAME);
        assert_eq!(t.field("id"), "door-1");
    }

    let [refusal] = recorder.with_message("event refused").try_into().unwrap();
    assert_eq!(
        refusal.level,
        tracing::Level::DEBUG,
        "a refusal is not an error to log"
    );
    assert_eq!(refusal.field("state"), "Closed");
    assert_eq!(refusal.field("event"), "close");
    assert_eq!(refusal.field("error"), refused.to_string());

    let [ran] = recorder.with_message("action ran").try_into().unwrap();
    assert_eq!(ran.target, "stratagem::action");
    assert_eq!(ran.field("action"), "count");
    assert_eq!(ran.field("outcome"), "success");
    assert_eq!(ran.field("id"), "door-1");
    assert!(ran.field("duration_us").parse::<u64>().is_ok(), "{ran:?}");
}

#[agent(strategy = BehaviorTree, tree = Chores)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Gardener {
    watered: u32,
}

bt! {
    for Gardener
    behavior Chores {
        sequence {
            condition dry
            action water
        }
    }
}

fn dry(g: &Gardener) -> bool {
    g.watered < 2
}

/// Waters once per tick; running until it watered twice.
#[action]
fn water(g: &mut Gardener) -> bt::Status {
    g.watered += 1;
    if g.watered < 2 {
        bt::Status::Running
    } else {
        bt::Status::Success
    }
}

#[test]
fn tree_nodes_report_their_status_changes_inside_a_span_naming_the_agent() {
    let (recorder, _guard) = record();
    let mut gardener = Gardener::new().with_id("g-1");
    gardener.tick();
    gardener.tick();

    let changes: Vec<_> = recorder
        .with_message("node status")
        .into_iter()
        .map(|r| {
            assert_eq!(r.target, "stratagem::tree");
            assert_eq!(r.level, tracing::Level::TRACE);
            assert_eq!(r.field("span.tree.agent"), Gardener::NAME);
            assert_eq!(r.field("span.tree.id"), "g-1");
            format!(
                "{}: {} -> {}",
                r.field("node"),
                r.field("from"),
                r.field("to")
            )
        })
        .collect();
    assert_eq!(
        changes,
        [
            // First tick: the condition holds, the action starts running, so does the sequence.
            "condition dry: idle -> success",
            "action water: idle -> running",
            "sequence: idle -> running",
            "subtree Chores: idle -> running",
            // Second tick: the running action (resumed, not re-checked) and the root finish.
            "action water: running -> success",
            "sequence: running -> success",
            "subtree Chores: running -> success",
        ]
    );

    let outcomes: Vec<_> = recorder
        .with_message("action ran")
        .into_iter()
        .map(|r| {
            assert_eq!(r.field("span.tree.id"), "g-1");
            assert_eq!(r.field("action"), "water");
            r.field("outcome").to_string()
        })
        .collect();
    assert_eq!(outcomes, ["running", "success"]);
}

#[test]
fn with_debug_on_and_trace_off_tree_actions_still_report_their_runs() {
    // A tick reads the level once: leaves report their runs on the path it takes when DEBUG is
    // on, whether or not node status changes (TRACE) are wanted.
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::filter::LevelFilter;
    let recorder = Recorder::default();
    let subscriber =
        tracing_subscriber::registry().with(recorder.clone().with_filter(LevelFilter::DEBUG));
    let _guard = tracing::subscriber::set_default(subscriber);
    let mut gardener = Gardener::new().with_id("g-2");
    gardener.tick();
    gardener.tick();

    assert!(recorder.with_message("node status").is_empty());
    let outcomes: Vec<_> = recorder
        .with_message("action ran")
        .into_iter()
        .map(|r| {
            assert_eq!(r.field("span.tree.id"), "g-2");
            r.field("outcome").to_string()
        })
        .collect();
    assert_eq!(outcomes, ["running", "success"]);
    assert_eq!(gardener.state().watered, 2);
}

#[agent(actions [ring], routes { "bell.ring" => ring })]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Bell {
    rings: u32,
}

/// Rings: one `bell.rang` signal.
#[action]
fn ring(bell: &mut Bell) -> Outcome {
    bell.rings += 1;
    Outcome::new().emit(Signal::new("bell.rang", json!({ "rings": bell.rings })))
}

#[tokio::test]
async fn the_server_reports_directives_and_emitted_signals() {
    let (recorder, _guard) = record();
    let server = AgentServer::start(Bell::new().with_id("bell-1"), Options::default())
        .await
        .unwrap();
    server
        .call(Signal::new("bell.ring", json!({})))
        .await
        .unwrap();
    server.stop().await;

    let directives = recorder.with_message("directive");
    assert!(
        directives
            .iter()
            .any(|r| r.field("kind") == "emit" && r.field("id") == "bell-1"),
        "{directives:?}"
    );
    let [emitted] = recorder.with_message("signal emitted").try_into().unwrap();
    assert_eq!(emitted.target, "stratagem::signal");
    assert_eq!(emitted.field("agent"), Bell::NAME);
    assert_eq!(emitted.field("signal_type"), "bell.rang");
    let [ran] = recorder.with_message("action ran").try_into().unwrap();
    assert_eq!(ran.field("action"), "ring");
    assert_eq!(ran.field("id"), "bell-1");
}
