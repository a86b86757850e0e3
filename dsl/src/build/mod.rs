//! The `build.rs` API, in the style of `prost_build::Config`:
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     agent_dsl::Builder::new().compile(&["agents/order.agent"])?;
//!     Ok(())
//! }
//! ```
//!
//! Each file `agents/<stem>.agent` becomes `$OUT_DIR/<stem>.rs`, formatted with prettyplease
//! under an `@generated` header and written only when its content changed (so cargo does not
//! rebuild for nothing); `stratagem::include_agents!("<stem>")` includes it. Every input gets a
//! `cargo::rerun-if-changed` line. Warnings become `cargo::warning=` lines with `file:line:col`. On
//! error the rustc-style rendering goes to stderr, once, and `compile` returns `Err`, whose
//! `Debug` (what a `main` returning it prints) is a one-line summary.

mod lock;
pub mod macro_lock;
mod pipeline;

pub use lock::Lock;
pub use pipeline::{Compiled, check_source, compile_source, compile_to_text, pretty};

use std::fmt;
use std::path::{Path, PathBuf};

use crate::check::{Diagnostic, Severity};
use crate::report::{self, Sources};

/// Compiles `.agent` files to Rust from a build script.
#[derive(Debug, Clone, Default)]
pub struct Builder {
    out_dir: Option<PathBuf>,
    runtime: Option<String>,
    quiet: bool,
    lock_file: Option<PathBuf>,
}

/// Why [`Builder::compile`] failed.
///
/// Its `Debug` is its one-line summary: a build script's `main` returning `Err` prints it after
/// the diagnostics, which `compile` has already rendered once on stderr.
pub enum BuildError {
    /// An input could not be read or an output written.
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: std::io::Error,
    },
    /// No output directory: not run by cargo and none given.
    NoOutDir,
    /// Two inputs would write the same `<stem>.rs`.
    SameStem(PathBuf, PathBuf),
    /// The files have errors; `rendered` is the rustc-style text of all diagnostics.
    Diagnostics {
        /// How many errors.
        errors: usize,
        /// The rendering.
        rendered: String,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Io { path, error } => write!(f, "`{}`: {error}", path.display()),
            BuildError::NoOutDir => f.write_str(
                "no output directory: `OUT_DIR` is not set (not run by cargo) and `Builder::out_dir` was not called",
            ),
            BuildError::SameStem(a, b) => write!(
                f,
                "`{}` and `{}` would both generate `{}.rs`; rename one",
                a.display(),
                b.display(),
                a.file_stem().unwrap_or_default().to_string_lossy()
            ),
            BuildError::Diagnostics { errors, rendered } => write!(
                f,
                "could not compile the agents due to {errors} error{}\n{rendered}",
                if *errors == 1 { "" } else { "s" }
            ),
        }
    }
}

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Diagnostics { errors, .. } => write!(
                f,
                "could not compile the agents due to {errors} error{} (above)",
                if *errors == 1 { "" } else { "s" }
            ),
            other => fmt::Display::fmt(other, f),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl Builder {
    /// Output to `$OUT_DIR`, runtime at `::stratagem`, cargo directives printed.
    pub fn new() -> Self {
        Builder::default()
    }

    /// Writes the generated files here instead of `$OUT_DIR`.
    pub fn out_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// The path generated code uses to reach the runtime (default `::stratagem`), for crates
    /// that depend on `agent-runtime` directly or rename the dependency.
    pub fn runtime_path(&mut self, path: impl Into<String>) -> &mut Self {
        self.runtime = Some(path.into());
        self
    }

    /// Keeps the lock file at `path` (relative paths are from the crate's directory): the
    /// definitions of the agents whose checkpoints the crate must keep reading. The build reads
    /// it, fails with E0113 at the changed token when a definition change strands the recorded
    /// checkpoints and the agent declares no `migrate` from the recorded fingerprint, and writes
    /// it back after a successful build. Commit it.
    pub fn lock_file(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.lock_file = Some(path.into());
        self
    }

    /// Prints no `cargo::` directives and no rendering (for tests and tools).
    pub fn quiet(&mut self, quiet: bool) -> &mut Self {
        self.quiet = quiet;
        self
    }

    /// Compiles every file; returns the paths written (or left as they were, being current).
    pub fn compile(&self, files: &[impl AsRef<Path>]) -> Result<Vec<PathBuf>, BuildError> {
        let out_dir = match &self.out_dir {
            Some(dir) => dir.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(BuildError::NoOutDir)?,
        };
        let runtime = match &self.runtime {
            Some(text) => Some(
                syn::parse_str::<syn::Path>(text).map_err(|e| BuildError::Io {
                    path: PathBuf::from(text),
                    error: std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!("`{text}` is not a runtime path: {e}"),
                    ),
                })?,
            ),
            None => None,
        };

        let lock_path =
            self.lock_file
                .as_ref()
                .map(|path| match std::env::var_os("CARGO_MANIFEST_DIR") {
                    Some(dir) if path.is_relative() => PathBuf::from(dir).join(path),
                    _ => path.clone(),
                });
        let mut lock = match &lock_path {
            Some(path) => Some(read_lock(path)?),
            None => None,
        };
        let mut sources = Sources::new();
        let mut outputs: Vec<(PathBuf, PathBuf, String)> = Vec::new();
        let mut diagnostics: Vec<Diagnostic> = Vec::new();
        for path in files {
            let path = path.as_ref();
            if !self.quiet {
                println!("cargo::rerun-if-changed={}", path.display());
            }
            let text = std::fs::read_to_string(path).map_err(|error| BuildError::Io {
                path: path.to_path_buf(),
                error,
            })?;
            let stem = path
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let target = out_dir.join(format!("{stem}.rs"));
            if let Some((other, _, _)) = outputs.iter().find(|(_, t, _)| *t == target) {
                return Err(BuildError::SameStem(other.clone(), path.to_path_buf()));
            }
            let display = path.display().to_string();
            let file = sources.add(display.clone(), text);
            let compiled = compile_to_text(
                file,
                sources.source(file),
                runtime.as_ref(),
                lock.as_mut(),
                &display,
            );
            match compiled {
                Ok((text, warnings)) => {
                    diagnostics.extend(warnings);
                    outputs.push((path.to_path_buf(), target, text));
                }
                Err(all) => diagnostics.extend(all),
            }
        }

        let errors = diagnostics.iter().filter(|d| d.is_error()).count();
        // On success cargo hides a build script's stderr, so warnings go out as directives; on
        // failure it shows stderr, and the rendering there is the one copy of each diagnostic.
        if !self.quiet && errors == 0 {
            for line in cargo_directives(&sources, &diagnostics) {
                println!("{line}");
            }
        }
        if errors > 0 {
            let rendered = report::render(&sources, &diagnostics);
            if !self.quiet {
                eprintln!("{rendered}");
            }
            return Err(BuildError::Diagnostics { errors, rendered });
        }

        std::fs::create_dir_all(&out_dir).map_err(|error| BuildError::Io {
            path: out_dir.clone(),
            error,
        })?;
        if let (Some(path), Some(lock)) = (&lock_path, &lock) {
            let text = lock.render();
            if std::fs::read_to_string(path).ok().as_deref() != Some(text.as_str()) {
                std::fs::write(path, text).map_err(|error| BuildError::Io {
                    path: path.clone(),
                    error,
                })?;
            }
        }
        let mut written = Vec::new();
        for (_, target, content) in outputs {
            // Rewriting an unchanged file would touch its mtime and rebuild the crate for nothing.
            if std::fs::read_to_string(&target).ok().as_deref() != Some(content.as_str()) {
                std::fs::write(&target, content).map_err(|error| BuildError::Io {
                    path: target.clone(),
                    error,
                })?;
            }
            written.push(target);
        }
        Ok(written)
    }
}

/// One `cargo::error=` / `cargo::warning=` line per diagnostic, with `file:line:col`.
pub fn cargo_directives(sources: &Sources, diagnostics: &[Diagnostic]) -> Vec<String> {
    diagnostics
        .iter()
        .map(|d| {
            let directive = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let at = report::location(sources, d.span)
                .map(|l| format!("{}:{}:{}: ", l.file, l.line, l.column))
                .unwrap_or_default();
            // A directive is one line.
            let message = d.message.replace('\n', " ");
            format!("cargo::{directive}={at}{directive}[{}]: {message}", d.code)
        })
        .collect()
}

/// The lock file at `path`, empty when there is none yet.
fn read_lock(path: &Path) -> Result<Lock, BuildError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Lock::default()),
        Err(error) => {
            return Err(BuildError::Io {
                path: path.to_path_buf(),
                error,
            });
        }
    };
    Lock::parse(&text).map_err(|message| BuildError::Io {
        path: path.to_path_buf(),
        error: std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not a lock file: {message}; delete it to start a new one"),
        ),
    })
}
