use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {}

fn ready(_: &Sentry) -> bool {
    true
}

bt! {
    for Sentry
    behavior Patrol { condition ready }
    behavior Patrol { invert { condition ready } }
}

fn main() {}
