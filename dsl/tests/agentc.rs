//! `agentc` as a user runs it: exit codes, human and JSON diagnostics, fmt, expand.
#![cfg(feature = "cli")]

use std::path::Path;
use std::process::{Command, Output};

const VALID: &str = "// orders\nagent Order {\n    description \"Takes orders\"\n    state {\n        total: f64 = 0.0\n    }\n    actions charge\n    routes {\n        \"order.pay\" => charge\n    }\n}\n";

fn agentc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentc"))
        .args(args)
        .output()
        .expect("agentc runs")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn check_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.agent", VALID);
    let bad = write(
        dir.path(),
        "bad.agent",
        "agent Order {\n    actions charge\n    routes { \"order.pay\" => chrage }\n}\n",
    );

    let ok = agentc(&["check", &good]);
    assert_eq!(ok.status.code(), Some(0), "{ok:?}");
    assert_eq!(
        String::from_utf8(ok.stderr).unwrap(),
        "checked 1 file: 1 agent, 0 behaviors, no errors\n"
    );

    let failed = agentc(&["check", &good, &bad]);
    assert_eq!(failed.status.code(), Some(1));
    let stderr = String::from_utf8(failed.stderr).unwrap();
    assert!(
        stderr.contains("error[E0203]: route target `chrage` is not an action of agent `Order`"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("--> {bad}:3:29")), "{stderr}");
    assert!(
        stderr.contains("= help: did you mean `charge`?"),
        "{stderr}"
    );

    assert_eq!(
        agentc(&["check", "/no/such/file.agent"]).status.code(),
        Some(2)
    );
    assert_eq!(agentc(&["check"]).status.code(), Some(2));
    assert_eq!(agentc(&["frobnicate", &good]).status.code(), Some(2));
    assert_eq!(agentc(&["check", "--bogus", &good]).status.code(), Some(2));
}

#[test]
fn check_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "bad.agent",
        "agent Order {\n  tick every 5d\n  routes { \"a..b\" => tick }\n}\n",
    );
    let out = agentc(&["check", "--message-format", "json", &bad]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_eq!(lines[0]["severity"], "error");
    assert_eq!(lines[0]["code"], "E0003");
    assert_eq!(lines[0]["file"], bad.as_str());
    assert_eq!(
        (
            &lines[0]["line"],
            &lines[0]["column"],
            &lines[0]["end_line"],
            &lines[0]["end_column"]
        ),
        (&2.into(), &14.into(), &2.into(), &16.into())
    );
    assert_eq!(lines[1]["code"], "E0201");
    assert_eq!(
        (&lines[1]["line"], &lines[1]["column"]),
        (&3.into(), &15.into())
    );
}

#[test]
fn fmt_check_rewrite_and_idempotence() {
    let dir = tempfile::tempdir().unwrap();
    let messy = VALID.replace("\n    ", "\n ").replace(" {\n", "{ ");
    let path = write(dir.path(), "messy.agent", &messy);
    let checked = agentc(&["fmt", "--check", &path]);
    assert_eq!(checked.status.code(), Some(1));
    let diff = String::from_utf8(checked.stdout).unwrap();
    assert!(
        diff.starts_with(&format!("--- {path}\n+++ {path} (formatted)\n@@ -2,")),
        "{diff}"
    );
    assert!(
        diff.contains("\n-agent Order{  description \"Takes orders\"\n"),
        "{diff}"
    );
    assert!(
        diff.contains("\n+agent Order {\n+    description \"Takes orders\"\n"),
        "{diff}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        messy,
        "--check writes nothing"
    );
    assert_eq!(agentc(&["fmt", &path]).status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), VALID);
    assert_eq!(agentc(&["fmt", "--check", &path]).status.code(), Some(0));

    let broken = write(dir.path(), "broken.agent", "agent {");
    assert_eq!(agentc(&["fmt", &broken]).status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&broken).unwrap(), "agent {");
}

#[test]
fn explain_prints_a_code_with_its_example() {
    let out = agentc(&["explain", "E0305"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("## E0305: two unguarded rows for the same state and event\n"),
        "{text}"
    );
    assert!(text.contains("Closed -> Locked on push\n"), "{text}");
    assert!(!text.contains("E0306"), "one code only: {text}");
    let unknown = agentc(&["explain", "E9999"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        String::from_utf8(unknown.stderr)
            .unwrap()
            .contains("no error code `E9999`")
    );
}

#[test]
fn expand_prints_the_generated_rust() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "order.agent", VALID);
    let out = agentc(&["expand", &path]);
    assert_eq!(out.status.code(), Some(0));
    let rust = String::from_utf8(out.stdout).unwrap();
    assert!(rust.starts_with("// @generated by agent-dsl"), "{rust}");
    assert!(rust.contains("pub struct Order {"), "{rust}");
    assert!(
        rust.contains("impl ::stratagem::AgentSpec for Order {"),
        "{rust}"
    );
    assert!(rust.contains("total: 0.0"), "{rust}");
    syn::parse_file(&rust[rust.find('\n').unwrap()..]).expect("valid Rust");
}

#[test]
fn graph_of_an_agent_without_a_graph_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "order.agent", VALID);
    let out = agentc(&["graph", &path]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("nothing to draw")
    );
    assert_eq!(
        agentc(&["graph", &path, "--format", "svg"]).status.code(),
        Some(2)
    );
}

const MACHINES: &str = "agent Door {\n    strategy fsm {\n        initial Closed\n        terminal Gone\n        Closed -> Open on open\n        Open -> Closed on close\n        Open -> Gone after 1h\n    }\n}\nbehavior Patrol {\n    sequence {\n        condition battery_ok\n        action move_to(speed = 2)\n    }\n}\n";

#[test]
fn graph_draws_fsms_and_trees() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "door.agent", MACHINES);
    // Two drawable items: `--item` is required.
    assert_eq!(agentc(&["graph", &path]).status.code(), Some(2));
    assert_eq!(
        agentc(&["graph", &path, "--item", "Nope"]).status.code(),
        Some(2)
    );

    let dot = agentc(&["graph", &path, "--item", "Door"]);
    assert_eq!(dot.status.code(), Some(0));
    let dot = String::from_utf8(dot.stdout).unwrap();
    assert!(dot.starts_with("digraph Door {"), "{dot}");
    assert!(dot.contains("Open -> Gone [label=\"after 1h\"];"), "{dot}");

    let mermaid = agentc(&["graph", &path, "--item", "Door", "--format", "mermaid"]);
    let mermaid = String::from_utf8(mermaid.stdout).unwrap();
    assert!(
        mermaid.starts_with("stateDiagram-v2\n    [*] --> Closed\n"),
        "{mermaid}"
    );

    let tree = agentc(&["graph", &path, "--item", "Patrol", "--format", "mermaid"]);
    assert_eq!(tree.status.code(), Some(0));
    let tree = String::from_utf8(tree.stdout).unwrap();
    assert!(tree.starts_with("flowchart TD"), "{tree}");
    assert!(tree.contains("condition battery_ok"), "{tree}");
}
