//! The Rust names a `.agent` file uses (actions, guards, hooks, conditions), imported once each
//! under a generated alias at the top of the generated file.
//!
//! rustc reports a name that does not exist (or is not visible) where it is *imported*: one
//! `use` line, which the generated file ends with a comment naming the `.agent` file, line and
//! column (`use chargee as __agent_rs_0_0; // agents/order.agent:21:47: action `chargee``). Every
//! use of the name in the generated code goes through the alias, so a missing name is one error,
//! on that line, instead of one per use deep in generated impls with rustc's guesses about them.
//! The macros alias their single action names too ([`super::macro_names`]), at the names' own
//! spans; their other paths are written as they are.

use std::cell::RefCell;
use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::model::{
    AgentDef, BehaviorDef, NodeDef, NodeKind, Span, Spanned, StateDef, StrategyDef, TreeRef,
};

thread_local! {
    /// Path text -> alias, while [`with_aliases`] runs.
    static ALIASES: RefCell<HashMap<String, syn::Ident>> = RefCell::new(HashMap::new());
    /// The file's lines, while [`with_aliases`] runs: [`file_location`] places spans with them.
    static LINES: RefCell<Option<std::rc::Rc<LineIndex>>> = const { RefCell::new(None) };
    /// Whether the aliases are a macro's ([`with_macro_aliases`]), placed at the names' spans.
    static RESPAN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Stands for the `.agent` file's path in generated strings; [`crate::build`] replaces it when
/// it writes the file (the generator does not know where the file lives).
pub const ORIGIN: &str = "@rust-origin@";

/// One Rust name a file uses, with where it first appears.
#[derive(Debug, Clone)]
pub struct RustName {
    /// The path as written.
    pub path: syn::Path,
    /// What the file uses it as: `action`, `guard`, `condition`, `hook`, `tool`.
    pub role: &'static str,
    /// Its first occurrence.
    pub span: Span,
    /// The alias the generated code uses.
    pub alias: syn::Ident,
}

/// Every Rust name `agents` and `behaviors` use, once each, in order of first use. `file` makes
/// the aliases of two files included in one module distinct.
pub fn collect(file: u32, agents: &[AgentDef], behaviors: &[BehaviorDef]) -> Vec<RustName> {
    collect_in(file, agents, behaviors.iter().map(|b| &b.root).collect())
}

/// [`collect`] over `agents` and the trees `roots`.
pub fn collect_in(file: u32, agents: &[AgentDef], roots: Vec<&NodeDef>) -> Vec<RustName> {
    let mut names: Vec<RustName> = Vec::new();
    let mut seen: HashMap<String, ()> = HashMap::new();
    let mut add = |path: &Spanned<syn::Path>, role: &'static str| {
        let text = path_text(&path.value);
        if seen.insert(text, ()).is_none() {
            let alias = format_ident!("__agent_rs_{}_{}", file, names.len());
            names.push(RustName {
                path: path.value.clone(),
                role,
                span: path.span,
                alias,
            });
        }
    };
    let mut trees = roots;
    for agent in agents {
        for action in &agent.actions {
            add(&action.path, "action");
        }
        match agent.strategy.get() {
            Some(StrategyDef::Fsm(fsm)) => {
                for hook in &fsm.hooks {
                    add(&hook.action, "hook");
                }
                for row in &fsm.rows {
                    if let Some(guard) = &row.guard {
                        add(guard, "guard");
                    }
                    if let Some(action) = &row.action {
                        add(action, "action");
                    }
                }
            }
            Some(StrategyDef::BehaviorTree(tree)) => {
                if let Some(TreeRef::Inline(root)) = &tree.tree {
                    trees.push(root);
                }
            }
            Some(StrategyDef::Ai(ai)) => {
                for tool in ai.tool_refs() {
                    add(&tool.path, "tool");
                }
            }
            _ => {}
        }
    }
    // An explicit stack: trees are as deep as the nesting limit allows.
    while let Some(node) = trees.pop() {
        match &node.kind {
            NodeKind::Action { path, .. } => add(path, "action"),
            NodeKind::Condition(path) => add(path, "condition"),
            NodeKind::Ask(ask) => add(&ask.action, "action"),
            _ => {}
        }
        trees.extend(node.children.iter().rev());
    }
    names
}

/// The `use` items of `names`, each with a doc marker (`@rust-name LINE:COL: role `path``) that
/// [`crate::build`] turns into the trailing comment naming the file.
pub fn uses(names: &[RustName], source: &str) -> TokenStream {
    let lines = LineIndex::new(source);
    let items = names.iter().map(|name| {
        let (line, column) = lines.line_column(name.span);
        let marker = format!(
            "@rust-name {line}:{column}: {} `{}`",
            name.role,
            path_text(&name.path)
        );
        let (path, alias) = (&name.path, &name.alias);
        // A single name is an item of the including module (or imported there): `self::` makes
        // rustc look for it there and suggest the module's similar names, not an extern crate.
        let path = if path.leading_colon.is_none() && path.segments.len() == 1 {
            quote!(self::#path)
        } else {
            quote!(#path)
        };
        quote! {
            #[doc = #marker]
            #[allow(unused_imports)]
            use #path as #alias;
        }
    });
    quote!(#(#items)*)
}

/// For each single action name (actions, hooks, tools) of a file: a fallback under its alias,
/// glob-imported beside the `use` of [`uses`], and a check that rejects the fallback, so a plain
/// function without `#[action]` is one error whose message starts with the `.agent` file's
/// place (see [`super::macro_names`], which the macros use the same way).
pub fn action_checks(
    file: u32,
    names: &[RustName],
    source: &str,
    krate: &TokenStream,
) -> TokenStream {
    let lines = LineIndex::new(source);
    let module = format_ident!("__agent_fallback_{}", file);
    let single: Vec<&RustName> = names
        .iter()
        .filter(|n| super::macro_names::is_single(n))
        .collect();
    if single.is_empty() {
        return TokenStream::new();
    }
    let fallbacks: Vec<(syn::Ident, String)> = single
        .iter()
        .map(|n| {
            let text = syn::ext::IdentExt::unraw(&n.path.segments[0].ident).to_string();
            (n.alias.clone(), text)
        })
        .collect();
    let checks = single.iter().zip(&fallbacks).map(|(n, (_, text))| {
        let (line, column) = lines.line_column(n.span);
        let location = format!("{ORIGIN}:{line}:{column}: ");
        let span = proc_macro2::Span::call_site();
        super::macro_names::check(text, &location, span, &module, &n.alias)
    });
    let fallback = super::macro_names::fallback_module(&module, &fallbacks, krate);
    let checks = super::macro_names::checks(checks);
    quote! {
        #fallback
        #checks
    }
}

/// One check per state field declared without a default, before the state struct: the field's
/// type must be `Default`, and a type that is not is reported on a line naming the field's place
/// in the file (the same marker as [`uses`]) rather than only inside the generated `Default` impl.
pub fn default_checks(agents: &[AgentDef], source: &str) -> TokenStream {
    let lines = LineIndex::new(source);
    let lines = &lines;
    let checks = agents.iter().flat_map(|agent| {
        let krate = super::runtime(&agent.runtime);
        let fields = match &agent.state {
            StateDef::Fields(fields) => fields.as_slice(),
            StateDef::External => &[],
        };
        fields
            .iter()
            .filter(|f| f.default.is_none())
            .map(move |field| {
                let (line, column) = lines.line_column(field.name.span);
                let marker = format!(
                    "@rust-name {line}:{column}: field `{}` has no default, so its type's `Default`",
                    field.name.value
                );
                let ty = &field.ty.value;
                quote! {
                    #[doc = #marker]
                    const _: () = #krate::__private::field_default::<#ty>();
                }
            })
    });
    quote!(#(#checks)*)
}

/// Runs `f` (the generator) with `names` aliased: [`rust_path`] answers their aliases, and
/// [`file_location`] places spans in `source`.
pub fn with_aliases<R>(names: &[RustName], source: &str, f: impl FnOnce() -> R) -> R {
    let map: HashMap<String, syn::Ident> = names
        .iter()
        .map(|n| (path_text(&n.path), n.alias.clone()))
        .collect();
    let previous = ALIASES.with(|a| std::mem::replace(&mut *a.borrow_mut(), map));
    let lines = std::rc::Rc::new(LineIndex::new(source));
    let previous_lines = LINES.with(|l| l.borrow_mut().replace(lines));
    let result = f();
    ALIASES.with(|a| *a.borrow_mut() = previous);
    LINES.with(|l| *l.borrow_mut() = previous_lines);
    result
}

/// Runs `f` (the generator of a macro) with the single names `aliases` maps aliased:
/// [`rust_path`] answers each alias at the span of the name it stands for.
pub fn with_macro_aliases<R>(aliases: HashMap<String, syn::Ident>, f: impl FnOnce() -> R) -> R {
    let previous = ALIASES.with(|a| std::mem::replace(&mut *a.borrow_mut(), aliases));
    let previous_respan = RESPAN.replace(true);
    let result = f();
    ALIASES.with(|a| *a.borrow_mut() = previous);
    RESPAN.set(previous_respan);
    result
}

/// `"<file>:LINE:COL: "` for a span of the `.agent` file being generated ([`ORIGIN`] standing
/// for its path), to start a message rustc shows from generated code; empty for macros, whose
/// spans place their errors themselves.
pub fn file_location(span: Span) -> String {
    LINES.with(|l| match &*l.borrow() {
        Some(lines) if span.byte_range().is_some() => {
            let (line, column) = lines.line_column(span);
            format!("{ORIGIN}:{line}:{column}: ")
        }
        _ => String::new(),
    })
}

/// A user's path as generated code writes it: its alias for a `.agent` file's names, the path
/// itself otherwise.
pub fn rust_path(path: &syn::Path) -> TokenStream {
    let alias = ALIASES.with(|a| {
        let aliases = a.borrow();
        if aliases.is_empty() {
            None
        } else {
            aliases.get(&path_text(path)).cloned()
        }
    });
    match alias {
        // A macro's alias stands where its name was written, so rustc reports it there.
        Some(mut alias) if RESPAN.get() => {
            alias.set_span(
                path.segments
                    .first()
                    .map_or(alias.span(), |s| s.ident.span()),
            );
            quote!(#alias)
        }
        Some(alias) => quote!(#alias),
        None => quote!(#path),
    }
}

fn path_text(path: &syn::Path) -> String {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let text = segments.join("::");
    if path.leading_colon.is_some() {
        format!("::{text}")
    } else {
        text
    }
}

/// Lines and columns of one file in logarithmic time: the generator places one span per name,
/// argument or field, and counting from the file's start for each was quadratic.
pub struct LineIndex {
    /// Byte offset of each line's start.
    line_starts: Vec<usize>,
    /// Characters before each [`BLOCK`]-byte block (so a column never counts a whole line).
    chars_at: Vec<usize>,
    /// Whether each byte starts a character.
    starts: Vec<bool>,
}

/// Bytes per checkpoint of [`LineIndex::chars_at`].
const BLOCK: usize = 64;

impl LineIndex {
    /// Indexes `source`.
    pub fn new(source: &str) -> Self {
        let bytes = source.as_bytes();
        let line_starts = std::iter::once(0)
            .chain(
                bytes
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| **b == b'\n')
                    .map(|(i, _)| i + 1),
            )
            .collect();
        let starts: Vec<bool> = bytes.iter().map(|b| b & 0xC0 != 0x80).collect();
        let mut chars_at = Vec::with_capacity(bytes.len() / BLOCK + 1);
        let mut count = 0;
        for (i, start) in starts.iter().enumerate() {
            if i % BLOCK == 0 {
                chars_at.push(count);
            }
            count += usize::from(*start);
        }
        chars_at.push(count);
        LineIndex {
            line_starts,
            chars_at,
            starts,
        }
    }

    fn chars_before(&self, byte: usize) -> usize {
        let byte = byte.min(self.starts.len());
        let block = byte / BLOCK;
        let from = block * BLOCK;
        self.chars_at[block] + self.starts[from..byte].iter().filter(|s| **s).count()
    }

    /// 1-based line and column (in characters) of a file span's start; `(0, 0)` for others.
    pub fn line_column(&self, span: Span) -> (usize, usize) {
        let Some((_, range)) = span.byte_range() else {
            return (0, 0);
        };
        let at = range.start.min(self.starts.len());
        let line = self.line_starts.partition_point(|&start| start <= at);
        let line_start = self.line_starts[line - 1];
        (
            line,
            self.chars_before(at) - self.chars_before(line_start) + 1,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FileId;

    #[test]
    fn lines_and_columns_count_characters() {
        let source = "ab\né𝄞x\n\ny";
        let index = LineIndex::new(source);
        let at = |start: usize| {
            index.line_column(Span::File {
                file: FileId(0),
                start,
                end: start,
            })
        };
        assert_eq!(at(0), (1, 1));
        assert_eq!(at(2), (1, 3));
        assert_eq!(at(3), (2, 1));
        assert_eq!(at(source.find('x').unwrap()), (2, 3));
        assert_eq!(at(source.find('y').unwrap()), (4, 1));
        let long = "é".repeat(200) + "z";
        let index = LineIndex::new(&long);
        let z = index.line_column(Span::File {
            file: FileId(0),
            start: long.len() - 1,
            end: long.len(),
        });
        assert_eq!(z, (1, 201));
    }
}
