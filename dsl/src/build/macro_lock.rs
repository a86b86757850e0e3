//! `#[agent(lock = "agents.lock")]`: the macro front-end's side of the lock file.
//!
//! A proc macro cannot maintain a file soundly (rust-analyzer and parallel builds expand macros
//! whenever they like, on half-typed code), so by default it only reads the lock: a definition
//! that strands the locked checkpoints without a migration is E0113 at the changed token, a
//! compatible one builds and accepts the locked fingerprint. Only a build the user runs with
//! `STRATAGEM_LOCK=write` records definitions in it. The path is relative to the file the agent
//! is in, as `include_str!`'s is; the generated code `include_bytes!` the lock so that editing
//! it rebuilds the crate.

use std::path::{Path, PathBuf};

use super::lock::Lock;
use crate::check::{Diagnostic, codes};
use crate::model::{AgentDef, Span};

/// The environment variable that lets `#[agent]` write its lock file: `STRATAGEM_LOCK=write`.
pub const WRITE_VAR: &str = "STRATAGEM_LOCK";

/// Checks `agent` against its `lock = "..."` file (recording it there when
/// `STRATAGEM_LOCK=write`). Returns the lock file's path for the build to track, `None` when
/// the agent names no lock file.
pub fn check(agent: &mut AgentDef) -> Result<Option<PathBuf>, Vec<Diagnostic>> {
    let Some(setting) = agent.lock.spanned().cloned() else {
        return Ok(None);
    };
    let span = setting.span;
    let fail = |message: String, help: String| {
        vec![
            Diagnostic::error(codes::LOCK_FILE, span, message)
                .label("this lock file".to_string())
                .help(help),
        ]
    };
    let write = std::env::var(WRITE_VAR).is_ok_and(|v| v == "write");
    let path = match resolve(&setting.value, span) {
        Some(path) => path,
        None => {
            return Err(fail(
                format!("cannot locate lock file `{}`", setting.value),
                "the compiler did not say which file the agent is in; give an absolute path"
                    .to_string(),
            ));
        }
    };
    let shown = path.display().to_string();
    let mut lock = match std::fs::read_to_string(&path) {
        Ok(text) => Lock::parse(&text).map_err(|e| {
            fail(
                format!("lock file `{shown}` cannot be read: {e}"),
                format!("restore it from version control, or delete it and run `{WRITE_VAR}=write cargo build` to record the definitions anew"),
            )
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && write => Lock::default(),
        Err(e) => {
            return Err(fail(
                format!("lock file `{shown}` cannot be read: {e}"),
                format!("run `{WRITE_VAR}=write cargo build` once to record the agent's definition, then commit the file"),
            ));
        }
    };
    if !write && !lock.contains(&agent.name.value) {
        return Err(fail(
            format!("agent `{}` is not in lock file `{shown}`", agent.name.value),
            format!(
                "run `{WRITE_VAR}=write cargo build` once to record its definition, then commit the file"
            ),
        ));
    }
    let before = lock.clone();
    let stranded = lock.check(agent);
    if !stranded.is_empty() {
        return Err(stranded);
    }
    if write && lock != before {
        std::fs::write(&path, lock.render()).map_err(|e| {
            fail(
                format!("lock file `{shown}` cannot be written: {e}"),
                "check the directory's permissions".to_string(),
            )
        })?;
    }
    Ok(Some(path))
}

/// `path` relative to the directory of the file `span` is in, made absolute.
fn resolve(path: &str, span: Span) -> Option<PathBuf> {
    let path = Path::new(path);
    if path.is_absolute() {
        return Some(path.to_path_buf());
    }
    let file = span.to_proc_macro().local_file()?;
    let path = file.parent()?.join(path);
    // rustc names files relative to its working directory; `include_bytes!` would read the
    // path relative to the agent's file.
    match path.is_absolute() {
        true => Some(path),
        false => Some(std::env::current_dir().ok()?.join(path)),
    }
}
