//! The sentry of `agents/patrol.agent` behaves exactly as the same tree written with `bt!` in
//! the workspace's `tests/bt_agent.rs` (same ticks, same log): the two front-ends agree.

use order_service::agents::Sentry;
use stratagem::prelude::*;

#[test]
fn the_file_tree_patrols_recharges_and_reports_like_the_macro_tree() {
    let mut agent = Sentry::new();
    assert_eq!(agent.snapshot().status, Status::Running);
    let mut ticks = 0;
    while !agent.snapshot().done() {
        assert!(agent.tick().is_empty());
        ticks += 1;
        assert!(ticks < 10, "the patrol should end");
    }
    let snapshot = agent.snapshot();
    assert_eq!(snapshot.status, Status::Success);
    assert_eq!(snapshot.details["ticks"], 5);
    let state = agent.state();
    assert_eq!(state.visited, 2);
    assert_eq!(state.position, 8);
    assert_eq!(
        state.log,
        [
            "charged to 50",
            "charged to 90",
            "charged to 100",
            "patrol done"
        ]
    );
    assert_eq!(
        <Sentry as AgentSpec>::TICK_INTERVAL,
        Some(std::time::Duration::from_millis(100))
    );
}

/// The `ask` leaf of `agents/patrol.agent`'s gatekeeper parks the tree with a typed interrupt
/// and completes from the answer, as the same leaf written in `bt!` does (`tests/bt_interrupts.rs`).
#[test]
fn the_file_tree_asks_a_person_and_completes_from_the_typed_answer() {
    use order_service::agents::Gatekeeper;
    use stratagem::AgentError;
    use stratagem::interrupt::{InterruptError, PendingInterrupt, Resume};

    let mut agent = Gatekeeper::new().with_id("gate-1");
    let raised: Vec<PendingInterrupt> = agent
        .tick()
        .into_iter()
        .filter_map(|d| match d {
            Directive::Interrupt(signal) => serde_json::from_value(signal.data).ok(),
            _ => None,
        })
        .collect();
    assert_eq!(raised.len(), 1);
    assert_eq!(raised[0].id, "gate-1/open_gate/1");
    assert_eq!(raised[0].payload, serde_json::json!({ "knocks": 1 }));
    assert_eq!(raised[0].resume_type, "Permission");
    agent.tick();
    assert_eq!(agent.snapshot().status, Status::Running, "parked");

    let wrong = agent.cmd(Resume {
        id: raised[0].id.clone(),
        value: serde_json::json!({ "allow": "yes" }),
    });
    assert!(
        matches!(
            wrong,
            Err(AgentError::Interrupt {
                error: InterruptError::WrongType { .. }
            })
        ),
        "{wrong:?}"
    );
    agent
        .cmd(Resume {
            id: raised[0].id.clone(),
            value: serde_json::json!({ "allow": true, "by": "ada" }),
        })
        .unwrap();
    assert_eq!(agent.snapshot().status, Status::Success);
    assert_eq!(agent.state().let_in, ["ada"]);
    assert_eq!(agent.state().knocks, 1, "the knock before the ask ran once");
}
