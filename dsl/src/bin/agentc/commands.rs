//! The commands. Each returns the process exit code.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use agent_dsl::build::{check_source, compile_to_text};
use agent_dsl::check::Diagnostic;
use agent_dsl::graph;
use agent_dsl::model::FileId;
use agent_dsl::model::{FsmDef, NodeDef, StrategyDef, TreeRef, find_behavior};
use agent_dsl::report::{self, Sources};
use agent_dsl::syntax;

use super::args::{Command, GraphFormat, MessageFormat, USAGE};

const OK: u8 = 0;
const ERRORS: u8 = 1;
const USAGE_OR_IO: u8 = 2;

pub fn run(command: Command) -> u8 {
    match command {
        Command::Help => {
            println!("{USAGE}");
            OK
        }
        Command::Check { files, format } => check(&files, format),
        Command::Fmt {
            files,
            check,
            format,
        } => fmt(&files, check, format),
        Command::Graph {
            file,
            item,
            format,
            messages,
        } => graph(&file, item.as_deref(), format, messages),
        Command::Expand { file, format } => expand(&file, format),
        Command::Explain { code } => explain(&code),
    }
}

fn explain(code: &str) -> u8 {
    match agent_dsl::check::explain::explain(code) {
        Some(text) => {
            println!("{text}");
            OK
        }
        None => {
            eprintln!("error: no error code `{code}`; codes look like `E0305`");
            USAGE_OR_IO
        }
    }
}

/// Reads every file into `sources`; `None` (after saying why) when one cannot be read.
fn read(sources: &mut Sources, files: &[PathBuf]) -> Option<Vec<FileId>> {
    let mut ids = Vec::new();
    for path in files {
        match std::fs::read_to_string(path) {
            Ok(text) => ids.push(sources.add(path.display().to_string(), text)),
            Err(e) => {
                eprintln!("error: cannot read `{}`: {e}", path.display());
                return None;
            }
        }
    }
    Some(ids)
}

/// Prints diagnostics: rustc style on stderr, or JSON lines on stdout.
fn print(sources: &Sources, diagnostics: &[Diagnostic], format: MessageFormat) {
    match format {
        MessageFormat::Human => {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(report::render(sources, diagnostics).as_bytes());
        }
        MessageFormat::Json => {
            let mut out = std::io::stdout().lock();
            for d in diagnostics {
                let _ = writeln!(out, "{}", report::json_line(sources, d));
            }
        }
    }
}

fn summary(diagnostics: &[Diagnostic], format: MessageFormat) {
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    if format == MessageFormat::Human && (errors > 0 || warnings > 0) {
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        eprintln!(
            "{}",
            match (errors, warnings) {
                (0, w) => format!("warning: {} emitted", plural(w, "warning")),
                (e, 0) => format!("error: could not compile due to {}", plural(e, "error")),
                (e, w) => format!(
                    "error: could not compile due to {}; {} emitted",
                    plural(e, "error"),
                    plural(w, "warning")
                ),
            }
        );
    }
}

fn check(files: &[PathBuf], format: MessageFormat) -> u8 {
    let mut sources = Sources::new();
    let Some(ids) = read(&mut sources, files) else {
        return USAGE_OR_IO;
    };
    let mut all = Vec::new();
    let (mut agents, mut behaviors) = (0, 0);
    for &id in &ids {
        match check_source(id, sources.source(id)) {
            Ok((def, warnings)) => {
                agents += def.agents.len();
                behaviors += def.behaviors.len();
                all.extend(warnings);
            }
            Err(diagnostics) => all.extend(diagnostics),
        }
    }
    print(&sources, &all, format);
    summary(&all, format);
    if all.iter().any(Diagnostic::is_error) {
        return ERRORS;
    }
    if format == MessageFormat::Human {
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        eprintln!(
            "checked {}: {}, {}, no errors",
            plural(ids.len(), "file"),
            plural(agents, "agent"),
            plural(behaviors, "behavior")
        );
    }
    OK
}

fn expand(file: &Path, format: MessageFormat) -> u8 {
    let mut sources = Sources::new();
    let Some(ids) = read(&mut sources, &[file.to_path_buf()]) else {
        return USAGE_OR_IO;
    };
    let origin = file.display().to_string();
    match compile_to_text(ids[0], sources.source(ids[0]), None, None, &origin) {
        Ok((text, warnings)) => {
            print(&sources, &warnings, format);
            print!("{text}");
            OK
        }
        Err(diagnostics) => {
            print(&sources, &diagnostics, format);
            summary(&diagnostics, format);
            ERRORS
        }
    }
}

fn fmt(files: &[PathBuf], check: bool, format: MessageFormat) -> u8 {
    let mut sources = Sources::new();
    let Some(ids) = read(&mut sources, files) else {
        return USAGE_OR_IO;
    };
    let mut code = OK;
    for (id, path) in ids.into_iter().zip(files) {
        let source = sources.source(id);
        let formatted = match syntax::format::format(id, source) {
            Ok(text) => text,
            Err(diagnostics) => {
                print(&sources, &diagnostics, format);
                code = code.max(ERRORS);
                continue;
            }
        };
        if formatted == source {
            continue;
        }
        if check {
            print!("{}", diff(&path.display().to_string(), source, &formatted));
            code = code.max(ERRORS);
        } else if let Err(e) = std::fs::write(path, &formatted) {
            eprintln!("error: cannot write `{}`: {e}", path.display());
            return USAGE_OR_IO;
        }
    }
    code
}

fn graph(file: &Path, item: Option<&str>, format: GraphFormat, messages: MessageFormat) -> u8 {
    let mut sources = Sources::new();
    let Some(ids) = read(&mut sources, &[file.to_path_buf()]) else {
        return USAGE_OR_IO;
    };
    let (def, _) = match check_source(ids[0], sources.source(ids[0])) {
        Ok(ok) => ok,
        Err(diagnostics) => {
            print(&sources, &diagnostics, messages);
            summary(&diagnostics, messages);
            return ERRORS;
        }
    };
    // What can be drawn: FSM agents, tree agents and behaviours.
    let mut drawable: Vec<(&str, Drawable<'_>)> = Vec::new();
    for agent in &def.agents {
        let name = agent.name.value.as_str();
        match agent.strategy.get() {
            Some(StrategyDef::Fsm(fsm)) => drawable.push((name, Drawable::Fsm(fsm))),
            Some(StrategyDef::BehaviorTree(tree)) => {
                let root = match &tree.tree {
                    Some(TreeRef::Inline(root)) => Some(root),
                    Some(TreeRef::Behavior(b)) => {
                        find_behavior(&def.behaviors, &b.value).map(|b| &b.root)
                    }
                    _ => None,
                };
                if let Some(root) = root {
                    drawable.push((name, Drawable::Tree(root)));
                }
            }
            _ => {}
        }
    }
    for behavior in &def.behaviors {
        drawable.push((behavior.name.value.as_str(), Drawable::Tree(&behavior.root)));
    }
    let chosen = match item {
        Some(name) => match drawable.iter().find(|(n, _)| *n == name) {
            Some(found) => *found,
            None if def.agents.iter().any(|a| a.name.value == name) => {
                eprintln!(
                    "error: agent `{name}` has no graph: only FSM agents and behaviour trees have one"
                );
                return ERRORS;
            }
            None => {
                eprintln!(
                    "error: `{}` declares no agent or behavior `{name}`",
                    file.display()
                );
                return USAGE_OR_IO;
            }
        },
        None => match drawable.as_slice() {
            [one] => *one,
            [] => {
                eprintln!(
                    "error: nothing to draw in `{}`: only FSM agents and behaviour trees have a graph",
                    file.display()
                );
                return ERRORS;
            }
            several => {
                let names: Vec<String> = several.iter().map(|(n, _)| format!("`{n}`")).collect();
                eprintln!(
                    "error: `{}` has several graphs ({}); choose one with `--item NAME`",
                    file.display(),
                    names.join(", ")
                );
                return USAGE_OR_IO;
            }
        },
    };
    let text = match (chosen, format) {
        ((name, Drawable::Fsm(fsm)), GraphFormat::Dot) => graph::fsm::dot(name, fsm),
        ((_, Drawable::Fsm(fsm)), GraphFormat::Mermaid) => graph::fsm::mermaid(fsm),
        ((name, Drawable::Tree(root)), GraphFormat::Dot) => {
            graph::tree::dot(name, root, &def.behaviors)
        }
        ((_, Drawable::Tree(root)), GraphFormat::Mermaid) => {
            graph::tree::mermaid(root, &def.behaviors)
        }
    };
    print!("{text}");
    OK
}

/// Something `graph` can draw.
#[derive(Clone, Copy)]
enum Drawable<'a> {
    Fsm(&'a FsmDef),
    Tree(&'a NodeDef),
}

/// What `fmt` would change, as one unified-diff hunk: the lines between the common prefix and
/// the common suffix (linear, so any file size is fine; formatting changes are local anyway).
fn diff(path: &str, old: &str, new: &str) -> String {
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let removed = &old[prefix..old.len() - suffix];
    let added = &new[prefix..new.len() - suffix];
    if removed.is_empty() && added.is_empty() {
        return format!("--- {path}\n+++ {path} (formatted)\nonly line endings differ\n");
    }
    let mut out = format!(
        "--- {path}\n+++ {path} (formatted)\n@@ -{},{} +{},{} @@\n",
        prefix + 1,
        removed.len(),
        prefix + 1,
        added.len()
    );
    for line in removed {
        out.push_str(&format!("-{line}\n"));
    }
    for line in added {
        out.push_str(&format!("+{line}\n"));
    }
    out
}
