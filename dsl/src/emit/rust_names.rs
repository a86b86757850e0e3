//! The Rust names a `.agent` file uses (actions, guards, hooks, conditions), imported once each
//! under a generated alias at the top of the generated file.
//!
//! rustc reports a name that does not exist (or is not visible) where it is *imported*: one
//! `use` line, which the generated file ends with a comment naming the `.agent` file, line and
//! column (`use chargee as __agent_rs_0_0; // agents/order.agent:21:47: action `chargee``). Every
//! use of the name in the generated code goes through the alias, so a missing name is one error,
//! on that line, instead of one per use deep in generated impls with rustc's guesses about them.
//! The macros' paths keep their own spans and are never aliased.

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
    /// The file's text, while [`with_aliases`] runs: [`file_location`] reads lines from it.
    static SOURCE: RefCell<Option<std::rc::Rc<str>>> = const { RefCell::new(None) };
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
    let mut trees: Vec<&NodeDef> = behaviors.iter().map(|b| &b.root).collect();
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
            _ => {}
        }
        trees.extend(node.children.iter().rev());
    }
    names
}

/// The `use` items of `names`, each with a doc marker (`@rust-name LINE:COL: role `path``) that
/// [`crate::build`] turns into the trailing comment naming the file.
pub fn uses(names: &[RustName], source: &str) -> TokenStream {
    let items = names.iter().map(|name| {
        let (line, column) = line_column(source, name.span);
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

/// One check per state field declared without a default, before the state struct: the field's
/// type must be `Default`, and a type that is not is reported on a line naming the field's place
/// in the file (the same marker as [`uses`]) rather than only inside the generated `Default` impl.
pub fn default_checks(agents: &[AgentDef], source: &str) -> TokenStream {
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
                let (line, column) = line_column(source, field.name.span);
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
    let previous_source = SOURCE.with(|s| s.borrow_mut().replace(source.into()));
    let result = f();
    ALIASES.with(|a| *a.borrow_mut() = previous);
    SOURCE.with(|s| *s.borrow_mut() = previous_source);
    result
}

/// `"<file>:LINE:COL: "` for a span of the `.agent` file being generated ([`ORIGIN`] standing
/// for its path), to start a message rustc shows from generated code; empty for macros, whose
/// spans place their errors themselves.
pub fn file_location(span: Span) -> String {
    SOURCE.with(|s| match &*s.borrow() {
        Some(source) if span.byte_range().is_some() => {
            let (line, column) = line_column(source, span);
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

/// 1-based line and column (in characters) of a file span's start.
fn line_column(source: &str, span: Span) -> (usize, usize) {
    let Some((_, range)) = span.byte_range() else {
        return (0, 0);
    };
    let before = source.get(..range.start).unwrap_or(source);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}
