//! Compile-fail cases: every build-time error, one minimal file per message, grouped by category
//! (`tests/ui/agent/`, `tests/ui/action/`, ...). Expected output is pinned to stable Rust 1.95;
//! regenerate with `TRYBUILD=overwrite cargo test --test ui` and review the diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*/*.rs");
}
