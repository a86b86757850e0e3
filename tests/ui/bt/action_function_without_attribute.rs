use stratagem::bt::TreeRun;
use stratagem::prelude::*;
use std::time::Duration;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {
    closed: bool,
}

/// Not an action yet: `#[action]` is missing.
fn auto_close(sentry: &mut Sentry) {
    sentry.closed = true;
}

fn main() {
    let tree = bt! { action auto_close };
    TreeRun::default().tick(&tree, &mut Sentry::default(), Duration::ZERO);
}
