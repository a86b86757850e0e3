use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {}

fn ready(_: &Sentry) -> bool {
    true
}

bt! {
    for Sentry
    behavior Patrol { sequence { condition ready  subtree Report } }
    behavior Report { selector { subtree Patrol  condition ready } }
}

fn main() {}
