//! Structural extremes: nesting at and past the limit, wide composites, long chains of
//! behaviours, exponential subtree use. Every case runs in a child process (this test binary,
//! re-run on one case), so a stack overflow fails the case instead of killing the test run.
//! Each case goes through everything a file goes through: check, generate, prettyplease (which
//! re-parses the generated code with syn), `fmt`, graphs, and the diagnostics' renderings.

use std::process::Command;

use agent_dsl::build::{compile_source, pretty};
use agent_dsl::graph;
use agent_dsl::limits::{NESTING, TREE_NODES, TREE_TYPE_DEPTH};
use agent_dsl::model::{FileId, StrategyDef, TreeRef};
use agent_dsl::report::{Sources, json_line, render};
use agent_dsl::syntax::format::format;

const CASE: &str = "AGENT_EXTREMES_CASE";

/// The size of the longest sweeps: 20,000 in CI, 100,000 in a long run (`AGENT_FUZZ_CASES` set).
fn long() -> usize {
    if std::env::var_os("AGENT_FUZZ_CASES").is_some() {
        100_000
    } else {
        20_000
    }
}

/// `n` nested `invert`s around an action (`n + 1` braces with the behaviour's).
fn nested_decorators(n: usize) -> String {
    format!(
        "behavior B {{ {}action go{} }}",
        "invert { ".repeat(n),
        " }".repeat(n)
    )
}

/// A field whose type nests `n` levels (`Vec<Vec<...u8>>`).
fn nested_type(n: usize) -> String {
    format!(
        "agent A {{ state {{ f: {}u8{} }} }}",
        "Vec<".repeat(n),
        ">".repeat(n)
    )
}

/// A field type of `n` references (`&&&...u8`).
fn references(n: usize) -> String {
    format!("agent A {{ state {{ f: {}u8 }} }}", "&".repeat(n))
}

/// An action argument nesting `n` lists.
fn nested_list(n: usize) -> String {
    format!(
        "behavior B {{ action go(x = {}1{}) }}",
        "[".repeat(n),
        "]".repeat(n)
    )
}

/// A sequence of `n` children.
fn wide(n: usize) -> String {
    format!(
        "agent W {{ strategy behavior {{ sequence {{ {} }} }} }}",
        "condition ok ".repeat(n)
    )
}

/// `n` behaviours, each using the next once.
fn chain(n: usize) -> String {
    let mut s: String = (0..n)
        .map(|i| format!("behavior B{i} {{ invert {{ subtree B{} }} }}\n", i + 1))
        .collect();
    s.push_str(&format!("behavior B{n} {{ wait(1ms) }}\n"));
    s
}

/// `n` behaviours in a cycle.
fn cycle(n: usize) -> String {
    (0..n)
        .map(|i| format!("behavior B{i} {{ subtree B{} }}\n", (i + 1) % n))
        .collect()
}

/// `n` behaviours, each using the next twice: 2^n copies once inlined.
fn doubling(n: usize) -> String {
    let mut s: String = (0..n)
        .map(|i| {
            format!(
                "behavior B{i} {{ sequence {{ subtree B{j} subtree B{j} }} }}\n",
                j = i + 1
            )
        })
        .collect();
    s.push_str(&format!("behavior B{n} {{ wait(1ms) }}\n"));
    s
}

/// `n` nested sequences of one child each.
fn nested_sequences(n: usize) -> String {
    format!(
        "behavior B {{ {}wait(1ms){} }}",
        "sequence { ".repeat(n),
        " }".repeat(n)
    )
}

fn source(kind: &str, n: usize) -> String {
    match kind {
        "decorators" => nested_decorators(n),
        "type" => nested_type(n),
        "references" => references(n),
        "list" => nested_list(n),
        "wide" => wide(n),
        "chain" => chain(n),
        "cycle" => cycle(n),
        "doubling" => doubling(n),
        "sequences" => nested_sequences(n),
        "braces" => format!("{}{}", "{".repeat(n), "}".repeat(n)),
        other => panic!("unknown case {other}"),
    }
}

/// Runs one file through everything; prints the error codes, or `ok`.
fn run(source: &str) -> String {
    let mut sources = Sources::new();
    let file = sources.add("extreme.agent", source.to_string());
    let outcome = match compile_source(file, sources.source(file), None) {
        Ok(compiled) => {
            let code = pretty(compiled.code, "extreme.agent");
            // On a thread with room for syn's recursion (the pipeline makes its own room).
            let parsed = std::thread::Builder::new()
                .stack_size(256 << 20)
                .spawn(move || {
                    syn::parse_file(&code)
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                })
                .unwrap()
                .join()
                .unwrap();
            parsed.expect("generated code parses");
            for b in &compiled.file.behaviors {
                graph::tree::dot(&b.name.value, &b.root, &compiled.file.behaviors);
                graph::tree::mermaid(&b.root, &compiled.file.behaviors);
                graph::tree::text(&b.root);
            }
            for a in &compiled.file.agents {
                if let Some(StrategyDef::BehaviorTree(t)) = a.strategy.get()
                    && let Some(TreeRef::Inline(root)) = &t.tree
                {
                    graph::tree::dot(&a.name.value, root, &compiled.file.behaviors);
                }
            }
            "ok".to_string()
        }
        Err(diagnostics) => {
            let _ = render(&sources, &diagnostics);
            for d in &diagnostics {
                let _ = json_line(&sources, d);
            }
            let mut codes: Vec<&str> = diagnostics.iter().map(|d| d.code.id).collect();
            codes.dedup();
            codes.join(",")
        }
    };
    if let Ok(formatted) = format(FileId(0), source) {
        assert_eq!(format(FileId(0), &formatted).unwrap(), formatted);
    }
    outcome
}

/// Runs `kind` at size `n` in a child process; its outcome (`ok` or error codes).
fn in_child(kind: &str, n: usize) -> String {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads", "1"])
        .env(CASE, format!("{kind}:{n}"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "`{kind}` at {n} crashed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .find_map(|l| l.split("outcome: ").nth(1))
        .unwrap_or_else(|| panic!("no outcome from `{kind}` at {n}: {stdout}"))
        .to_string()
}

/// The child side: runs the case named by the environment, if any.
#[test]
fn child() {
    let Ok(case) = std::env::var(CASE) else {
        return;
    };
    let (kind, n) = case.split_once(':').unwrap();
    let outcome = run(&source(kind, n.parse().unwrap()));
    println!("outcome: {outcome}");
}

#[test]
fn nesting_at_the_limit_compiles_and_past_it_is_one_error() {
    // The behaviour's braces count: `NESTING - 1` decorators reach the limit (and nest their
    // types too deeply: what rustc accepts is the tighter limit for trees).
    assert_eq!(in_child("decorators", NESTING - 1), "E0409");
    assert_eq!(in_child("decorators", NESTING), "E0005");
    assert_eq!(in_child("decorators", TREE_TYPE_DEPTH - 3), "ok");
    assert_eq!(in_child("decorators", long()), "E0005");
    assert_eq!(in_child("list", NESTING - 2), "ok");
    assert_eq!(in_child("list", NESTING), "E0005");
    assert_eq!(in_child("list", long()), "E0005");
    assert_eq!(in_child("braces", long()), "E0005");
}

#[test]
fn field_types_at_the_limit_compile_and_past_it_are_one_error() {
    assert_eq!(in_child("type", NESTING - 2), "ok");
    assert_eq!(in_child("type", NESTING - 1), "E0005");
    assert_eq!(in_child("type", long()), "E0005");
    assert_eq!(in_child("references", NESTING - 2), "ok");
    assert_eq!(in_child("references", long()), "E0005");
}

#[test]
fn wide_composites_generate_code_of_logarithmic_depth() {
    assert_eq!(in_child("wide", 10_000), "ok");
    assert_eq!(in_child("wide", TREE_NODES), "E0410");
}

#[test]
fn long_chains_of_behaviors_are_bounded() {
    assert_eq!(in_child("chain", 30), "ok");
    assert_eq!(in_child("chain", 60), "E0409");
    assert!(in_child("chain", long()).contains("E0409"));
    assert_eq!(in_child("cycle", long()), "E0402");
}

#[test]
fn exponential_subtree_use_is_an_error_not_an_explosion() {
    assert_eq!(in_child("doubling", 10), "ok");
    assert_eq!(in_child("doubling", 20), "E0410");
    assert!(in_child("doubling", long()).contains("E0410"));
}

#[test]
fn deep_sequences_stop_where_rustc_would() {
    assert_eq!(in_child("sequences", 38), "ok");
    assert_eq!(in_child("sequences", 41), "E0409");
}
