//! Whatever names the checker accepts, the generated code is Rust: files built from random and
//! tricky names (keywords, `_`, `_1`, `__`, names whose case conversion makes a keyword) either
//! fail with diagnostics or generate code that re-parses with syn, with no name the generator
//! had to replace. `tests/fsm_names.rs` at the workspace root compiles a sample with rustc.
//!
//! CI runs a few hundred cases; `AGENT_FUZZ_CASES` sets how many.

use agent_dsl::build::{compile_source, pretty};
use agent_dsl::model::FileId;
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("AGENT_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(256)
}

/// Names a file may use: mostly ordinary words, sometimes a word that is a trap for case
/// conversion or for Rust.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-zA-Z_][a-zA-Z0-9_]{0,5}",
        1 => prop::sample::select(vec![
            "_", "__", "_1", "_9x", "a_1", "a__b", "self_", "Self_", "super_", "crate_", "type",
            "Self", "self", "r", "ALL", "name", "with", "gen", "_Self", "s_elf", "x_",
        ])
        .prop_map(str::to_string),
    ]
}

/// An FSM agent, a tree agent and a behaviour over the given names.
fn file(n: &[String]) -> String {
    format!(
        "agent {agent} {{
    state {{ {f1}: u32 = 0  {f2}: Option<String> }}
    actions {a1}, {a2}
    strategy fsm {{
        initial {s1}
        terminal {s3}
        enter {s2} do {a2}
        {s1} -> {s2} on {e1} do {a1}
        {s2} -> {s1} on {e2}
        {s2} -> {s3} after 1s
        {s1} -> {s3} on {e3}
    }}
    routes {{ \"x.y\" => {e1} \"x.z\" => {a2} }}
}}

agent {tree_agent} {{
    state {{ {f1}: u32 = 0 }}
    strategy behavior {b1}
}}

behavior {b1} {{ sequence {{ condition {a1} action {a2}({f2} = 1) subtree {b2} }} }}
behavior {b2} {{ action {a1} }}
",
        agent = n[0],
        f1 = n[1],
        f2 = n[2],
        a1 = n[3],
        a2 = n[4],
        s1 = n[5],
        s2 = n[6],
        s3 = n[7],
        e1 = n[8],
        e2 = n[9],
        e3 = n[10],
        tree_agent = n[11],
        b1 = n[12],
        b2 = n[13],
    )
}

/// Accepted files generate Rust that parses, under no replaced name; rejected files say why.
fn generates_rust(source: &str) -> bool {
    match compile_source(FileId(0), source, None) {
        Ok(compiled) => {
            let text = compiled.code.to_string();
            assert!(
                !text.contains("__invalid_name"),
                "the checker accepted a name the generator could not use:\n{source}"
            );
            if let Err(e) = syn::parse2::<syn::File>(compiled.code.clone()) {
                panic!("generated code does not parse ({e}):\n{source}");
            }
            let formatted = pretty(compiled.code, "names.agent");
            syn::parse_file(&formatted).expect("formatted output parses");
            true
        }
        Err(diagnostics) => {
            assert!(!diagnostics.is_empty());
            false
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn accepted_names_generate_rust(names in prop::collection::vec(name(), 14)) {
        generates_rust(&file(&names));
    }
}

#[test]
fn tricky_but_valid_names_are_accepted_and_generate_rust() {
    let names: Vec<String> = [
        "_Agent",
        "_f",
        "f__2",
        "r",
        "s_elf",
        "St1",
        "_St2",
        "St_3",
        "a__b",
        "_x",
        "track2_go",
        "Trees",
        "_b",
        "b__",
    ]
    .map(str::to_string)
    .to_vec();
    assert!(generates_rust(&file(&names)), "{}", file(&names));
}

#[test]
fn names_that_cannot_become_identifiers_are_errors() {
    // An event that becomes `1`, one that becomes nothing, one that becomes `Self`.
    for event in ["_1", "__", "self_", "Self_", "_9x"] {
        let mut names: Vec<String> = [
            "A", "f", "g", "act", "act2", "S1", "S2", "S3", event, "e2", "e3", "T", "B", "C",
        ]
        .map(str::to_string)
        .to_vec();
        assert!(!generates_rust(&file(&names)), "`{event}` was accepted");
        // The same file with an ordinary event compiles: the event was the only problem.
        names[8] = "go".to_string();
        assert!(generates_rust(&file(&names)), "{}", file(&names));
    }
}
