use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {}

fn ready(_: &Sentry) -> bool {
    true
}

fn main() {
    let _tree = bt! { parallel(success = 0) { condition ready  condition ready } };
}
