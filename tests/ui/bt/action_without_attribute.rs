use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {}

/// A type, but not an action: a tree's `action` names a function with `#[action]`.
struct Patrol;

fn main() {
    let _tree = bt! { action Patrol };
}
