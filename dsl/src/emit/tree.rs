//! Generated trees: the model's nodes as nested runtime node types built from constants.
//!
//! A tree becomes one expression (`Sequence::new((Condition..., (ActionNode..., ())))`) whose
//! leaves hold function items and constant arguments, so it is built at compile time inside a
//! `const { }` block and ticks without boxing, dynamic dispatch or allocation. Its progress
//! type is spelled out from the same model (every state type is a runtime type), which is what
//! lets an agent keep it without naming the tree's own type. `subtree X` inlines behaviour `X`.

use std::borrow::Cow;
use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::rust_names::{file_location, rust_path};
use super::{ident, local, runtime};
use crate::model::{
    AgentDef, BehaviorDef, BtDef, Literal, NodeDef, NodeKind, TreeRef, TreeStrategyDef,
    behaviors_by_name, group_children,
};

/// Paths generated trees use.
struct Cx<'a> {
    rt: TokenStream,
    /// The runtime crate (`rt` is its `bt` module).
    krate: TokenStream,
    /// The behaviours subtrees may name, by name (the first of a name): indexed once per file
    /// or macro, not once per agent or behaviour.
    behaviors: Cow<'a, HashMap<&'a str, &'a BehaviorDef>>,
    /// The blackboard type, or `_` where Rust infers it (`bt!` as an expression).
    state: TokenStream,
}

/// `impl TreeAgent` for a behaviour-tree agent. `by_name` are the behaviours its tree may name,
/// by name (a file's, indexed once per file; none for macros).
pub fn agent_tree<'a>(
    def: &AgentDef,
    tree: &TreeStrategyDef,
    by_name: &'a HashMap<&'a str, &'a BehaviorDef>,
    krate: &TokenStream,
) -> TokenStream {
    let agent = ident(&def.name.value, def.name.span);
    let rt = quote!(#krate::bt);
    let cx = Cx {
        rt: rt.clone(),
        krate: krate.clone(),
        behaviors: Cow::Borrowed(by_name),
        state: quote!(#agent),
    };
    let (nodes, body, actions) = match &tree.tree {
        Some(TreeRef::Rust(path)) => {
            let path = &path.value;
            (
                quote!(<#path as #rt::Behavior<#agent>>::Nodes),
                quote!(<#path as #rt::Behavior<#agent>>::with_tree(visitor)),
                quote! {
                    fn tree_action(name: &str) -> ::core::option::Option<&'static #krate::ActionEntry<Self>> {
                        <#path as #rt::Behavior<#agent>>::action(name)
                    }

                    fn check_answer(
                        interrupt: &str,
                        value: &#krate::__private::serde_json::Value,
                    ) -> ::core::option::Option<::core::result::Result<(), #krate::ActionError>> {
                        <#path as #rt::Behavior<#agent>>::check_answer(interrupt, value)
                    }
                },
            )
        }
        Some(TreeRef::Inline(root)) => (
            nodes_type(&cx, root),
            visit_const(&cx, root),
            with_answers(&cx, root, "tree_action"),
        ),
        Some(TreeRef::Behavior(name)) => match cx.behaviors.get(name.value.as_str()) {
            Some(behavior) => {
                let root = subtree(&behavior.name.value, &behavior.root);
                (
                    nodes_type(&cx, &root),
                    visit_const(&cx, &root),
                    with_answers(&cx, &root, "tree_action"),
                )
            }
            // Unreachable after the checks; the fallback keeps the output well-formed.
            None => return tree_fallback(def, krate),
        },
        None => return tree_fallback(def, krate),
    };
    // A file's behaviours are checked once each, where the file is generated.
    let checks = match &tree.tree {
        Some(TreeRef::Inline(root)) => arg_checks(root, krate),
        _ => quote!(),
    };
    quote! {
        #checks

        impl #krate::TreeAgent for #agent {
            type Nodes = #nodes;

            // Inlined, so that `tick`'s visitor is never passed through memory (a
            // store-forwarding stall that cost half of a small tree's tick).
            #[inline(always)]
            fn with_tree<__V: #rt::TreeVisitor<Self, Self::Nodes>>(visitor: __V) -> __V::Output {
                #body
            }

            #actions
        }
    }
}

/// The tree's action lookup `fn_name` and, when it asks, its `check_answer`.
fn with_answers(cx: &Cx<'_>, root: &NodeDef, fn_name: &str) -> TokenStream {
    let actions = action_fn(cx, root, fn_name);
    let answers = answer_fn(cx, root);
    quote!(#actions #answers)
}

/// `fn <name>(name: &str) -> Option<&'static ActionEntry<State>>`: a `match` from the tree's
/// action names to their entries, each in a `static`, so a host can run the tree's async
/// actions without the agent listing them.
fn action_fn(cx: &Cx<'_>, root: &NodeDef, fn_name: &str) -> TokenStream {
    let state = &cx.state;
    let krate = &cx.krate;
    let mut seen = std::collections::HashSet::new();
    let mut paths = Vec::new();
    collect_actions(cx, root, &mut seen, &mut paths);
    let names = paths.iter().map(|p| path_name(p));
    let paths = paths.iter().map(|p| rust_path(p));
    let fn_name = syn::Ident::new(fn_name, proc_macro2::Span::call_site());
    quote! {
        #[allow(unreachable_patterns)]
        fn #fn_name(name: &str) -> ::core::option::Option<&'static #krate::ActionEntry<#state>> {
            match name {
                #(#names => {
                    static ENTRY: #krate::ActionEntry<#state> = <#paths as #krate::Action<#state>>::ENTRY;
                    ::core::option::Option::Some(&ENTRY)
                })*
                _ => ::core::option::Option::None,
            }
        }
    }
}

/// The action paths of a tree, each name once, in the order written (subtrees inlined as
/// [`node_expr`] inlines them).
fn collect_actions<'a: 'n, 'n>(
    cx: &Cx<'a>,
    node: &'n NodeDef,
    seen: &mut std::collections::HashSet<String>,
    out: &mut Vec<&'n syn::Path>,
) {
    match &node.kind {
        NodeKind::Action { path, .. } => {
            if seen.insert(path_name(&path.value)) {
                out.push(&path.value);
            }
        }
        NodeKind::Subtree(name) if node.children.is_empty() => {
            if let Some(b) = cx.behaviors.get(name.value.as_str()) {
                collect_actions(cx, &b.root, seen, out);
            }
        }
        _ => {
            for child in &node.children {
                collect_actions(cx, child, seen, out);
            }
        }
    }
}

/// `fn check_answer(interrupt, value)` when the tree has `ask` leaves (none: the trait's
/// default): a `match` from each interrupt name to a check of its answer type. Its body first
/// names, at each leaf's action, what the leaf needs of it (sync, taking the answer), so a
/// mistake is reported there.
fn answer_fn(cx: &Cx<'_>, root: &NodeDef) -> TokenStream {
    let mut asks = Vec::new();
    collect_asks(cx, root, &mut asks);
    if asks.is_empty() {
        return TokenStream::new();
    }
    let (krate, state) = (&cx.krate, &cx.state);
    let private = quote!(#krate::__private);
    let needs = asks.iter().map(|ask| {
        let resume = &ask.resume.value;
        let action = rust_path(&ask.action.value);
        quote_spanned!(ask.action.span.to_proc_macro()=>
            #private::answer_action::<#state, #resume, #action>();)
    });
    let mut seen = std::collections::HashSet::new();
    let arms = asks
        .iter()
        .filter(|ask| seen.insert(ask.name.value.as_str()))
        .map(|ask| {
            let (name, resume) = (&ask.name.value, &ask.resume.value);
            let check =
                quote_spanned!(ask.resume.span.to_proc_macro()=> #private::check_resume::<#resume>);
            quote!(#name => ::core::option::Option::Some(#check(#name, value)))
        });
    quote! {
        #[allow(unreachable_patterns)]
        fn check_answer(
            interrupt: &str,
            value: &#private::serde_json::Value,
        ) -> ::core::option::Option<::core::result::Result<(), #krate::ActionError>> {
            #(#needs)*
            match interrupt {
                #(#arms,)*
                _ => ::core::option::Option::None,
            }
        }
    }
}

/// The `ask` leaves of a tree, in the order written (subtrees inlined).
fn collect_asks<'a: 'n, 'n>(
    cx: &Cx<'a>,
    node: &'n NodeDef,
    out: &mut Vec<&'n crate::model::AskDef>,
) {
    match &node.kind {
        NodeKind::Ask(ask) => out.push(ask),
        NodeKind::Subtree(name) if node.children.is_empty() => {
            if let Some(b) = cx.behaviors.get(name.value.as_str()) {
                collect_asks(cx, &b.root, out);
            }
        }
        _ => {
            for child in &node.children {
                collect_asks(cx, child, out);
            }
        }
    }
}

/// A tree that fails at once: what an agent gets beside its errors, so code using it compiles.
pub fn tree_fallback(def: &AgentDef, krate: &TokenStream) -> TokenStream {
    let agent = ident(&def.name.value, def.name.span);
    let rt = quote!(#krate::bt);
    quote! {
        impl #krate::TreeAgent for #agent {
            type Nodes = ();
            fn with_tree<__V: #rt::TreeVisitor<Self, Self::Nodes>>(visitor: __V) -> __V::Output {
                visitor.visit(&#rt::Condition::new("unchecked", |_: &#agent| false))
            }
        }
    }
}

/// What `bt! { ... }` expands to: the root tree as an expression, or one type per behaviour.
pub fn bt(def: &BtDef) -> TokenStream {
    let krate = runtime(&def.runtime);
    let rt = quote!(#krate::bt);
    match &def.blackboard {
        Some(ty) => {
            let state = &ty.value;
            let cx = Cx {
                rt: rt.clone(),
                krate: krate.clone(),
                behaviors: Cow::Owned(behaviors_by_name(&def.behaviors)),
                state: quote!(#state),
            };
            let items = def.behaviors.iter().map(|b| behavior_item(&cx, b));
            let checks = def.behaviors.iter().map(|b| arg_checks(&b.root, &krate));
            quote!(#(#checks)* #(#items)*)
        }
        None => {
            let Some(root) = &def.root else {
                return quote!(());
            };
            let cx = Cx {
                rt,
                krate: krate.clone(),
                behaviors: Cow::Owned(behaviors_by_name(&def.behaviors)),
                state: quote!(_),
            };
            let tree = node_expr(&cx, root);
            let roots = std::iter::once(root).chain(def.behaviors.iter().map(|b| &b.root));
            let checks: TokenStream = roots.map(|r| arg_checks(r, &krate)).collect();
            if checks.is_empty() {
                tree
            } else {
                quote!({ #checks #tree })
            }
        }
    }
}

/// What `bt!` emits beside its errors: a well-typed value or items, so nothing else fails.
pub fn bt_fallback(def: &BtDef) -> TokenStream {
    let krate = runtime(&def.runtime);
    let rt = quote!(#krate::bt);
    match &def.blackboard {
        Some(ty) => {
            let state = &ty.value;
            // One type per name, so a duplicate behavior is one error, not a cascade.
            let mut seen = std::collections::HashSet::new();
            let unique = def
                .behaviors
                .iter()
                .filter(|b| seen.insert(b.name.value.as_str()));
            let items = unique.map(|b| {
                let name = ident(&b.name.value, b.name.span);
                let text = &b.name.value;
                let vis = &b.vis;
                quote! {
                    #[derive(Debug, Clone, Copy, Default)]
                    #vis struct #name;
                    impl #name {
                        pub const DOT: &'static str = "";
                        pub const MERMAID: &'static str = "";
                    }
                    impl #rt::Behavior<#state> for #name {
                        type Nodes = ();
                        const NAME: &'static str = #text;
                        fn with_tree<__V: #rt::TreeVisitor<#state, ()>>(visitor: __V) -> __V::Output {
                            visitor.visit(&#rt::Condition::new("unchecked", |_: &#state| false))
                        }
                    }
                }
            });
            quote!(#(#items)*)
        }
        None => quote!(#rt::Condition::new("unchecked", |_: &_| false)),
    }
}

fn behavior_item(cx: &Cx<'_>, behavior: &BehaviorDef) -> TokenStream {
    let rt = &cx.rt;
    let state = &cx.state;
    let name = ident(&behavior.name.value, behavior.name.span);
    let text = &behavior.name.value;
    let vis = &behavior.vis;
    let root = subtree(text, &behavior.root);
    let nodes = nodes_type(cx, &root);
    let body = visit_const(cx, &root);
    let actions = with_answers(cx, &root, "action");
    let doc = format!(
        "The behaviour `{text}`: run it with `#[agent(strategy = BehaviorTree, tree = {text})]`.\n\n```text\n{}```",
        crate::graph::tree::text(&behavior.root)
    );
    let dot = crate::graph::tree::dot_in(text, &behavior.root, &cx.behaviors);
    let mermaid = crate::graph::tree::mermaid_in(&behavior.root, &cx.behaviors);
    // The type is `pub` in a private module and imported with the behaviour's visibility: a
    // `pub` agent running a private behaviour names it in its public `TreeAgent` impl, which
    // rustc accepts for a `pub` type (E0446 otherwise), and the behaviour is still private.
    let module = quote::format_ident!("__stratagem_behavior_{}", text);
    quote! {
        mod #module {
            #[doc = #doc]
            #[derive(Debug, Clone, Copy, Default)]
            pub struct #name;
        }
        #[allow(unused_imports)]
        #vis use #module::#name;

        impl #rt::Behavior<#state> for #name {
            type Nodes = #nodes;
            const NAME: &'static str = #text;

            fn with_tree<__V: #rt::TreeVisitor<#state, Self::Nodes>>(visitor: __V) -> __V::Output {
                #body
            }

            #actions
        }

        impl #name {
            /// The behaviour as a Graphviz `digraph`, subtrees expanded.
            pub const DOT: &'static str = #dot;
            /// The behaviour as a Mermaid flowchart, subtrees expanded.
            pub const MERMAID: &'static str = #mermaid;
        }
    }
}

/// A behaviour's root wrapped as `subtree Name`, so displays name it.
fn subtree(name: &str, root: &NodeDef) -> NodeDef {
    NodeDef {
        kind: NodeKind::Subtree(crate::model::Spanned::new(
            name.to_string(),
            crate::model::Span::Synthetic,
        )),
        children: vec![root.clone()],
        span: root.span,
    }
}

/// `visitor.visit(&const { tree })`: the tree is a compile-time constant.
fn visit_const(cx: &Cx<'_>, root: &NodeDef) -> TokenStream {
    let tree = node_expr(cx, root);
    quote!(visitor.visit(&const { #tree }))
}

fn cons(items: Vec<TokenStream>) -> TokenStream {
    items
        .into_iter()
        .rev()
        .fold(quote!(()), |tail, head| quote!((#head, #tail)))
}

/// A composite's children (or their progress types): short cons lists joined as a balanced tree
/// (`Join`), so wide composites nest by the logarithm of their width.
fn grouped(items: Vec<TokenStream>, join: &TokenStream) -> TokenStream {
    group_children(
        items,
        &mut cons,
        &mut |left, right| quote!(#join(#left, #right)),
    )
}

fn millis(d: u64) -> TokenStream {
    quote!(::core::time::Duration::from_millis(#d))
}

/// The node as a constant expression.
fn node_expr(cx: &Cx<'_>, node: &NodeDef) -> TokenStream {
    let rt = &cx.rt;
    let children = || {
        grouped(
            node.children.iter().map(|c| node_expr(cx, c)).collect(),
            &quote!(#rt::Join),
        )
    };
    let child = || {
        node.children
            .first()
            .map_or_else(|| quote!(()), |c| node_expr(cx, c))
    };
    match &node.kind {
        NodeKind::Sequence => {
            let c = children();
            quote!(#rt::Sequence::new(#c))
        }
        NodeKind::ReactiveSequence => {
            let c = children();
            quote!(#rt::ReactiveSequence::new(#c))
        }
        NodeKind::Selector => {
            let c = children();
            quote!(#rt::Selector::new(#c))
        }
        NodeKind::ReactiveSelector => {
            let c = children();
            quote!(#rt::ReactiveSelector::new(#c))
        }
        NodeKind::Parallel { success, failure } => {
            let c = children();
            let s = success.value as usize;
            let f = failure.as_ref().map_or(1, |f| f.value as usize);
            quote!(#rt::Parallel::new(#s, #f, #c))
        }
        NodeKind::Invert => {
            let c = child();
            quote!(#rt::Invert::new(#c))
        }
        NodeKind::ForceSuccess => {
            let c = child();
            quote!(#rt::ForceSuccess::new(#c))
        }
        NodeKind::ForceFailure => {
            let c = child();
            quote!(#rt::ForceFailure::new(#c))
        }
        NodeKind::RunOnce => {
            let c = child();
            quote!(#rt::RunOnce::new(#c))
        }
        NodeKind::Repeat(n) => {
            let c = child();
            let n = n.value;
            quote!(#rt::Repeat::new(#n, #c))
        }
        NodeKind::Retry(n) => {
            let c = child();
            let n = n.value;
            quote!(#rt::Retry::new(#n, #c))
        }
        NodeKind::Timeout(d) => {
            let c = child();
            let d = millis(d.value.0);
            quote!(#rt::Timeout::new(#d, #c))
        }
        NodeKind::Delay(d) => {
            let c = child();
            let d = millis(d.value.0);
            quote!(#rt::Delay::new(#d, #c))
        }
        NodeKind::Wait(d) => {
            let d = millis(d.value.0);
            quote!(#rt::Wait::new(#d))
        }
        NodeKind::Condition(path) => {
            let name = path_name(&path.value);
            let p = rust_path(&path.value);
            let state = &cx.state;
            // Spanned at the path: a function that is not `fn(&State) -> bool` is reported there.
            quote_spanned!(path.span.to_proc_macro()=> #rt::condition::<#state, _>(#name, #p))
        }
        NodeKind::Action { path, args } => {
            let state = &cx.state;
            let p = rust_path(&path.value);
            let args = args.iter().map(|a| {
                let name = &a.name.value;
                let value = arg(rt, &a.value.value);
                quote!((#name, #value))
            });
            // Spanned at the path: something that is not an action is reported there.
            let node =
                quote_spanned!(path.span.to_proc_macro()=> #rt::ActionNode::<#state, #p>::new);
            quote!(#node(#rt::Args(&[#(#args),*])))
        }
        NodeKind::Ask(ask) => {
            let state = &cx.state;
            let payload = &ask.payload.value;
            let action = rust_path(&ask.action.value);
            let (name, payload_text, resume_text) = (
                &ask.name.value,
                super::type_text(payload),
                super::type_text(&ask.resume.value),
            );
            let krate = &cx.krate;
            let node =
                quote_spanned!(ask.action.span.to_proc_macro()=> #rt::Ask::<#state, #action>::new);
            // Spanned at the type: a payload that is not built from the state is reported there.
            let build = quote_spanned!(ask.payload.span.to_proc_macro()=>
                #krate::__private::interrupt_payload::<#state, #payload>);
            quote!(#node(
                #krate::interrupt::InterruptSpec { name: #name, payload: #payload_text, resume: #resume_text },
                #build,
            ))
        }
        NodeKind::Subtree(name) => {
            let text = &name.value;
            let inner = match node.children.first() {
                // A behaviour's own root, wrapped by `subtree()` above.
                Some(root) => node_expr(cx, root),
                None => match cx.behaviors.get(name.value.as_str()) {
                    Some(b) => node_expr(cx, &b.root),
                    None => quote!(()),
                },
            };
            quote!(#rt::Subtree::new(#text, #inner))
        }
    }
}

/// One `const` item per argument of each action leaf of `root`, plus one per leaf for its
/// required parameters: each evaluates a check of the action's parameter type (`bt::Params`)
/// and panics with its message, so a misspelt argument, a value of the wrong type or a missing
/// argument fails the build at the argument (macros), or names the `.agent` file's line (files).
/// Subtrees are checked where their behaviour is defined, once.
pub fn arg_checks(root: &NodeDef, krate: &TokenStream) -> TokenStream {
    let rt = quote!(#krate::bt);
    let private = quote!(#krate::__private);
    let mut out = TokenStream::new();
    // An explicit stack: trees are as deep as the nesting limit allows.
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        stack.extend(node.children.iter().rev());
        let NodeKind::Action { path, args } = &node.kind else {
            continue;
        };
        let p = rust_path(&path.value);
        let action = path_name(&path.value);
        let path_span = path.span.to_proc_macro();
        // Read once, at the action: parameters without `Params` are one error.
        let shape = local("shape");
        let read = quote_spanned!(path_span=> #private::params_shape::<<#p as #private::ParamsOf>::Params>());
        let fail = |span: proc_macro2::Span, check: TokenStream| {
            let message = proc_macro2::Ident::new(
                "message",
                proc_macro2::Span::mixed_site().located_at(span),
            );
            quote_spanned! {span=>
                if let ::core::option::Option::Some(#message) = #check.message() {
                    ::core::panic!("{}", #message)
                }
            }
        };
        let arg_checks = args.iter().map(|a| {
            let span = a.name.span.to_proc_macro();
            let (at, name) = (file_location(a.name.span), &a.name.value);
            let value = arg(&rt, &a.value.value);
            fail(
                span,
                quote_spanned!(span=> #private::check_arg(#shape, #at, #action, #name, &#value)),
            )
        });
        let names = args.iter().map(|a| &a.name.value);
        let at = file_location(path.span);
        let required = fail(
            path_span,
            quote_spanned!(path_span=> #private::check_required(#shape, #at, #action, &[#(#names),*])),
        );
        // One item per leaf: its first mistake fails it, at that argument (or the action).
        out.extend(quote! {
            const _: () = {
                let #shape = #read;
                #(#arg_checks)*
                #required
            };
        });
    }
    out
}

/// The progress type of `node` (what `Node::State` is for its expression).
fn nodes_type(cx: &Cx<'_>, node: &NodeDef) -> TokenStream {
    let rt = &cx.rt;
    // `Join<L, R>`'s progress is the pair of its halves'.
    let slots = || {
        grouped(
            node.children
                .iter()
                .map(|c| {
                    let t = nodes_type(cx, c);
                    quote!(#rt::Slot<#t>)
                })
                .collect(),
            &quote!(),
        )
    };
    let child = || {
        node.children
            .first()
            .map_or_else(|| quote!(()), |c| nodes_type(cx, c))
    };
    match &node.kind {
        NodeKind::Sequence
        | NodeKind::ReactiveSequence
        | NodeKind::Selector
        | NodeKind::ReactiveSelector => {
            let s = slots();
            quote!(#rt::CompositeState<#s>)
        }
        NodeKind::Parallel { .. } => {
            let s = slots();
            quote!(#rt::ParallelState<#s>)
        }
        NodeKind::Invert | NodeKind::ForceSuccess | NodeKind::ForceFailure => child(),
        NodeKind::RunOnce => {
            let c = child();
            quote!(#rt::RunOnceState<#c>)
        }
        NodeKind::Repeat(_) | NodeKind::Retry(_) => {
            let c = child();
            quote!(#rt::CountState<#c>)
        }
        NodeKind::Timeout(_) | NodeKind::Delay(_) => {
            let c = child();
            quote!(#rt::TimerState<#c>)
        }
        NodeKind::Wait(_) => quote!(#rt::WaitState),
        NodeKind::Condition(_) => quote!(()),
        NodeKind::Action { .. } => quote!(#rt::ActionState),
        NodeKind::Ask(_) => quote!(#rt::AskState),
        NodeKind::Subtree(name) => match node.children.first() {
            Some(root) => nodes_type(cx, root),
            None => match cx.behaviors.get(name.value.as_str()) {
                Some(b) => nodes_type(cx, &b.root),
                None => quote!(()),
            },
        },
    }
}

fn path_name(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

fn arg(rt: &TokenStream, literal: &Literal) -> TokenStream {
    match literal {
        Literal::Str(s) => quote!(#rt::Arg::Str(#s)),
        Literal::Int(n) => quote!(#rt::Arg::Int(#n)),
        Literal::Float(x) => quote!(#rt::Arg::Float(#x)),
        Literal::Bool(b) => quote!(#rt::Arg::Bool(#b)),
        Literal::None => quote!(#rt::Arg::None),
        Literal::List(items) => {
            let items = items.iter().map(|i| arg(rt, &i.value));
            quote!(#rt::Arg::List(&[#(#items),*]))
        }
    }
}
