//! A crate of the user's own, outside this workspace, built exactly as the README's "Your own
//! crate" section writes it: its whole `Cargo.toml` and its `src/main.rs` are read from the
//! README, so the section cannot drift from what builds. The only change is where `stratagem`
//! comes from (this checkout instead of crates.io).
//!
//! The crate is built offline with this workspace's `Cargo.lock`, into a target directory of its
//! own under the workspace's (`target/own-crate`) that later runs reuse, and then run.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The body of the first fenced block with this info string after `heading`.
fn block<'a>(text: &'a str, heading: &str, info: &str) -> &'a str {
    let section = &text[text
        .find(heading)
        .unwrap_or_else(|| panic!("no `{heading}`"))..];
    let fence = format!("```{info}\n");
    let start = section
        .find(&fence)
        .unwrap_or_else(|| panic!("no {info} block"))
        + fence.len();
    let len = section[start..]
        .find("```\n")
        .expect("an unterminated block");
    &section[start..start + len]
}

/// The workspace's target directory: this test runs from `<target>/debug/deps/`.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    exe.ancestors()
        .nth(3)
        .expect("<target>/debug/deps")
        .to_path_buf()
}

#[test]
fn the_readme_crate_builds_and_runs_on_its_own() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let manifest = block(&readme, "## Your own crate", "toml");
    let main = block(&readme, "## Your own crate", "rust");
    assert!(manifest.contains("stratagem = \"0.1\"\n"), "{manifest}");
    let here = format!(
        "stratagem = {{ path = {:?} }}\n",
        root.display().to_string()
    );
    let manifest = manifest.replace("stratagem = \"0.1\"\n", &here);

    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    // An empty `[workspace]`: the crate is its own workspace wherever the temporary directory is.
    std::fs::write(
        dir.path().join("Cargo.toml"),
        format!("{manifest}\n[workspace]\n"),
    )
    .unwrap();
    std::fs::write(dir.path().join("src/main.rs"), main).unwrap();
    std::fs::copy(root.join("Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["run", "--quiet", "--offline"])
        .current_dir(dir.path())
        .env("CARGO_TARGET_DIR", target_dir().join("own-crate"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stdout,
        "door: \"Open\"\nopened 1 time(s)\ngardener: Success, 3 plant(s) watered\n"
    );
}
