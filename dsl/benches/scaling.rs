//! The compiler is linear: for each construct a file can have many of (agents, actions,
//! routes, state fields, rows leaving one state, behaviours, unreachable states, bad routes,
//! and `fmt` over fields), a file with 10,000 and one with 100,000 of it go through the public
//! [`Builder`] (parse, check, generate, write) in one run; 100k / 10k should stay at most 12.
//!
//! `cargo bench -p agent-dsl --bench scaling -- --warm-up-time 1 --measurement-time 3`
//!
//! Each construct is measured twice: `builder/*` compiles repeatedly in this process, and
//! `builder_fresh/*` compiles once per child process, as cargo runs a build script. The two
//! differ for large inputs: in one long-lived process the 10k input's buffers are recycled from
//! glibc's heap on every iteration, while the 100k input's largest buffers exceed glibc's
//! mmap threshold (32 MB at most) and are mapped and page-faulted afresh each time, a cost a
//! build script pays for both sizes since it compiles once and exits.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use agent_dsl::Builder;
use agent_dsl::model::FileId;
use agent_dsl::syntax::format::format;
use criterion::{BenchmarkId, Criterion, criterion_group};

/// `n` agents, each with one action.
fn agents(n: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        let _ = writeln!(out, "agent A{i} {{ actions act }}");
    }
    out
}

/// One agent with `n` actions.
fn actions(n: usize) -> String {
    let list: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
    format!("agent A {{ actions {} }}\n", list.join(", "))
}

/// One agent with `n` actions, each routed from its own pattern.
fn routes(n: usize) -> String {
    let list: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
    let mut out = format!("agent A {{\n actions {}\n routes {{\n", list.join(", "));
    for i in 0..n {
        let _ = writeln!(out, "  \"r.{i}\" => a{i}");
    }
    out.push_str(" }\n}\n");
    out
}

/// One agent with `n` state fields.
fn fields(n: usize) -> String {
    let mut out = String::from("agent A {\n state {\n");
    for i in 0..n {
        let _ = writeln!(out, "  f{i}: u32 = {i}");
    }
    out.push_str(" }\n}\n");
    out
}

/// An FSM whose initial state has `n` rows leaving it, each to its own state and back.
fn rows_from_one_state(n: usize) -> String {
    let mut out = String::from("agent A {\n strategy fsm {\n  initial S0\n");
    for i in 1..=n {
        let _ = writeln!(out, "  S0 -> S{i} on e{i}\n  S{i} -> S0 on back");
    }
    out.push_str(" }\n}\n");
    out
}

/// `n` behaviours, one of them run by an agent.
fn behaviors(n: usize) -> String {
    let mut out = String::from("agent A { strategy behavior B0 }\n");
    for i in 0..n {
        let _ = writeln!(out, "behavior B{i} {{ sequence {{ action step }} }}");
    }
    out
}

/// An FSM with `n` states no row leads to: `n` errors, each searched for a did-you-mean.
fn unreachable_states(n: usize) -> String {
    let mut out = String::from("agent A {\n strategy fsm {\n  initial S0\n  S0 -> S0 on tick\n");
    for i in 0..n {
        let _ = writeln!(out, "  U{i} -> S0 on tick");
    }
    out.push_str(" }\n}\n");
    out
}

/// One agent with `n` routes to actions it does not have: `n` errors.
fn bad_routes(n: usize) -> String {
    let mut out = String::from("agent A {\n actions act\n routes {\n");
    for i in 0..n {
        let _ = writeln!(out, "  \"r.{i}\" => missing{i}");
    }
    out.push_str(" }\n}\n");
    out
}

/// Writes a file with `n` of one construct.
type Generator = fn(usize) -> String;

/// Every construct, by name.
const CONSTRUCTS: &[(&str, Generator)] = &[
    ("agents", agents),
    ("actions", actions),
    ("routes", routes),
    ("state_fields", fields),
    ("rows_from_one_state", rows_from_one_state),
    ("behaviors", behaviors),
    ("unreachable_states", unreachable_states),
    ("bad_routes", bad_routes),
];

/// The sizes compared: 10k and 100k under `cargo bench`; under `cargo test --all-targets`
/// (which runs each benchmark once, in a debug build) a smoke test of 100 and 1,000.
fn sizes() -> [usize; 2] {
    if std::env::args().any(|a| a == "--bench") {
        [10_000, 100_000]
    } else {
        [100, 1_000]
    }
}

fn compile(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("agent-dsl-scaling-{}", std::process::id()));
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    for (construct, file) in CONSTRUCTS {
        let mut group = c.benchmark_group(format!("builder/{construct}"));
        group.sample_size(10);
        for n in sizes() {
            let path = dir.join(format!("{construct}_{n}.agent"));
            std::fs::write(&path, file(n)).unwrap();
            group.bench_with_input(BenchmarkId::from_parameter(n), &path, |b, path| {
                b.iter(|| compiled(&out, path))
            });
        }
        group.finish();
    }
    let mut group = c.benchmark_group("fmt/state_fields");
    group.sample_size(10);
    for n in sizes() {
        let text = fields(n);
        group.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
            b.iter(|| format(FileId(0), black_box(text)).expect("formats"))
        });
    }
    group.finish();
    for (construct, file) in CONSTRUCTS {
        let mut group = c.benchmark_group(format!("builder_fresh/{construct}"));
        group.sample_size(10);
        for n in sizes() {
            let path = dir.join(format!("{construct}_{n}.agent"));
            std::fs::write(&path, file(n)).unwrap();
            group.bench_with_input(BenchmarkId::from_parameter(n), &path, |b, path| {
                b.iter_custom(|iters| (0..iters).map(|_| in_child(&out, path)).sum())
            });
        }
        group.finish();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Set in a child process: the file to compile once, timed, before exiting.
const CHILD: &str = "AGENT_DSL_SCALING_CHILD";

/// One `Builder` run in a fresh process (this binary, in child mode); the child times only the
/// compile, so process start-up is not counted.
fn in_child(out: &Path, path: &Path) -> Duration {
    let output = Command::new(std::env::current_exe().expect("the bench binary"))
        .env(CHILD, path)
        .env("AGENT_DSL_SCALING_OUT", out)
        .output()
        .expect("the bench binary starts");
    let text = String::from_utf8_lossy(&output.stdout);
    let nanos: u64 = text.trim().parse().unwrap_or_else(|_| {
        panic!(
            "child mode printed {text:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    Duration::from_nanos(nanos)
}

/// Child mode: compiles the file named by [`CHILD`] once and prints the nanoseconds it took.
fn child(path: &Path) {
    let out = std::env::var_os("AGENT_DSL_SCALING_OUT").expect("the output directory");
    let start = Instant::now();
    black_box(compiled(Path::new(&out), path));
    println!("{}", start.elapsed().as_nanos());
}

/// One `Builder` run; files with errors fail, which is what is measured for them.
fn compiled(out: &Path, path: &Path) -> bool {
    Builder::new()
        .out_dir(out)
        .quiet(true)
        .compile(&[path])
        .is_ok()
}

criterion_group!(benches, compile);

fn main() {
    if let Some(path) = std::env::var_os(CHILD) {
        return child(Path::new(&path));
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
