//! The plugin contract on a hand-written Direct agent: state, routes, hooks in mount order,
//! outbound hooks, checkpoints, and the same in the server.

use std::sync::OnceLock;

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Flow, Plugin, PluginCall, PluginRoute, PluginStack};
use crate::action::{Action, ActionEntry, Outcome, SyncAction};
use crate::agent::{Agent, AgentSpec};
use crate::directive::Directive;
use crate::error::{ActionError, AgentError};
use crate::route::{RouteError, RouteSpec, RouteTarget};
use crate::signal::Signal;
use crate::strategy::Direct;

/// Counts signals, refuses `forbidden`, routes `tally.get` / `tally.fail`, stamps emits.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Tally {
    start: u64,
    refuse: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct TallyState {
    seen: u64,
    emitted: u64,
}

impl Plugin for Tally {
    const NAME: &'static str = "Tally";
    const STATE_KEY: &'static str = "tally";
    type State = TallyState;

    fn mount(&self) -> TallyState {
        TallyState {
            seen: self.start,
            emitted: 0,
        }
    }
    fn routes(&self) -> Vec<PluginRoute> {
        vec![
            PluginRoute::new("tally.get", "get"),
            PluginRoute::new("tally.fail", "fail"),
        ]
    }
    fn before_route(&self, state: &mut TallyState, signal: &mut Cow<'_, Signal>) -> Flow {
        state.seen += 1;
        if signal.signal_type == self.refuse {
            return Flow::Refuse {
                reason: format!("`{}` is not allowed", self.refuse),
            };
        }
        Flow::Continue
    }
    fn after_emit(&self, state: &mut TallyState, signal: &mut Signal) {
        state.emitted += 1;
        signal.data["stamped"] = json!(true);
    }
    fn run(
        &self,
        state: &mut TallyState,
        call: PluginCall<'_>,
    ) -> Result<Vec<Directive>, ActionError> {
        match call.action {
            "get" => Ok(vec![Directive::Emit(Signal::new(
                "tally.value",
                json!({"seen": state.seen, "agent": call.agent}),
            ))]),
            _ => Err(ActionError::new("asked to fail")),
        }
    }
}

/// Appends its mark to `data.trail` and rewrites `shout` into `say`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Mark {
    mark: String,
}

impl Plugin for Mark {
    const NAME: &'static str = "Mark";
    const STATE_KEY: &'static str = "mark";
    type State = ();

    fn mount(&self) {}
    fn before_route(&self, _: &mut (), signal: &mut Cow<'_, Signal>) -> Flow {
        assert_ne!(signal.signal_type, "boom", "the mark hook blew up");
        if signal.signal_type == "shout" {
            signal.to_mut().signal_type = "say".into();
        }
        if signal.data.get("trail").is_some_and(Value::is_array)
            && let Some(trail) = signal.to_mut().data["trail"].as_array_mut()
        {
            trail.push(json!(self.mark));
        }
        Flow::Continue
    }
}

/// A second `Mark` under the same key would collide; this one has its own key.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Echo;

impl Plugin for Echo {
    const NAME: &'static str = "Echo";
    const STATE_KEY: &'static str = "echo";
    type State = ();
    fn mount(&self) {}
    fn routes(&self) -> Vec<PluginRoute> {
        vec![PluginRoute::new("*", "echo")]
    }
    fn before_route(&self, _: &mut (), signal: &mut Cow<'_, Signal>) -> Flow {
        if signal.signal_type == "refuse.me" {
            let signal = signal.to_mut();
            signal.signal_type = "ai.request.error".into();
            signal.data = json!({"reason": "policy_violation"});
        }
        Flow::Continue
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Host {
    said: Vec<Value>,
}

struct Say;
impl Action<Host> for Say {
    type Params = Value;
    const NAME: &'static str = "say";
    const DESCRIPTION: &'static str = "records what it got";
    const ENTRY: ActionEntry<Host> = ActionEntry::sync::<Self>();
}
impl SyncAction<Host> for Say {
    fn run(state: &mut Host, params: Value) -> Result<Outcome, ActionError> {
        state.said.push(params.clone());
        Ok(Outcome::new().directive(Directive::Emit(Signal::new("said", params))))
    }
}

impl AgentSpec for Host {
    const NAME: &'static str = "Host";
    type Strategy = Direct;
    fn actions() -> &'static [ActionEntry<Self>] {
        static ACTIONS: [ActionEntry<Host>; 1] = [Say::ENTRY];
        &ACTIONS
    }
    fn routes() -> &'static [RouteSpec] {
        static ROUTES: [RouteSpec; 1] = [RouteSpec::new(
            "say",
            RouteTarget::Action(std::borrow::Cow::Borrowed("say")),
            0,
        )];
        &ROUTES
    }
    fn plugins() -> &'static PluginStack {
        static PLUGINS: OnceLock<PluginStack> = OnceLock::new();
        PLUGINS.get_or_init(|| {
            PluginStack::new()
                .with(Tally {
                    start: 5,
                    refuse: "forbidden".into(),
                })
                .with(Mark {
                    mark: "first".into(),
                })
                .with(Echo)
        })
    }
}

fn emitted(directives: &[Directive]) -> Vec<&Signal> {
    directives
        .iter()
        .filter_map(|d| match d {
            Directive::Emit(s) => Some(s),
            _ => None,
        })
        .collect()
}

#[test]
fn mount_gives_each_plugin_its_configured_state() {
    let agent = Agent::new(Host::default());
    assert_eq!(
        agent.plugin_state::<Tally>(),
        Some(&TallyState {
            seen: 5,
            emitted: 0
        })
    );
    assert_eq!(
        agent.plugin_states().to_json().unwrap(),
        json!({"tally": {"seen": 5, "emitted": 0}, "mark": null, "echo": null})
    );
}

#[test]
fn a_plugin_route_runs_its_action_on_its_state_and_outbound_hooks_see_the_emit() {
    let mut agent = Agent::new(Host::default());
    let out = agent.handle_signal(&Signal::new("tally.get", json!({})));
    let signals = emitted(&out);
    assert_eq!(signals.len(), 1, "{out:?}");
    assert_eq!(signals[0].signal_type, "tally.value");
    // `seen` counts this signal too: the hook ran before the action.
    assert_eq!(
        signals[0].data,
        json!({"seen": 6, "agent": "Host", "stamped": true})
    );
    assert_eq!(agent.plugin_state::<Tally>().unwrap().emitted, 1);
}

#[test]
fn pre_routing_hooks_run_in_mount_order_and_may_rewrite() {
    let mut agent = Agent::new(Host::default());
    // `Mark` rewrites `shout` into `say`: the agent's `say` and `Echo`'s `*` both match.
    let out = agent.handle_signal(&Signal::new("shout", json!({"trail": ["caller"]})));
    assert_eq!(agent.state().said, [json!({"trail": ["caller", "first"]})]);
    // `Echo` has no `echo` action implemented: its route ran and failed, after the agent's.
    assert!(
        matches!(
            out.last(),
            Some(Directive::Error { error: AgentError::Action { action, .. }, .. }) if action == "echo.echo"
        ),
        "{out:?}"
    );
    assert_eq!(emitted(&out)[0].data["stamped"], json!(true));
}

#[test]
fn a_refused_signal_runs_nothing_and_names_the_plugin() {
    let mut agent = Agent::new(Host::default());
    let out = agent.handle_signal(&Signal::new("forbidden", json!({"trail": []})));
    assert!(
        matches!(
            &out[..],
            [Directive::Error { error: AgentError::PluginRefused { plugin, reason }, .. }]
                if plugin == "tally" && reason.contains("`forbidden`")
        ),
        "{out:?}"
    );
    assert!(agent.state().said.is_empty());
    // The refusing hook counted it; the later ones never saw it.
    assert_eq!(agent.plugin_state::<Tally>().unwrap().seen, 6);
}

#[test]
fn a_panicking_hook_refuses_the_signal_and_the_agent_carries_on() {
    let mut agent = Agent::new(Host::default());
    let out = agent.handle_signal(&Signal::new("boom", json!({})));
    assert!(
        matches!(
            &out[..],
            [Directive::Error { error: AgentError::PluginRefused { plugin, reason }, .. }]
                if plugin == "mark" && reason.contains("the mark hook blew up")
        ),
        "{out:?}"
    );
    agent.handle_signal(&Signal::new("say", json!({"trail": []})));
    assert_eq!(agent.state().said.len(), 1);
}

#[test]
fn a_signal_rewritten_into_an_unrouted_type_is_emitted() {
    let mut agent = Agent::new(Host::default());
    let out = agent.handle_signal(&Signal::new("refuse.me", json!({})));
    let signals = emitted(&out);
    assert_eq!(signals.len(), 1, "{out:?}");
    assert_eq!(signals[0].signal_type, "ai.request.error");
    assert_eq!(signals[0].data["reason"], "policy_violation");
}

#[test]
fn a_failing_plugin_action_is_an_error_naming_its_full_name() {
    let mut agent = Agent::new(Host::default());
    let out = agent.handle_signal(&Signal::new("tally.fail", json!({})));
    assert!(
        matches!(
            &out[..],
            [Directive::Error { error: AgentError::Action { action, .. }, .. }] if action == "tally.fail"
        ),
        "{out:?}"
    );
    assert_eq!(agent.plugin_state::<Tally>().unwrap().seen, 6);
}

#[test]
fn plugin_state_is_in_the_checkpoint_and_comes_back() {
    let mut agent = Agent::new(Host::default()).with_id("h1");
    agent.handle_signal(&Signal::new("tally.get", json!({})));
    let saved = serde_json::to_value(&agent).unwrap();
    assert_eq!(saved["plugins"]["tally"], json!({"seen": 6, "emitted": 1}));
    let back: Agent<Host> = serde_json::from_value(saved.clone()).unwrap();
    assert_eq!(back, agent);
    // A checkpoint from before the plugin was mounted starts it fresh.
    let mut older = saved.clone();
    older.as_object_mut().unwrap().remove("plugins");
    let fresh: Agent<Host> = serde_json::from_value(older).unwrap();
    assert_eq!(fresh.plugin_state::<Tally>().unwrap().seen, 5);
    // A state that does not fit is refused, naming the plugin.
    let mut bad = saved;
    bad["plugins"]["tally"] = json!("many");
    let error = serde_json::from_value::<Agent<Host>>(bad).unwrap_err();
    assert!(error.to_string().contains("plugin `tally`"), "{error}");
}

#[test]
fn outbound_hooks_also_run_after_cmd() {
    let mut agent = Agent::new(Host::default());
    let out = agent.cmd(crate::Instruction::new("say", json!({"trail": []})));
    assert_eq!(emitted(&out)[0].data["stamped"], json!(true));
}

#[test]
fn mounting_twice_or_colliding_with_the_agents_routes_is_refused() {
    let twice = PluginStack::new().with(Echo).with(Echo);
    assert_eq!(
        twice.route_specs(&[]),
        Err(RouteError::DuplicatePlugin { key: "echo".into() })
    );
    let agent_routes = [RouteSpec::new("*", RouteTarget::Tick, 0)];
    let collision = PluginStack::new().with(Echo).route_specs(&agent_routes);
    assert_eq!(
        collision,
        Err(RouteError::PluginRouteCollision {
            plugin: "echo".into(),
            pattern: "*".into()
        })
    );
    // Host's `say` and Echo's `*` differ: both run, the more specific first.
    let router = crate::agent::build_router::<Host>().unwrap();
    let order: Vec<_> = router
        .matches("say")
        .map(|r| r.target.name().unwrap())
        .collect();
    assert_eq!(order, ["say", "echo.echo"]);
}

#[test]
fn config_is_read_from_json_with_defaults() {
    let tally: Tally = super::configure(json!({"start": 3})).unwrap();
    assert_eq!(tally.start, 3);
    assert_eq!(tally.refuse, "");
    assert!(super::configure::<Tally>(json!({"strat": 3})).is_err());
}

#[tokio::test]
async fn in_the_server_plugins_route_hook_and_survive_hibernate_and_thaw() {
    use crate::server::{AgentServer, Options};
    use crate::store::MemoryStore;

    let store = MemoryStore::new();
    let server = AgentServer::start(
        Agent::new(Host::default()).with_id("host-1"),
        Options::default(),
    )
    .await
    .unwrap();
    let outcome = server
        .call(Signal::new("tally.get", json!({})))
        .await
        .unwrap();
    assert_eq!(outcome.emitted().next().unwrap().data["seen"], 6);
    let refused = server
        .call(Signal::new("forbidden", json!({})))
        .await
        .unwrap();
    assert!(matches!(
        refused.errors().next(),
        Some(AgentError::PluginRefused { plugin, .. }) if plugin == "tally"
    ));
    server.hibernate(&store).await.unwrap();

    let thawed = AgentServer::<Host>::thaw(&store, "host-1", Options::default())
        .await
        .unwrap();
    let agent = thawed.agent().await.unwrap();
    assert_eq!(
        agent.plugin_state::<Tally>(),
        Some(&TallyState {
            seen: 7,
            emitted: 1
        })
    );
    let outcome = thawed
        .call(Signal::new("tally.get", json!({})))
        .await
        .unwrap();
    assert_eq!(outcome.emitted().next().unwrap().data["seen"], 8);
}
