//! Parse + check never panic, on random text and on mutations of valid files.
//!
//! CI runs a few hundred cases. For a long run set `AGENT_FUZZ_CASES`, for example
//! `AGENT_FUZZ_CASES=1000000 cargo test --release -p agent-dsl --test fuzz`.

use agent_dsl::build::compile_source;
use agent_dsl::model::FileId;
use agent_dsl::report::{Sources, json_line, render};
use agent_dsl::syntax::format::format;
use proptest::prelude::*;

const SEEDS: &[&str] = &[
    include_str!("../../examples/order-service/agents/order.agent"),
    "agent A { state { n: u8 = 3 xs: Vec<String> = [\"a\"] o: Option<u8> = none } tick every 100ms }",
    "agent Order { strategy fsm { initial Cart terminal Paid as success enter Paid do r Cart -> Paid on pay if ok do charge Cart -> Cart after 30m } }",
    "behavior P { reactive_sequence { condition ok selector { retry(3) { action a(x = 1, y = \"s\") } wait(5ms) } parallel(success = 1, failure = 1) { subtree Q } } }",
    "agent H { strategy react { model \"m\" system \"s\" tools a, b max_iterations 8 temperature 0.5 max_tokens 10 } }",
    "/* c */ agent R { actions a routes { \"a.*\" => a priority -5 \"**\" => tick } } // end",
];

fn cases() -> u32 {
    std::env::var("AGENT_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(256)
}

/// Runs everything a file goes through, including rendering and formatting.
fn run(source: &str) {
    let mut sources = Sources::new();
    let file = sources.add("fuzz.agent", source.to_string());
    let diagnostics = match compile_source(file, sources.source(file), None) {
        Ok(compiled) => compiled.warnings,
        Err(diagnostics) => diagnostics,
    };
    let _ = render(&sources, &diagnostics);
    for d in &diagnostics {
        let _ = json_line(&sources, d);
    }
    if let Ok(formatted) = format(FileId(0), source) {
        // Formatting is idempotent and keeps the file parseable.
        let again = format(FileId(0), &formatted).expect("formatted output parses");
        assert_eq!(again, formatted);
    }
}

/// Small edits of a valid file: delete, duplicate or replace a byte range with a token.
fn mutated() -> impl Strategy<Value = String> {
    let tokens = prop::sample::select(vec![
        "{",
        "}",
        "(",
        ")",
        "\"",
        "/*",
        "//",
        "->",
        "=>",
        "::",
        ",",
        "=",
        "0",
        "-1",
        "999999999999999999999999",
        "0ms",
        "1.5",
        "agent",
        "state",
        "fsm",
        "behavior",
        "type",
        "é",
        "\n",
        " ",
    ]);
    (
        prop::sample::select(SEEDS.to_vec()),
        any::<prop::sample::Index>(),
        0usize..12,
        tokens,
        0u8..3,
    )
        .prop_map(|(seed, at, len, token, op)| {
            let mut at = at.index(seed.len() + 1);
            while !seed.is_char_boundary(at) {
                at -= 1;
            }
            let mut end = (at + len).min(seed.len());
            while !seed.is_char_boundary(end) {
                end -= 1;
            }
            match op {
                0 => format!("{}{}", &seed[..at], &seed[end..]),
                1 => format!("{}{}{}", &seed[..end], &seed[at..end], &seed[end..]),
                _ => format!("{}{}{}", &seed[..at], token, &seed[end..]),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(source in "[a-z{}()\\[\\]\"/*:;,.=<>&' 0-9\\-\n]{0,120}") {
        run(&source);
    }

    #[test]
    fn mutated_files_never_panic(source in mutated()) {
        run(&source);
    }
}

#[test]
fn seeds_go_through() {
    for seed in SEEDS {
        run(seed);
    }
}
