//! The definition fingerprint of an agent and its migrations: `const DEFINITION` of
//! `impl AgentSpec`.
//!
//! The fingerprint hashes a canonical text of what checkpoints depend on: the agent's name, its
//! strategy and that strategy's checkpoint version, the state struct's fields and their types
//! (sorted: serde reads them by name), an FSM's states and interrupts (sorted: they are stored
//! by name), and an inline tree's nodes in depth-first order (stored by position). Nothing
//! else (routes, actions, guards, rows) changes it, so editing behaviour never strands a
//! checkpoint. The hash is FNV-1a; the runtime only compares fingerprints, never computes one.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{
    AgentDef, Chart, FsmDef, Literal, NodeDef, NodeKind, Spanned, StrategyDef, TreeRef,
};

/// The checkpoint versions of the strategies; the runtime's `definition::strategy_version`
/// holds the same numbers.
const FSM_VERSION: u32 = 1;
const TREE_VERSION: u32 = 1;
const AI_VERSION: u32 = 1;
const DIRECT_VERSION: u32 = 1;
const CUSTOM_VERSION: u32 = 1;

/// The canonical text the fingerprint hashes, one line per item.
pub fn shape(def: &AgentDef) -> String {
    let text = super::type_text;
    let mut lines = vec![format!("agent {}", def.name.value)];
    let strategy = match def.strategy.get() {
        None | Some(StrategyDef::Direct) => format!("strategy Direct {DIRECT_VERSION}"),
        Some(StrategyDef::Custom(path)) => {
            let path = &path.value;
            format!(
                "strategy custom({}) {CUSTOM_VERSION}",
                quote!(#path).to_string().replace(' ', "")
            )
        }
        Some(StrategyDef::Fsm(_)) => format!("strategy Fsm {FSM_VERSION}"),
        Some(StrategyDef::BehaviorTree(_)) => format!("strategy BehaviorTree {TREE_VERSION}"),
        Some(StrategyDef::Ai(ai)) => format!("strategy {} {AI_VERSION}", ai.kind.keyword()),
    };
    lines.push(strategy);
    let mut fields: Vec<String> = def
        .schema
        .iter()
        .map(|(name, ty)| format!("field {}: {}", name.value, text(&ty.value)))
        .collect();
    fields.sort();
    lines.extend(fields);
    match def.strategy.get() {
        Some(StrategyDef::Fsm(fsm)) => {
            lines.extend(states(fsm));
            // A parked agent's interrupt is answered with the declared resume type.
            let mut interrupts: Vec<String> = fsm
                .interrupts
                .iter()
                .map(|i| {
                    format!(
                        "interrupt {} {} -> {}",
                        i.name.value,
                        text(&i.payload.value),
                        text(&i.resume.value)
                    )
                })
                .collect();
            interrupts.sort();
            interrupts.dedup();
            lines.extend(interrupts);
        }
        Some(StrategyDef::BehaviorTree(tree)) => match &tree.tree {
            Some(TreeRef::Inline(root)) => lines.extend(nodes(root)),
            Some(TreeRef::Behavior(name)) => lines.push(format!("tree {}", name.value)),
            Some(TreeRef::Rust(path)) => {
                let path = &path.value;
                lines.push(format!(
                    "tree {}",
                    quote!(#path).to_string().replace(' ', "")
                ));
            }
            None => {}
        },
        _ => {}
    }
    lines.join("\n")
}

/// `state <Name>` for every state, sorted (checkpoints name them); in a statechart also where it
/// is declared and what it is (`state Dialing in Call`, `state Call compound`, `state On
/// parallel`), since a checkpoint's configuration (active leaves, one per region; history;
/// timers of ancestors) is only valid in the hierarchy it was taken in. A flat machine's lines
/// carry no suffix.
fn states(fsm: &FsmDef) -> Vec<String> {
    let mut lines: Vec<String> = if fsm.is_nested() {
        let chart = Chart::new(fsm);
        chart
            .states
            .iter()
            .enumerate()
            .map(|(id, name)| {
                let mut line = format!("state {}", name.value);
                if let Some(parent) = chart.parent[id] {
                    line.push_str(&format!(" in {}", chart.states[parent].value));
                }
                if chart.parallel[id] {
                    line.push_str(" parallel");
                } else if chart.compound[id] {
                    line.push_str(" compound");
                }
                line
            })
            .collect()
    } else {
        fsm.states()
            .iter()
            .map(|s| format!("state {}", s.value))
            .collect()
    };
    lines.sort();
    lines
}

/// `node <depth> <kind>` for every node, depth first, without recursion (trees are bounded by
/// the nesting limit, but a stack costs nothing).
fn nodes(root: &NodeDef) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(root, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        let kind = format!("{:?}", node.kind);
        let kind = kind
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .next()
            .unwrap_or_default();
        match &node.kind {
            // A parked leaf is answered with the type it was parked with.
            NodeKind::Ask(ask) => out.push(format!(
                "node {depth} {kind} {} {} -> {}",
                ask.name.value,
                super::type_text(&ask.payload.value),
                super::type_text(&ask.resume.value)
            )),
            _ => out.push(format!("node {depth} {kind}")),
        }
        stack.extend(node.children.iter().rev().map(|c| (c, depth + 1)));
    }
    out
}

/// FNV-1a, 64 bits, as 16 hexadecimal digits: stable across machines and Rust versions, so a
/// checkpoint's fingerprint means the same to every later build.
pub fn fingerprint(shape: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in shape.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// `const DEFINITION` for `impl AgentSpec`: the fingerprint, the declared migrations, and a
/// migration without changes from each of `accepted` (older fingerprints whose checkpoints
/// still fit, which a build's lock file records).
pub fn definition(def: &AgentDef, krate: &TokenStream, accepted: &[String]) -> TokenStream {
    let fingerprint = fingerprint(&shape(def));
    let rt = quote!(#krate::definition);
    let declared = def.migrations.iter().map(|m| {
        let from = &m.from.value;
        let states = m.states.iter().map(|r| {
            let (old, new) = (&r.old.value, &r.new.value);
            quote!((#old, #new))
        });
        let fields = m.fields.iter().map(|r| {
            let (old, new) = (&r.old.value, &r.new.value);
            quote!((#old, #new))
        });
        let defaults = m.defaults.iter().map(|(name, value)| {
            let (name, json) = (&name.value, json(value));
            quote!((#name, #json))
        });
        let with = match &m.with {
            Some(path) => {
                let path = crate::emit::rust_names::rust_path(&path.value);
                quote!(::core::option::Option::Some(#path))
            }
            None => quote!(::core::option::Option::None),
        };
        quote! {
            #rt::Migration {
                from: #from,
                states: &[#(#states),*],
                fields: &[#(#fields),*],
                defaults: &[#(#defaults),*],
                with: #with,
            }
        }
    });
    let implicit = accepted
        .iter()
        .filter(|from| !def.migrations.iter().any(|m| &m.from.value == *from))
        .map(|from| {
            quote! {
                #rt::Migration { from: #from, states: &[], fields: &[], defaults: &[], with: ::core::option::Option::None }
            }
        });
    quote! {
        const DEFINITION: ::core::option::Option<&'static #rt::Definition> =
            ::core::option::Option::Some(&#rt::Definition {
                fingerprint: #fingerprint,
                migrations: &[#(#declared,)* #(#implicit),*],
            });
    }
}

/// A literal as JSON text. Recursion is bounded: the input's nesting was checked against the
/// limit before parsing.
fn json(value: &Spanned<Literal>) -> String {
    fn value_of(literal: &Literal) -> serde_json::Value {
        match literal {
            Literal::Str(s) => serde_json::Value::String(s.clone()),
            Literal::Int(i) => serde_json::from_str(&i.to_string()).unwrap_or_default(),
            Literal::Float(f) => serde_json::json!(f),
            Literal::Bool(b) => serde_json::Value::Bool(*b),
            Literal::None => serde_json::Value::Null,
            Literal::List(items) => items.iter().map(|i| value_of(&i.value)).collect(),
        }
    }
    value_of(&value.value).to_string()
}

#[cfg(test)]
mod tests {
    use super::fingerprint;

    #[test]
    fn fingerprints_are_fnv_1a() {
        assert_eq!(fingerprint(""), "cbf29ce484222325");
        assert_eq!(fingerprint("a"), "af63dc4c8601ec8c");
    }
}
