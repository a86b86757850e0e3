//! Malformed `.agent` files under `tests/corpus/`, one per error class, with their rendered
//! diagnostics pinned as insta snapshots (`tests/snapshots/`). Every file must fail, and
//! together they must cover every code a `.agent` file can produce.

use std::collections::BTreeSet;
use std::path::Path;

use agent_dsl::build::check_source;
use agent_dsl::check::codes;
use agent_dsl::report::{Sources, json_line, render};

/// Codes only the macro front-end produces: a file cannot express them.
/// (`E0408`: a file's `strategy behavior` always names or holds a tree.)
const MACRO_ONLY: &[&str] = &[
    "E0105", "E0106", "E0110", "E0114", "E0408", "E0601", "E0602", "E0603", "E0604", "E0605",
];

/// Codes a lock file produces (`Builder::lock_file`, `#[agent(lock)]`): `check` of a lone file
/// has none to compare with. `tests/builder.rs` and the ui cases pin them.
const LOCK_ONLY: &[&str] = &["E0113"];

/// Codes rustc reports, evaluating checks the generated code carries (the ui cases and the
/// build pipeline's tests pin them), so no `.agent` file fails `check` with them.
const RUSTC_ONLY: &[&str] = &["E0411", "E0606"];

fn corpus() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "agent"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect()
}

#[test]
fn every_malformed_file_is_rejected_with_its_rendering_pinned() {
    let mut seen = BTreeSet::new();
    for (name, text) in corpus() {
        let mut sources = Sources::new();
        let file = sources.add(format!("tests/corpus/{name}.agent"), text);
        let diagnostics = match check_source(file, sources.source(file)) {
            Ok(_) => panic!("`{name}.agent` was accepted"),
            Err(d) => d,
        };
        for d in &diagnostics {
            seen.insert(d.code.id);
            // Every diagnostic points into the file, with a 1-based location.
            let json: serde_json::Value = serde_json::from_str(&json_line(&sources, d)).unwrap();
            assert!(json["line"].as_u64().unwrap() >= 1, "{name}: {json}");
            assert!(json["column"].as_u64().unwrap() >= 1, "{name}: {json}");
        }
        insta::assert_snapshot!(name.clone(), render(&sources, &diagnostics));
    }
    let missing: Vec<&str> = codes::ALL
        .iter()
        .map(|c| c.id)
        .filter(|id| {
            !MACRO_ONLY.contains(id)
                && !LOCK_ONLY.contains(id)
                && !RUSTC_ONLY.contains(id)
                && !seen.contains(id)
        })
        .collect();
    assert!(missing.is_empty(), "no corpus file produces {missing:?}");
}
