//! `tracing` spans of the agent server: one per signal, one per directive.
//!
//! A test binary of its own: `tracing` caches per-callsite interest globally, and tests running
//! on other threads without a subscriber can race a scoped subscriber for it.

use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use agent_runtime::server::{AgentServer, Options};
use agent_runtime::{
    Action, ActionEntry, ActionError, AgentSpec, Direct, NoParams, Outcome, RouteSpec, RouteTarget,
    Signal, SyncAction,
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Beacon;

struct Flash;

impl Action<Beacon> for Flash {
    type Params = NoParams;
    const NAME: &'static str = "flash";
    const DESCRIPTION: &'static str = "emits a signal";
    const ENTRY: ActionEntry<Beacon> = ActionEntry::sync::<Self>();
}

impl SyncAction<Beacon> for Flash {
    fn run(_: &mut Beacon, _: NoParams) -> Result<Outcome, ActionError> {
        Ok(Outcome::new().emit(Signal::new("beacon.flashed", json!({}))))
    }
}

impl AgentSpec for Beacon {
    const NAME: &'static str = "Beacon";
    type Strategy = Direct;

    fn actions() -> &'static [ActionEntry<Self>] {
        static ACTIONS: [ActionEntry<Beacon>; 1] = [Flash::ENTRY];
        &ACTIONS
    }

    fn routes() -> &'static [RouteSpec] {
        static ROUTES: [RouteSpec; 1] = [RouteSpec::new(
            "beacon.flash",
            RouteTarget::Action(Cow::Borrowed("flash")),
            0,
        )];
        &ROUTES
    }
}

/// Records each span's name and its `signal_type` or `kind` field.
#[derive(Default, Clone)]
struct Recorder {
    spans: Arc<Mutex<Vec<(String, String)>>>,
    next: Arc<AtomicU64>,
}

struct Grab(String);

impl Visit for Grab {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if matches!(field.name(), "signal_type" | "kind") {
            self.0 = format!("{value:?}");
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if matches!(field.name(), "signal_type" | "kind") {
            self.0 = value.to_string();
        }
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attributes: &Attributes<'_>) -> Id {
        let mut grab = Grab(String::new());
        attributes.record(&mut grab);
        self.spans
            .lock()
            .unwrap()
            .push((attributes.metadata().name().to_string(), grab.0));
        Id::from_u64(self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn each_signal_and_each_directive_gets_a_span() {
    let recorder = Recorder::default();
    tracing::subscriber::with_default(recorder.clone(), || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let server = AgentServer::start(Beacon::new(), Options::default())
                .await
                .unwrap();
            server
                .call(Signal::new("beacon.flash", json!({})))
                .await
                .unwrap();
            server
                .call(Signal::new("nobody.listens", json!({})))
                .await
                .unwrap();
            server.stop().await;
        });
    });
    let spans = recorder.spans.lock().unwrap().clone();
    let position = |name: &str, field: &str| {
        spans
            .iter()
            .position(|(n, f)| n == name && f == field)
            .unwrap_or_else(|| panic!("no `{name}` span for `{field}` in {spans:?}"))
    };
    let flash = position("signal", "beacon.flash");
    let emit = position("directive", "emit");
    let unrouted = position("signal", "nobody.listens");
    let error = position("directive", "error");
    assert!(
        flash < emit && emit < unrouted && unrouted < error,
        "{spans:?}"
    );
    assert!(spans.iter().any(|(n, _)| n == "init"));
    assert!(spans.iter().any(|(n, _)| n == "shutdown"));
}
