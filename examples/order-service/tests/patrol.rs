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
