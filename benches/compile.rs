//! `.agent` compilation speed: parse + check + emit of one file holding an FSM of 1,000 and of
//! 10,000 states (two rows per state), measured side by side in one run, plus formatting the
//! generated Rust with prettyplease as `build.rs` does.
//!
//! `cargo bench -p stratagem-benches --bench compile -- --warm-up-time 1 --measurement-time 3`

use std::fmt::Write;
use std::hint::black_box;

use agent_dsl::build::{compile_source, pretty};
use agent_dsl::model::FileId;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

/// An FSM agent with `states` states: a chain `S0 -> S1 -> ...` on `next`, plus from every state
/// a guarded `jump` back into the chain, so there are about two rows per state.
fn fsm_file(states: usize) -> String {
    let mut out = String::with_capacity(states * 80);
    out.push_str("agent Big {\n    state { n: u64 = 0 }\n    strategy fsm {\n        initial S0\n");
    let _ = writeln!(out, "        terminal S{}", states - 1);
    for i in 0..states - 1 {
        let _ = writeln!(out, "        S{i} -> S{} on next do step", i + 1);
        let _ = writeln!(
            out,
            "        S{i} -> S{} on jump if ok",
            (i * 7 + 3) % (states - 1)
        );
    }
    out.push_str("    }\n    routes { \"big.next\" => next \"big.jump\" => jump }\n}\n");
    out
}

fn compile(c: &mut Criterion) {
    // `STRATAGEM_PROFILE=agent_file/parse_check_emit/10000:<passes>`: that many compilations and
    // nothing else, for callgrind (see `profile.rs`).
    if let Some((states, passes)) = std::env::var("STRATAGEM_PROFILE")
        .ok()
        .and_then(|r| Some(r.strip_prefix("agent_file/parse_check_emit/")?.to_string()))
        .and_then(|r| {
            let (states, passes) = r.split_once(':')?;
            Some((states.parse().ok()?, passes.parse::<u64>().ok()?))
        })
    {
        let text = fsm_file(states);
        for _ in 0..passes {
            let compiled = compile_source(FileId(0), black_box(&text), None).expect("valid");
            black_box(compiled.code);
        }
        std::process::exit(0);
    }
    let mut group = c.benchmark_group("agent_file");
    group.sample_size(10);
    for states in [1_000, 10_000] {
        let text = fsm_file(states);
        group.bench_with_input(
            BenchmarkId::new("parse_check_emit", states),
            &text,
            |b, text| {
                b.iter(|| {
                    let compiled = compile_source(FileId(0), black_box(text), None).expect("valid");
                    black_box(compiled.code)
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new("with_prettyplease", states),
            &text,
            |b, text| {
                b.iter(|| {
                    let compiled = compile_source(FileId(0), black_box(text), None).expect("valid");
                    black_box(pretty(compiled.code, "big.agent"))
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, compile);
criterion_main!(benches);
