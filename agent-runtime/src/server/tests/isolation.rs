//! Isolation: panics in actions, strategies, executors and transports never take the agent
//! down, and leave its state as it was.

use std::sync::Arc;

use serde_json::json;

use super::agents::{Steps, signal};
use super::worker;
use crate::agent::AgentSpec;
use crate::error::{AgentError, ErrorContext};
use crate::server::{AgentServer, Options, Origin, Transport, TransportError};
use crate::signal::Signal;

#[tokio::test]
async fn a_panicking_action_is_an_error_and_the_agent_keeps_serving() {
    let server = worker(Options::default()).await;
    server
        .call(signal("worker.count", json!({})))
        .await
        .unwrap();
    let outcome = server
        .call(signal("worker.explode", json!({})))
        .await
        .unwrap();
    let Some(AgentError::Action { error, .. }) = outcome.errors().next() else {
        panic!("{:?}", outcome.directives)
    };
    assert_eq!(
        error.message(),
        "`explode` panicked: explode was asked to panic"
    );
    server
        .call(signal("worker.count", json!({})))
        .await
        .unwrap();
    assert_eq!(server.state().await.unwrap().count, 2);
}

#[tokio::test]
async fn a_panicking_strategy_is_rolled_back() {
    let server = AgentServer::start(Steps::new(), Options::default())
        .await
        .unwrap();
    let before = server.agent().await.unwrap();
    let outcome = server.call(signal("steps.panic", json!({}))).await.unwrap();
    let errors: Vec<_> = outcome.errors().collect();
    // A custom strategy's panic is caught by `Agent::cmd` itself, typed, naming the strategy.
    let [AgentError::StrategyPanicked { strategy, error }] = errors.as_slice() else {
        panic!("{errors:?}")
    };
    assert!(strategy.ends_with("::Stepping"), "{strategy}");
    assert_eq!(
        error.message(),
        "`cmd` panicked: the stepping strategy was asked to panic"
    );
    assert!(matches!(
        outcome.directives[0],
        crate::Directive::Error {
            context: ErrorContext::Strategy,
            ..
        }
    ));
    assert_eq!(
        server.agent().await.unwrap(),
        before,
        "state and strategy state"
    );
    // And it still works.
    server
        .call(signal("steps.start", json!({"ticks": 1})))
        .await
        .unwrap();
    assert_eq!(server.agent().await.unwrap().strategy_state().remaining, 1);
}

#[tokio::test]
async fn without_the_servers_copy_a_custom_strategy_is_still_rolled_back_by_cmd() {
    let options = Options::new().isolate_strategy_panics(false);
    let server = AgentServer::start(Steps::new(), options).await.unwrap();
    let before = server.agent().await.unwrap();
    let outcome = server.call(signal("steps.panic", json!({}))).await.unwrap();
    let message = outcome.errors().next().unwrap().to_string();
    assert!(
        message.ends_with("`cmd` panicked: the stepping strategy was asked to panic"),
        "{message}"
    );
    // `Agent::cmd` keeps its own copy for strategies that do not catch their panics.
    assert_eq!(server.agent().await.unwrap(), before);
    assert!(!server.handle().is_stopped());
}

#[tokio::test(start_paused = true)]
async fn a_panicking_tick_is_rolled_back_and_ticking_goes_on() {
    let server = AgentServer::start(Steps::new(), Options::default())
        .await
        .unwrap();
    let mut events = server.subscribe();
    server
        .call(signal("steps.start", json!({"ticks": 2})))
        .await
        .unwrap();
    server
        .call(signal("steps.panic_on_tick", json!({})))
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(260)).await;
    let agent = server.agent().await.unwrap();
    assert_eq!(
        agent.strategy_state().remaining,
        2,
        "the panicking tick was undone"
    );
    assert_eq!(agent.state().ticks, 0);
    let report = server.stop().await;
    assert_eq!(
        (report.ticks, report.errors),
        (1, 1),
        "one tick at 250 ms, and it panicked"
    );
    assert!(events.try_recv().is_err(), "no tick completed");
}

#[derive(Debug)]
struct Exploding;

impl Transport for Exploding {
    fn name(&self) -> &str {
        "exploding"
    }
    fn publish(&self, _: &Origin<'_>, signal: &Signal) -> Result<(), TransportError> {
        if signal.signal_type == "boom" {
            panic!("the transport blew up");
        }
        Err(TransportError::new("the bus is down"))
    }
}

#[tokio::test]
async fn panicking_executors_and_transports_become_errors() {
    let options = Options::new()
        .executor("notify", |_, _| panic!("the executor blew up"))
        .transport(Arc::new(Exploding))
        .error_policy(crate::server::ErrorPolicy::emit_signal());
    let server = worker(options).await;
    let mut events = server.subscribe();
    server
        .call(signal("worker.notify", json!({"channel": "ops"})))
        .await
        .unwrap();
    let error = events.recv().await.unwrap();
    assert_eq!(
        error.data["message"],
        "directive `notify` failed: its executor panicked: `notify` panicked: the executor blew up"
    );
    server
        .call(signal("worker.emit", json!({"type": "boom"})))
        .await
        .unwrap();
    assert_eq!(events.recv().await.unwrap().signal_type, "boom");
    let error = events.recv().await.unwrap();
    assert_eq!(
        error.data["message"],
        "directive `emit` failed: transport `exploding` panicked publishing `boom`: `publish` panicked: the transport blew up"
    );
    server
        .call(signal("worker.emit", json!({"type": "calm"})))
        .await
        .unwrap();
    assert_eq!(events.recv().await.unwrap().signal_type, "calm");
    let error = events.recv().await.unwrap();
    assert_eq!(
        error.data["message"],
        "directive `emit` failed: transport `exploding` cannot publish `calm`: the bus is down"
    );
    assert!(!server.handle().is_stopped());
}

#[test]
fn an_agent_run_inside_a_call_the_server_covers_keeps_its_own_copy() {
    use crate::instruction::Instruction;
    let mut outer = Steps::new();
    let mut inner = Steps::new();
    let before = inner.clone();
    // The server's copy covers `outer` only: `inner`, run inside `outer`'s call (as an action
    // might), undoes its own panic instead of unwinding to a server that holds no copy of it.
    let out = crate::isolation::with_host_copy(|| {
        crate::isolation::isolated(&mut outer, "cmd", |_| {
            inner.cmd(Instruction::new("panic", json!({})))
        })
    });
    let errors: Vec<_> = out.iter().filter_map(crate::Directive::as_error).collect();
    assert!(
        matches!(errors.as_slice(), [AgentError::StrategyPanicked { .. }]),
        "{errors:?}"
    );
    assert_eq!(inner, before);
    // And the outer agent, still under the server's copy, unwinds typed for the server.
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::isolation::with_host_copy(|| outer.cmd(Instruction::new("panic", json!({}))))
    }));
    let payload = unwound.expect_err("the panic goes to the server");
    assert!(payload.is::<crate::isolation::StrategyPanic>());
}
