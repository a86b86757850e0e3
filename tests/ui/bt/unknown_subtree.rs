use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {}

fn ready(_: &Sentry) -> bool {
    true
}

fn main() {
    let _tree = bt! {
        sequence { condition ready  subtree Reprot }
        behavior Report { condition ready }
    };
}
