//! Routing: agent, strategy and plugin routes; unmatched signals.

use serde_json::json;

use super::agents::signal;
use super::worker;
use crate::error::{AgentError, ErrorContext};
use crate::server::{ErrorPolicy, Options};

#[tokio::test]
async fn every_matching_route_runs_in_one_cmd() {
    let server = worker(Options::default()).await;
    // `audit.*` -> record and `audit.**` -> count both match.
    let outcome = server
        .call(signal("audit.login", json!("alice")))
        .await
        .unwrap();
    assert!(outcome.directives.is_empty(), "{:?}", outcome.directives);
    let state = server.state().await.unwrap();
    assert_eq!(state.log, ["\"alice\""]);
    assert_eq!(state.count, 1);
}

#[tokio::test]
async fn plugin_routes_run_after_the_agents_own() {
    let options = Options::new()
        .plugin_route("worker.record", "count")
        .plugin_route("plugin.only", "record");
    let server = worker(options).await;
    server
        .call(signal("worker.record", json!("x")))
        .await
        .unwrap();
    server
        .call(signal("plugin.only", json!("y")))
        .await
        .unwrap();
    let state = server.state().await.unwrap();
    assert_eq!(state.log, ["\"x\"", "\"y\""]);
    assert_eq!(state.count, 1, "the plugin route ran besides the agent's");
}

#[tokio::test]
async fn an_unmatched_signal_is_an_error_for_the_policy() {
    let server = worker(Options::new().error_policy(ErrorPolicy::emit_signal())).await;
    let mut events = server.subscribe();
    let unknown = signal("nobody.listens", json!({}));
    let outcome = server.call(unknown.clone()).await.unwrap();
    let errors: Vec<_> = outcome.errors().collect();
    assert_eq!(
        errors,
        [&AgentError::NoRoute {
            signal_type: "nobody.listens".into()
        }]
    );
    let error_signal = events.recv().await.unwrap();
    assert_eq!(error_signal.signal_type, "stratagem.agent.error");
    assert_eq!(
        error_signal.data["message"],
        "no route matches signal type `nobody.listens`"
    );
    assert_eq!(
        serde_json::from_value::<ErrorContext>(error_signal.data["context"].clone()).unwrap(),
        ErrorContext::Signal {
            id: unknown.id,
            signal_type: "nobody.listens".into()
        }
    );
    assert_eq!(error_signal.source, "/stratagem/agents/Worker/w");
}
