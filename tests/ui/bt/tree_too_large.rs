use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {}

fn ready(_: &Sentry) -> bool {
    true
}

bt! {
    for Sentry
    behavior Top { sequence { subtree L1 subtree L1 } }
    behavior L1 { sequence { subtree L2 subtree L2 } }
    behavior L2 { sequence { subtree L3 subtree L3 } }
    behavior L3 { sequence { subtree L4 subtree L4 } }
    behavior L4 { sequence { subtree L5 subtree L5 } }
    behavior L5 { sequence { subtree L6 subtree L6 } }
    behavior L6 { sequence { subtree L7 subtree L7 } }
    behavior L7 { sequence { subtree L8 subtree L8 } }
    behavior L8 { sequence { subtree L9 subtree L9 } }
    behavior L9 { sequence { subtree L10 subtree L10 } }
    behavior L10 { sequence { subtree L11 subtree L11 } }
    behavior L11 { sequence { subtree L12 subtree L12 } }
    behavior L12 { sequence { subtree L13 subtree L13 } }
    behavior L13 { sequence { subtree L14 subtree L14 } }
    behavior L14 { sequence { subtree L15 subtree L15 } }
    behavior L15 { sequence { subtree Leaf subtree Leaf } }
    behavior Leaf { condition ready }
}

fn main() {}
