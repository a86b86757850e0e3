use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {}

fn ready(_: &Sentry) -> bool {
    true
}

bt! {
    for Sentry
    behavior Deep {
        sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { condition ready } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } }
    }
}

fn main() {}
