use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {}

fn ready(_: &Sentry) -> bool {
    true
}

fn main() {
    let _tree = bt! { parallel(success = 1, failure = 4) { condition ready  condition ready } };
}
