//! Command-line arguments.

use std::ffi::OsString;
use std::path::PathBuf;

pub const USAGE: &str = "usage:
  agentc check FILE... [--message-format human|json]
  agentc fmt FILE... [--check]
  agentc graph FILE [--item NAME] [--format dot|mermaid]
  agentc expand FILE
  agentc explain CODE";

/// How diagnostics are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageFormat {
    Human,
    Json,
}

/// A graph notation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphFormat {
    Dot,
    Mermaid,
}

/// One invocation.
#[derive(Debug)]
pub enum Command {
    Help,
    Check {
        files: Vec<PathBuf>,
        format: MessageFormat,
    },
    Fmt {
        files: Vec<PathBuf>,
        check: bool,
        format: MessageFormat,
    },
    Graph {
        file: PathBuf,
        item: Option<String>,
        format: GraphFormat,
        messages: MessageFormat,
    },
    Expand {
        file: PathBuf,
        format: MessageFormat,
    },
    /// `agentc explain E0305`: the code's explanation.
    Explain {
        code: String,
    },
}

pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, String> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_args(args);
    let sub = match parser.next().map_err(|e| e.to_string())? {
        Some(Value(v)) => v.string().map_err(|e| e.to_string())?,
        Some(Long("help") | Short('h')) => return Ok(Command::Help),
        Some(other) => return Err(format!("expected a command, found {}", describe(other))),
        None => return Err("no command given".into()),
    };
    let mut files = Vec::new();
    let mut format = MessageFormat::Human;
    let mut check = false;
    let mut item = None;
    let mut graph = GraphFormat::Dot;
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Value(v) => files.push(PathBuf::from(v)),
            Long("help") | Short('h') => return Ok(Command::Help),
            Long("message-format") => {
                format = match parser
                    .value()
                    .map_err(|e| e.to_string())?
                    .string()
                    .as_deref()
                {
                    Ok("human") => MessageFormat::Human,
                    Ok("json") => MessageFormat::Json,
                    _ => return Err("`--message-format` takes `human` or `json`".into()),
                }
            }
            Long("check") if sub == "fmt" => check = true,
            Long("item") if sub == "graph" => {
                item = Some(
                    parser
                        .value()
                        .map_err(|e| e.to_string())?
                        .string()
                        .map_err(|_| "`--item` takes a name".to_string())?,
                )
            }
            Long("format") if sub == "graph" => {
                graph = match parser
                    .value()
                    .map_err(|e| e.to_string())?
                    .string()
                    .as_deref()
                {
                    Ok("dot") => GraphFormat::Dot,
                    Ok("mermaid") => GraphFormat::Mermaid,
                    _ => return Err("`--format` takes `dot` or `mermaid`".into()),
                }
            }
            other => {
                return Err(format!(
                    "unexpected argument {} for `{sub}`",
                    describe(other)
                ));
            }
        }
    }
    let one = |files: Vec<PathBuf>| -> Result<PathBuf, String> {
        match <[PathBuf; 1]>::try_from(files) {
            Ok([file]) => Ok(file),
            Err(files) => Err(format!(
                "`{sub}` takes exactly one file, found {}",
                files.len()
            )),
        }
    };
    match sub.as_str() {
        "check" | "fmt" if files.is_empty() => Err(format!("`{sub}` needs at least one file")),
        "check" => Ok(Command::Check { files, format }),
        "fmt" => Ok(Command::Fmt {
            files,
            check,
            format,
        }),
        "graph" => Ok(Command::Graph {
            file: one(files)?,
            item,
            format: graph,
            messages: format,
        }),
        "expand" => Ok(Command::Expand {
            file: one(files)?,
            format,
        }),
        "explain" => Ok(Command::Explain {
            code: one(files)?.display().to_string(),
        }),
        "help" => Ok(Command::Help),
        other => Err(format!(
            "unknown command `{other}`; expected `check`, `fmt`, `graph`, `expand` or `explain`"
        )),
    }
}

fn describe(arg: lexopt::Arg<'_>) -> String {
    match arg {
        lexopt::Arg::Short(c) => format!("`-{c}`"),
        lexopt::Arg::Long(l) => format!("`--{l}`"),
        lexopt::Arg::Value(v) => format!("`{}`", v.to_string_lossy()),
    }
}
