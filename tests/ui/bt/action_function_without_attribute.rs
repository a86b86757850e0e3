use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {
    closed: bool,
}

/// Not an action yet: `#[action]` is missing.
fn auto_close(sentry: &mut Sentry) {
    sentry.closed = true;
}

fn main() {
    let _tree = bt! { action auto_close };
}
