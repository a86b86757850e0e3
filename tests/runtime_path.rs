//! Generated code reaches the runtime through one path, which `crate = ...` overrides (for crates
//! that re-export Stratagem under another name).

mod reexport {
    pub use stratagem::*;
}

use reexport::{AgentSpec, Instruction};
use serde::{Deserialize, Serialize};
use serde_json::json;

#[stratagem::agent(strategy = Direct, crate = crate::reexport, actions [bump])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Counter {
    n: u32,
}

#[stratagem::action(crate = "crate::reexport")]
fn bump(counter: &mut Counter) {
    counter.n += 1;
}

#[test]
fn generated_code_uses_the_given_runtime_path() {
    let mut agent = Counter::new();
    assert!(agent.cmd(Instruction::new("bump", json!(null))).is_empty());
    assert_eq!(agent.state().n, 1);
    assert_eq!(Counter::NAME, "Counter");
}
