//! One `.agent` file through the compiler: parse, check, generate, format. Shared by the
//! [`Builder`](super::Builder), `agentc` and the benchmarks.

use proc_macro2::TokenStream;

use crate::check::{self, Diagnostic};
use crate::emit;
use crate::model::{FileId, Span};
use crate::syntax::{self, FileDef};

/// A file that compiled.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// What the file declares.
    pub file: FileDef,
    /// The generated Rust.
    pub code: TokenStream,
    /// Warnings the checker found.
    pub warnings: Vec<Diagnostic>,
}

/// Parses and checks a file: its model and warnings, or every diagnostic.
pub fn check_source(
    file: FileId,
    source: &str,
) -> Result<(FileDef, Vec<Diagnostic>), Vec<Diagnostic>> {
    crate::stack::with_stack(|| check_here(file, source))
}

fn check_here(file: FileId, source: &str) -> Result<(FileDef, Vec<Diagnostic>), Vec<Diagnostic>> {
    let (def, mut diagnostics) = syntax::parse_partial(file, source)?;
    match check::file(&def.agents, &def.behaviors) {
        Ok(warnings) | Err(warnings) => diagnostics.extend(warnings),
    }
    let diagnostics = check::cap(in_source_order(diagnostics));
    if diagnostics.iter().any(Diagnostic::is_error) {
        Err(diagnostics)
    } else {
        Ok((def, diagnostics))
    }
}

/// Parses, checks and generates a file. `runtime` overrides the runtime path of agents that do
/// not name one.
pub fn compile_source(
    file: FileId,
    source: &str,
    runtime: Option<&syn::Path>,
) -> Result<Compiled, Vec<Diagnostic>> {
    crate::stack::with_stack(|| compile_here(file, source, runtime))
}

fn compile_here(
    file: FileId,
    source: &str,
    runtime: Option<&syn::Path>,
) -> Result<Compiled, Vec<Diagnostic>> {
    let (def, warnings) = prepare(file, source, runtime, None)?;
    let mut code = TokenStream::new();
    generate(file, source, &def, |chunk| code.extend(chunk));
    Ok(Compiled {
        file: def,
        code,
        warnings,
    })
}

/// Parses, checks and generates a file straight into the text [`pretty`] makes of its code:
/// each agent's code is printed as soon as it is generated, so a file of 100,000 agents never
/// holds all their tokens at once (they take about twenty times the memory of their text). What
/// the [`Builder`](super::Builder) writes: the generated file and the checker's warnings. With
/// a `lock`, every agent is checked against the lock file and recorded there ([`super::lock`]).
pub fn compile_to_text(
    file: FileId,
    source: &str,
    runtime: Option<&syn::Path>,
    lock: Option<&mut super::lock::Lock>,
    origin: &str,
) -> Result<(String, Vec<Diagnostic>), Vec<Diagnostic>> {
    crate::stack::with_stack(|| {
        let (def, warnings) = prepare(file, source, runtime, lock)?;
        let mut text = String::new();
        generate(file, source, &def, |chunk| {
            text.push_str(&one_item_per_line(chunk));
        });
        // The model is no longer needed: formatting a large file has its memory.
        drop(def);
        Ok((finish(text, origin), warnings))
    })
}

/// The checked model, with the lock file's verdict and the runtime override applied.
fn prepare(
    file: FileId,
    source: &str,
    runtime: Option<&syn::Path>,
    lock: Option<&mut super::lock::Lock>,
) -> Result<(FileDef, Vec<Diagnostic>), Vec<Diagnostic>> {
    let (mut def, warnings) = check_here(file, source)?;
    if let Some(lock) = lock {
        let stranded: Vec<Diagnostic> = def
            .agents
            .iter_mut()
            .flat_map(|agent| lock.check(agent))
            .collect();
        if !stranded.is_empty() {
            return Err(stranded);
        }
    }
    if let Some(path) = runtime {
        for agent in &mut def.agents {
            if !agent.runtime.is_set() {
                agent.runtime.set(path.clone(), Span::Synthetic);
            }
        }
    }
    Ok((def, warnings))
}

/// Generates `def`'s code, handing it to `out` in whole items: the imports and checks first,
/// then each agent's code.
fn generate(file: FileId, source: &str, def: &FileDef, mut out: impl FnMut(TokenStream)) {
    let names = emit::rust_names::collect(file.0, &def.agents, &def.behaviors);
    let mut code = emit::rust_names::uses(&names, source);
    if let Some(agent) = def.agents.first() {
        let krate = emit::runtime(&agent.runtime);
        code.extend(emit::rust_names::action_checks(
            file.0, &names, source, &krate,
        ));
    }
    code.extend(emit::rust_names::default_checks(&def.agents, source));
    out(code);
    emit::rust_names::with_aliases(&names, source, || {
        emit::file_each(&def.agents, &def.behaviors, &mut out);
    });
}

/// Above this much generated Rust (in bytes of token text), [`pretty`] writes one item per line
/// instead of running prettyplease: formatting a 10,000-state machine (about 18 MB) took four
/// times as long as parsing, checking and generating it, for a file only rustc reads.
pub const FORMAT_LIMIT: usize = 1 << 20;

/// Generated code as a Rust file under an `@generated` header naming its origin: formatted with
/// prettyplease up to [`FORMAT_LIMIT`] bytes, one item per line above.
///
/// Takes the code by value: iterating a token stream that is still shared copies every token.
pub fn pretty(code: TokenStream, origin: &str) -> String {
    crate::stack::with_stack(|| pretty_here(code, origin))
}

fn pretty_here(code: TokenStream, origin: &str) -> String {
    finish(one_item_per_line(code), origin)
}

/// The file [`pretty`] makes of code already printed one item per line.
fn finish(text: String, origin: &str) -> String {
    let body = if text.len() <= FORMAT_LIMIT {
        match syn::parse_str::<syn::File>(&text) {
            Ok(file) => prettyplease::unparse(&file),
            // The generator only emits items; should that ever break, the unformatted code
            // still compiles (or shows rustc the problem).
            Err(_) => text,
        }
    } else {
        text
    };
    let body = locate_rust_names(&body, origin);
    // Messages generated code panics with at compile time name the file (inside a string).
    let body = if body.contains(emit::rust_names::ORIGIN) {
        body.replace(emit::rust_names::ORIGIN, &origin.escape_debug().to_string())
    } else {
        body
    };
    format!(
        "// @generated by agent-dsl from `{origin}`. Do not edit: edit the `.agent` file.\n\n{body}"
    )
}

/// Moves each Rust name's marker (`/// @rust-name 21:47: action `charge``, before its `use` or
/// check) to the end of the item's line as `// agents/order.agent:21:47: action `charge``: rustc quotes that
/// line when the name does not resolve, so the error shows where the file wrote it.
fn locate_rust_names(body: &str, origin: &str) -> String {
    const FORMATTED: &str = "@rust-name ";
    const RAW: &str = "# [doc = \"@rust-name ";
    if !body.contains("@rust-name ") {
        return body.to_string();
    }
    let mut out = String::with_capacity(body.len());
    let mut marker: Option<String> = None;
    for line in body.lines() {
        let trimmed = line.trim_start();
        let doc = trimmed.strip_prefix("///").map(str::trim_start);
        if let Some(rest) = doc.and_then(|d| d.strip_prefix(FORMATTED)) {
            marker = Some(rest.to_string());
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix(RAW) {
            // Unformatted output: the marker and its `use` share a line.
            if let Some((text, item)) = rest.split_once("\"]") {
                out.push_str(item.trim_start());
                out.push_str(&format!(" // {origin}:{}\n", text.replace("\\\"", "\"")));
                continue;
            }
        }
        out.push_str(line);
        if !trimmed.starts_with("#[")
            && let Some(text) = marker.take()
        {
            out.push_str(&format!(" // {origin}:{text}"));
        }
        out.push('\n');
    }
    out
}

/// The token text with a line break after each top-level item: after a top-level `;`, or a
/// top-level `{ .. }` not followed by `;`. Each item is printed as one stream, so joined
/// punctuation (`::`) stays joined.
fn one_item_per_line(code: TokenStream) -> String {
    use proc_macro2::{Delimiter, TokenTree};
    let mut out = String::new();
    let mut item = TokenStream::new();
    let mut tokens = code.into_iter().peekable();
    while let Some(token) = tokens.next() {
        let ends_item = match &token {
            TokenTree::Punct(p) => p.as_char() == ';',
            TokenTree::Group(g) => {
                g.delimiter() == Delimiter::Brace
                    && !matches!(tokens.peek(), Some(TokenTree::Punct(p)) if p.as_char() == ';')
            }
            _ => false,
        };
        item.extend([token]);
        if ends_item {
            out.push_str(&std::mem::take(&mut item).to_string());
            out.push('\n');
        }
    }
    out.push_str(&item.to_string());
    out
}

/// Diagnostics sorted by where they point (stable, so one place keeps the checks' order).
fn in_source_order(mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    diagnostics.sort_by_key(|d| d.span.byte_range().map(|(f, r)| (f, r.start)));
    diagnostics
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    #[test]
    fn large_outputs_are_written_one_item_per_line_and_still_parse() {
        let code = quote! {
            use ::std::fmt;
            #[doc = "a"]
            pub struct A { x: u8 }
            impl fmt::Debug for A {
                fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str("A") }
            }
            static B: A = A { x: 1 };
        };
        let text = one_item_per_line(code.clone());
        assert_eq!(text.lines().count(), 4, "{text}");
        assert!(text.starts_with("use :: std :: fmt ;\n"), "{text}");
        let reparsed: syn::File = syn::parse_str(&text).unwrap();
        assert_eq!(reparsed, syn::parse2::<syn::File>(code).unwrap());
    }

    const THERMOSTAT: &str = "agent Thermostat {
    state {
        target: f64 = 20.0
        since: Option<u64>
    }
    strategy fsm {
        initial Idle
        Idle -> Heating on cold if too_cold do start_heatin
        Heating -> Idle on warm do billing::stop_heating
    }
}
";

    /// The `use` lines of the Rust names, in the formatted and the one-item-per-line output.
    fn name_lines(text: &str) -> Vec<&str> {
        text.lines()
            .filter(|l| l.contains(" as __agent_rs_"))
            .collect()
    }

    #[test]
    fn text_printed_agent_by_agent_is_the_text_of_the_whole_token_stream() {
        // Several agents, a behaviour some run (its argument checks come first) and one no
        // agent runs, so every chunk `generate` hands out is in the comparison.
        let source = format!(
            "{THERMOSTAT}\nbehavior Patrol {{ sequence {{ action look }} }}\n\
             behavior Unused {{ action idle }}\n\
             agent Guard {{ strategy behavior Patrol }}\n\
             agent Clerk {{ actions file_it }}\n"
        );
        let origin = "agents/many.agent";
        let whole = compile_source(FileId(0), &source, None).unwrap();
        let expected = pretty(whole.code, origin);
        let (text, warnings) = compile_to_text(FileId(0), &source, None, None, origin).unwrap();
        assert_eq!(warnings, whole.warnings);
        assert_eq!(text, expected);
        assert!(text.contains("pub struct Clerk"), "{text}");
    }

    #[test]
    fn each_rust_name_is_imported_once_on_a_line_naming_the_agent_file() {
        let compiled = compile_source(FileId(0), THERMOSTAT, None).unwrap();
        let text = pretty(compiled.code.clone(), "agents/thermostat.agent");
        assert_eq!(
            name_lines(&text),
            [
                "use self::too_cold as __agent_rs_0_0; // agents/thermostat.agent:8:36: guard `too_cold`",
                "use self::start_heatin as __agent_rs_0_1; // agents/thermostat.agent:8:48: action `start_heatin`",
                "use billing::stop_heating as __agent_rs_0_2; // agents/thermostat.agent:9:36: action `billing::stop_heating`",
            ],
            "{text}"
        );
        // A field without a default: its type's `Default`, checked on a line naming the field.
        assert!(
            text.lines().any(|l| l.contains("field_default::<Option<u64>>")
                && l.ends_with("// agents/thermostat.agent:4:9: field `since` has no default, so its type's `Default`")),
            "{text}"
        );
        // A single action name also gets a fallback, so a function without `#[action]` is one
        // error whose message names the file; a path (`billing::stop_heating`) and a guard
        // (a plain function) do not.
        assert!(text.contains("use __agent_fallback_0::*;"), "{text}");
        assert!(
            text.contains("\"agents/thermostat.agent:8:48: `start_heatin` is not an action\""),
            "{text}"
        );
        assert!(!text.contains("`too_cold` is not an action"), "{text}");
        assert!(!text.contains("`stop_heating` is not an action"), "{text}");
        // The generated code names them only through their aliases.
        assert!(!text.contains("of::<start_heatin>"), "{text}");
        assert!(text.contains("of::<__agent_rs_0_1>"), "{text}");

        let raw = locate_rust_names(&one_item_per_line(compiled.code.clone()), "t.agent");
        let lines = name_lines(&raw);
        assert_eq!(lines.len(), 3, "{raw}");
        assert!(
            lines[1].ends_with("// t.agent:8:48: action `start_heatin`"),
            "{}",
            lines[1]
        );
    }

    #[test]
    fn tree_argument_checks_name_the_agent_file_once_per_behaviour() {
        let source = "agent Sentry {\n    strategy behavior Patrol\n}\nagent Other {\n    strategy behavior Patrol\n}\nbehavior Patrol {\n    action move_to(sped = 2)\n}\nbehavior Unused {\n    action move_to(x = 1)\n}\n";
        let compiled = compile_source(FileId(0), source, None).unwrap();
        let text = pretty(compiled.code.clone(), "agents/patrol.agent");
        // One check per argument and one for the required ones, though two agents run it;
        // none for a behaviour no agent runs (it generates no code).
        assert_eq!(text.matches("check_arg(").count(), 1, "{text}");
        assert_eq!(text.matches("check_required(").count(), 1, "{text}");
        assert!(
            text.contains("\"agents/patrol.agent:8:20: \""),
            "the message starts at the argument in the file: {text}"
        );
        assert!(text.contains("\"agents/patrol.agent:8:12: \""), "{text}");
        assert!(!text.contains(emit::rust_names::ORIGIN), "{text}");
    }
}
