use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {}

#[action]
fn recharge(_: &mut Sentry) {}

fn main() {
    let _tree = bt! { action recharge(full = true) };
}
