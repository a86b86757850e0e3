//! Diagrams of behaviour trees: Graphviz DOT, Mermaid flowcharts and indented text.
//!
//! Each takes a tree from the model (either front-end, checked or not) and the behaviours its
//! `subtree` leaves may name; a subtree whose behaviour is known is drawn expanded under it
//! (once per path, so a cycle the checker would reject still draws). Nodes are labelled in the
//! language's own syntax (`timeout(2s)`, `action move_to(speed = 2)`) and appear in order, so the
//! output is stable.
//!
//! ```
//! # use agent_dsl::graph::tree;
//! let def = agent_dsl::tokens::bt(quote::quote!(
//!     reactive_sequence { condition battery_ok  timeout(2s) { action move_to(speed = 2) } }
//! )).unwrap();
//! let root = def.root.as_ref().unwrap();
//! assert_eq!(
//!     tree::text(root),
//!     "reactive_sequence\n  condition battery_ok\n  timeout(2s)\n    action move_to(speed = 2)\n"
//! );
//! assert!(tree::dot("Patrol", root, &def.behaviors).contains("n0 -> n2;"));
//! assert!(tree::mermaid(root, &def.behaviors).starts_with("flowchart TD\n"));
//! ```

use std::fmt::Write;

use std::collections::HashMap;

use crate::model::{BehaviorDef, DurationMs, Literal, NodeDef, NodeKind, behaviors_by_name};

/// The tree as a Graphviz `digraph` named `name`, top to bottom.
///
/// Sequences are boxes, selectors hexagons, parallels parallelograms (each also marked `→`, `?`
/// or `⇉`, as in Groot), decorators rounded boxes, actions bold boxes, conditions ellipses,
/// `wait` and `subtree` dashed boxes.
pub fn dot(name: &str, root: &NodeDef, behaviors: &[BehaviorDef]) -> String {
    dot_in(name, root, &behaviors_by_name(behaviors))
}

/// [`dot`] with the behaviours already indexed by name.
pub(crate) fn dot_in(
    name: &str,
    root: &NodeDef,
    behaviors: &HashMap<&str, &BehaviorDef>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph {} {{", quote(name));
    out.push_str("    rankdir=TB;\n");
    out.push_str("    node [fontname=\"Helvetica\"];\n");
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    flatten(
        root,
        behaviors,
        None,
        &mut Vec::new(),
        &mut nodes,
        &mut edges,
    );
    for (id, node) in nodes.iter().enumerate() {
        let shape = match shape_of(&node.kind) {
            Shape::Sequence => "shape=box",
            Shape::Selector => "shape=hexagon",
            Shape::Parallel => "shape=parallelogram",
            Shape::Decorator => "shape=box, style=rounded",
            Shape::Action => "shape=box, style=bold",
            Shape::Condition => "shape=ellipse",
            Shape::Other => "shape=box, style=dashed",
        };
        let text = format!("{}{}", marker(&node.kind), label(node));
        let _ = writeln!(out, "    n{id} [label={}, {shape}];", quote(&text));
    }
    for (from, to) in edges {
        let _ = writeln!(out, "    n{from} -> n{to};");
    }
    out.push_str("}\n");
    out
}

/// The tree as a Mermaid `flowchart TD`: sequences as rectangles, selectors as hexagons,
/// parallels as parallelograms, decorators rounded, conditions as stadiums, `wait`/`subtree` as
/// subroutines; composites are also marked as in Groot (`→`, `?`, `⇉`).
pub fn mermaid(root: &NodeDef, behaviors: &[BehaviorDef]) -> String {
    mermaid_in(root, &behaviors_by_name(behaviors))
}

/// [`mermaid`] with the behaviours already indexed by name.
pub(crate) fn mermaid_in(root: &NodeDef, behaviors: &HashMap<&str, &BehaviorDef>) -> String {
    let mut out = String::from("flowchart TD\n");
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    flatten(
        root,
        behaviors,
        None,
        &mut Vec::new(),
        &mut nodes,
        &mut edges,
    );
    for (id, node) in nodes.iter().enumerate() {
        let text = format!("{}{}", marker(&node.kind), label(node)).replace('"', "#quot;");
        let (open, close) = match shape_of(&node.kind) {
            Shape::Sequence | Shape::Action => ("[\"", "\"]"),
            Shape::Selector => ("{{\"", "\"}}"),
            Shape::Parallel => ("[/\"", "\"/]"),
            Shape::Decorator => ("(\"", "\")"),
            Shape::Condition => ("([\"", "\"])"),
            Shape::Other => ("[[\"", "\"]]"),
        };
        let _ = writeln!(out, "    n{id}{open}{text}{close}");
    }
    for (from, to) in edges {
        let _ = writeln!(out, "    n{from} --> n{to}");
    }
    out
}

/// The tree as indented text, two spaces per level, one node per line.
pub fn text(root: &NodeDef) -> String {
    let mut out = String::new();
    fn go(node: &NodeDef, depth: usize, out: &mut String) {
        let _ = writeln!(out, "{:indent$}{}", "", label(node), indent = depth * 2);
        for child in &node.children {
            go(child, depth + 1, out);
        }
    }
    go(root, 0, &mut out);
    out
}

/// A node in the language's syntax, without its children.
pub fn label(node: &NodeDef) -> String {
    let ms = |d: &DurationMs| duration(d.0);
    match &node.kind {
        NodeKind::Parallel { success, failure } => match failure {
            Some(f) => format!(
                "parallel(success = {}, failure = {})",
                success.value, f.value
            ),
            None => format!("parallel(success = {})", success.value),
        },
        NodeKind::Repeat(n) => format!("repeat({})", n.value),
        NodeKind::Retry(n) => format!("retry({})", n.value),
        NodeKind::Timeout(d) => format!("timeout({})", ms(&d.value)),
        NodeKind::Delay(d) => format!("delay({})", ms(&d.value)),
        NodeKind::Wait(d) => format!("wait({})", ms(&d.value)),
        NodeKind::Action { path, args } => {
            let mut text = format!("action {}", path_text(&path.value));
            if !args.is_empty() {
                let args: Vec<String> = args
                    .iter()
                    .map(|a| format!("{} = {}", a.name.value, literal(&a.value.value)))
                    .collect();
                let _ = write!(text, "({})", args.join(", "));
            }
            text
        }
        NodeKind::Condition(path) => format!("condition {}", path_text(&path.value)),
        NodeKind::Subtree(name) => format!("subtree {}", name.value),
        NodeKind::Ask(ask) => format!(
            "ask {}({}) -> {} do {}",
            ask.name.value,
            crate::emit::type_text(&ask.payload.value),
            crate::emit::type_text(&ask.resume.value),
            path_text(&ask.action.value)
        ),
        other => other.keyword().to_string(),
    }
}

enum Shape {
    Sequence,
    Selector,
    Parallel,
    Decorator,
    Action,
    Condition,
    Other,
}

fn shape_of(kind: &NodeKind) -> Shape {
    match kind {
        NodeKind::Action { .. } | NodeKind::Ask(_) => Shape::Action,
        NodeKind::Condition(_) => Shape::Condition,
        NodeKind::Wait(_) | NodeKind::Subtree(_) => Shape::Other,
        NodeKind::Selector | NodeKind::ReactiveSelector => Shape::Selector,
        NodeKind::Parallel { .. } => Shape::Parallel,
        k if k.arity() == Some(1) => Shape::Decorator,
        _ => Shape::Sequence,
    }
}

/// Groot's marks for composites, so the kind shows even where shapes do not.
fn marker(kind: &NodeKind) -> &'static str {
    match kind {
        NodeKind::Sequence | NodeKind::ReactiveSequence => "→ ",
        NodeKind::Selector | NodeKind::ReactiveSelector => "? ",
        NodeKind::Parallel { .. } => "⇉ ",
        _ => "",
    }
}

/// Numbers nodes in depth-first order, expanding known subtrees (not re-entering one already
/// on the path).
fn flatten<'a>(
    node: &'a NodeDef,
    behaviors: &HashMap<&'a str, &'a BehaviorDef>,
    parent: Option<usize>,
    path: &mut Vec<&'a str>,
    nodes: &mut Vec<&'a NodeDef>,
    edges: &mut Vec<(usize, usize)>,
) {
    let id = nodes.len();
    nodes.push(node);
    if let Some(parent) = parent {
        edges.push((parent, id));
    }
    for child in &node.children {
        flatten(child, behaviors, Some(id), path, nodes, edges);
    }
    if let NodeKind::Subtree(name) = &node.kind
        && node.children.is_empty()
        && !path.contains(&name.value.as_str())
        && let Some(behavior) = behaviors.get(name.value.as_str())
    {
        path.push(&behavior.name.value);
        flatten(&behavior.root, behaviors, Some(id), path, nodes, edges);
        path.pop();
    }
}

fn duration(ms: u64) -> String {
    match ms {
        0 => "0ms".into(),
        _ if ms.is_multiple_of(3_600_000) => format!("{}h", ms / 3_600_000),
        _ if ms.is_multiple_of(60_000) => format!("{}m", ms / 60_000),
        _ if ms.is_multiple_of(1_000) => format!("{}s", ms / 1_000),
        _ => format!("{ms}ms"),
    }
}

fn literal(lit: &Literal) -> String {
    match lit {
        Literal::Str(s) => format!("{s:?}"),
        Literal::Int(n) => n.to_string(),
        Literal::Float(x) => format!("{x:?}"),
        Literal::Bool(b) => b.to_string(),
        Literal::None => "none".into(),
        Literal::List(items) => {
            let items: Vec<String> = items.iter().map(|i| literal(&i.value)).collect();
            format!("[{}]", items.join(", "))
        }
    }
}

fn path_text(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(tokens: proc_macro2::TokenStream) -> crate::model::BtDef {
        crate::tokens::bt(tokens).unwrap()
    }

    #[test]
    fn dot_draws_every_node_with_its_shape_and_expands_subtrees() {
        let def = parse(quote::quote! {
            selector {
                condition idle
                parallel(success = 2, failure = 1) { action scan(side = "left", fast = true)  wait(500ms) }
                subtree Report
            }
            behavior Report { retry(3) { action report } }
        });
        let dot = dot("Sentry", def.root.as_ref().unwrap(), &def.behaviors);
        assert_eq!(
            dot,
            "digraph \"Sentry\" {\n    rankdir=TB;\n    node [fontname=\"Helvetica\"];\n    \
             n0 [label=\"? selector\", shape=hexagon];\n    \
             n1 [label=\"condition idle\", shape=ellipse];\n    \
             n2 [label=\"⇉ parallel(success = 2, failure = 1)\", shape=parallelogram];\n    \
             n3 [label=\"action scan(side = \\\"left\\\", fast = true)\", shape=box, style=bold];\n    \
             n4 [label=\"wait(500ms)\", shape=box, style=dashed];\n    \
             n5 [label=\"subtree Report\", shape=box, style=dashed];\n    \
             n6 [label=\"retry(3)\", shape=box, style=rounded];\n    \
             n7 [label=\"action report\", shape=box, style=bold];\n    \
             n0 -> n1;\n    n0 -> n2;\n    n2 -> n3;\n    n2 -> n4;\n    n0 -> n5;\n    n5 -> n6;\n    n6 -> n7;\n}\n"
        );
    }

    #[test]
    fn composites_differ_in_shape_and_mark() {
        let def = parse(quote::quote! {
            sequence {
                selector { condition a  reactive_selector { condition b } }
                parallel(success = 1) { reactive_sequence { condition c } }
            }
        });
        let chart = mermaid(def.root.as_ref().unwrap(), &[]);
        for shape in [
            "n0[\"→ sequence\"]",
            "n1{{\"? selector\"}}",
            "n3{{\"? reactive_selector\"}}",
            "n5[/\"⇉ parallel(success = 1)\"/]",
            "n6[\"→ reactive_sequence\"]",
        ] {
            assert!(chart.contains(shape), "{shape} in\n{chart}");
        }
    }

    #[test]
    fn mermaid_escapes_quotes_and_survives_cycles() {
        let def = parse(quote::quote! {
            behavior A { sequence { action say(text = "hi") subtree B } }
            behavior B { invert { subtree A } }
        });
        let a = &def.behaviors[0].root;
        assert_eq!(
            mermaid(a, &def.behaviors),
            "flowchart TD\n    n0[\"→ sequence\"]\n    n1[\"action say(text = #quot;hi#quot;)\"]\n    \
             n2[[\"subtree B\"]]\n    n3(\"invert\")\n    n4[[\"subtree A\"]]\n    \
             n5[\"→ sequence\"]\n    n6[\"action say(text = #quot;hi#quot;)\"]\n    n7[[\"subtree B\"]]\n    \
             n0 --> n1\n    n0 --> n2\n    n2 --> n3\n    n3 --> n4\n    n4 --> n5\n    n5 --> n6\n    n5 --> n7\n"
        );
    }
}
