//! State diagrams of an FSM model: Graphviz DOT and Mermaid `stateDiagram-v2`.
//!
//! Both take a checked or unchecked [`FsmDef`] (from either front-end) and return the diagram as
//! text; they never fail. States appear in declaration order, rows in declaration order, so the
//! output is stable and can be pinned in tests and docs.
//!
//! ```
//! # use agent_dsl::graph::fsm;
//! # let item: syn::Item = syn::parse_quote!(struct Door;);
//! # let attr = quote::quote!(transitions { initial Closed terminal Gone
//! #     Closed -> Open on open  Open -> Closed on close  Open -> Gone after 1h });
//! # let def = agent_dsl::tokens::agent(attr, &item).unwrap();
//! # let agent_dsl::model::StrategyDef::Fsm(machine) = def.strategy.get().unwrap() else { panic!() };
//! let dot = fsm::dot("Door", machine);
//! assert!(dot.contains("Open -> Gone [label=\"after 1h\"];"));
//! let mermaid = fsm::mermaid(machine);
//! assert!(mermaid.starts_with("stateDiagram-v2\n    [*] --> Closed\n"));
//! ```
//!
//! Labels follow UML: `event [guard] / action`; `enter`/`exit` actions and internal rows
//! (`A on e do f`, which leave no state) are listed in the state, not drawn as edges.

use std::collections::HashMap;
use std::fmt::Write;

use crate::model::{Chart, DurationMs, FsmDef, HookKind, RowDef, TerminalKind, Trigger};

/// The machine as a Graphviz `digraph` named `name` (usually the agent's name).
///
/// The initial state is pointed at by a dot, terminal states are double circles (red for
/// `as failure`), and each edge is labelled `event [guard] / action` or `after 30m`.
pub fn dot(name: &str, fsm: &FsmDef) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph {} {{", quote_id(name));
    out.push_str("    rankdir=LR;\n");
    let chart = fsm.is_nested().then(|| Chart::new(fsm));
    if chart.is_some() {
        // Edges may end at a cluster's border.
        out.push_str("    compound=true;\n");
    }
    out.push_str("    node [shape=box, style=rounded];\n");
    if let Some(initial) = fsm.initial_state() {
        out.push_str("    __start [shape=point];\n");
        let _ = writeln!(
            out,
            "    __start -> {};",
            edge_end(chart.as_ref(), &initial.value, "lhead")
        );
    }
    if let Some(chart) = &chart {
        super::statechart::dot_clusters(fsm, chart, &mut out, quote_id, quote_str, path);
    }
    let lines = state_lines(fsm);
    let mut terminals: HashMap<&str, TerminalKind> = HashMap::new();
    for t in &fsm.terminals {
        terminals.entry(t.state.value.as_str()).or_insert(t.kind);
    }
    for state in fsm.states() {
        if chart
            .as_ref()
            .is_some_and(|c| c.id(&state.value).is_some_and(|id| c.compound[id]))
        {
            // A compound state is a cluster: its hooks are in the cluster's label.
            continue;
        }
        let mut attrs = Vec::new();
        if let Some(hooks) = lines.get(state.value.as_str()) {
            let label = std::iter::once(state.value.clone())
                .chain(hooks.iter().cloned())
                .collect::<Vec<_>>()
                .join("\\n");
            attrs.push(format!("label={}", quote_str(&label)));
        }
        match terminals.get(state.value.as_str()) {
            Some(TerminalKind::Success) => attrs.push("shape=doublecircle".into()),
            Some(TerminalKind::Failure) => {
                attrs.push("shape=doublecircle".into());
                attrs.push("color=red".into());
            }
            None => {}
        }
        if !attrs.is_empty() {
            let _ = writeln!(
                out,
                "    {} [{}];",
                quote_id(&state.value),
                attrs.join(", ")
            );
        }
    }
    for row in fsm.rows.iter().filter(|r| !r.internal) {
        match &chart {
            None => {
                let _ = writeln!(
                    out,
                    "    {} -> {} [label={}];",
                    quote_id(&row.from.value),
                    quote_id(&row.to.value),
                    quote_str(&label(row))
                );
            }
            Some(chart) => {
                let (from, ltail) = super::statechart::endpoint(chart, &row.from.value);
                let (to, lhead) = super::statechart::endpoint(chart, &row.to.value);
                let clip = ltail
                    .map(|c| format!(", ltail={}", quote_id(&c)))
                    .into_iter()
                    .chain(lhead.map(|c| format!(", lhead={}", quote_id(&c))))
                    .collect::<String>();
                let _ = writeln!(
                    out,
                    "    {} -> {} [label={}{clip}];",
                    quote_id(&from),
                    quote_id(&to),
                    quote_str(&label(row))
                );
            }
        }
    }
    out.push_str("}\n");
    out
}

/// An edge's end: the state, or for a compound state its default leaf clipped at its cluster.
fn edge_end(chart: Option<&Chart<'_>>, name: &str, clip: &str) -> String {
    match chart.map(|c| super::statechart::endpoint(c, name)) {
        Some((leaf, Some(cluster))) => {
            format!("{} [{clip}={}]", quote_id(&leaf), quote_id(&cluster))
        }
        _ => quote_id(name),
    }
}

/// The machine as a Mermaid `stateDiagram-v2`.
///
/// `[*] --> Initial` marks the start, `Terminal --> [*]` each end (failures get the class
/// `failure`), `enter`/`exit` actions are state descriptions, and each transition is labelled
/// `event [guard] / action` or `after 30m`.
pub fn mermaid(fsm: &FsmDef) -> String {
    let mut out = String::from("stateDiagram-v2\n");
    if let Some(initial) = fsm.initial_state() {
        let _ = writeln!(out, "    [*] --> {}", initial.value);
    }
    if fsm.is_nested() {
        super::statechart::mermaid_blocks(fsm, &Chart::new(fsm), &mut out);
    }
    for row in fsm.rows.iter().filter(|r| !r.internal) {
        let _ = writeln!(
            out,
            "    {} --> {}: {}",
            row.from.value,
            row.to.value,
            label(row)
        );
    }
    let lines = state_lines(fsm);
    for state in fsm.states() {
        for line in lines.get(state.value.as_str()).into_iter().flatten() {
            let _ = writeln!(out, "    {} : {}", state.value, line);
        }
    }
    let mut failures = Vec::new();
    for terminal in &fsm.terminals {
        let _ = writeln!(out, "    {} --> [*]", terminal.state.value);
        if terminal.kind == TerminalKind::Failure {
            failures.push(terminal.state.value.as_str());
        }
    }
    if !failures.is_empty() {
        out.push_str("    classDef failure fill:#f8d7da,stroke:#c00\n");
        let _ = writeln!(out, "    class {} failure", failures.join(","));
    }
    out
}

/// `event [guard] / action`, or `after 30m [guard] / action`.
pub fn label(row: &RowDef) -> String {
    let mut text = match &row.trigger {
        Trigger::Event(event) => event.value.clone(),
        Trigger::After(delay) => format!("after {}", duration(delay.value)),
        Trigger::Done(_) => "done".to_string(),
    };
    if let Some(guard) = &row.guard {
        let _ = write!(text, " [{}]", path(&guard.value));
    }
    if let Some(action) = &row.action {
        let _ = write!(text, " / {}", path(&action.value));
    }
    text
}

/// A duration in its largest exact unit: `30m`, `1500ms`.
pub fn duration(d: DurationMs) -> String {
    let ms = d.0;
    [(3_600_000, "h"), (60_000, "m"), (1_000, "s")]
        .into_iter()
        .find(|(factor, _)| ms > 0 && ms.is_multiple_of(*factor))
        .map_or_else(
            || format!("{ms}ms"),
            |(factor, unit)| format!("{}{unit}", ms / factor),
        )
}

/// What each state lists: its `enter`, then its `exit` action (the first declared of each),
/// then its internal rows in declaration order. Built in one pass over hooks and rows.
fn state_lines(fsm: &FsmDef) -> HashMap<&str, Vec<String>> {
    let mut lines: HashMap<&str, Vec<String>> = HashMap::new();
    for kind in [HookKind::Enter, HookKind::Exit] {
        let mut seen = std::collections::HashSet::new();
        for hook in fsm.hooks.iter().filter(|h| h.kind.value == kind) {
            if seen.insert(hook.state.value.as_str()) {
                lines
                    .entry(hook.state.value.as_str())
                    .or_default()
                    .push(format!("{} / {}", kind.keyword(), path(&hook.action.value)));
            }
        }
    }
    for row in fsm.rows.iter().filter(|r| r.internal) {
        lines
            .entry(row.from.value.as_str())
            .or_default()
            .push(label(row));
    }
    lines
}

fn path(path: &syn::Path) -> String {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let prefix = if path.leading_colon.is_some() {
        "::"
    } else {
        ""
    };
    format!("{prefix}{}", segments.join("::"))
}

/// A DOT identifier: bare when it is one, quoted otherwise.
fn quote_id(id: &str) -> String {
    let bare = id
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && id.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !matches!(
            id.to_ascii_lowercase().as_str(),
            "node" | "edge" | "graph" | "digraph" | "subgraph" | "strict"
        );
    if bare { id.to_string() } else { quote_str(id) }
}

fn quote_str(text: &str) -> String {
    // `\n` sequences built above are DOT line breaks and stay as they are.
    format!("\"{}\"", text.replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StrategyDef;

    fn order() -> FsmDef {
        let item: syn::Item = syn::parse_quote!(
            struct Order;
        );
        let attr = quote::quote!(transitions {
            initial Cart
            terminal Delivered
            terminal Cancelled as failure
            enter Paid do send_receipt
            exit Pending do release_hold
            Cart    -> Pending   on checkout do validate_order
            Pending -> Paid      on pay      if paid_in_full do billing::charge
            Pending -> Cancelled on cancel
            Pending -> Cancelled after 30m
            Paid    -> Delivered on deliver
        });
        let def = crate::tokens::agent(attr, &item).unwrap();
        match def.strategy.get() {
            Some(StrategyDef::Fsm(fsm)) => fsm.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn dot_of_the_order_machine() {
        assert_eq!(
            dot("Order", &order()),
            r#"digraph Order {
    rankdir=LR;
    node [shape=box, style=rounded];
    __start [shape=point];
    __start -> Cart;
    Delivered [shape=doublecircle];
    Cancelled [shape=doublecircle, color=red];
    Pending [label="Pending\nexit / release_hold"];
    Paid [label="Paid\nenter / send_receipt"];
    Cart -> Pending [label="checkout / validate_order"];
    Pending -> Paid [label="pay [paid_in_full] / billing::charge"];
    Pending -> Cancelled [label="cancel"];
    Pending -> Cancelled [label="after 30m"];
    Paid -> Delivered [label="deliver"];
}
"#
        );
    }

    #[test]
    fn mermaid_of_the_order_machine() {
        assert_eq!(
            mermaid(&order()),
            "stateDiagram-v2
    [*] --> Cart
    Cart --> Pending: checkout / validate_order
    Pending --> Paid: pay [paid_in_full] / billing::charge
    Pending --> Cancelled: cancel
    Pending --> Cancelled: after 30m
    Paid --> Delivered: deliver
    Pending : exit / release_hold
    Paid : enter / send_receipt
    Delivered --> [*]
    Cancelled --> [*]
    classDef failure fill:#f8d7da,stroke:#c00
    class Cancelled failure
"
        );
    }

    fn player() -> FsmDef {
        let item: syn::Item = syn::parse_quote!(
            struct Player;
        );
        let attr = quote::quote!(transitions {
            initial Off
            enter On do power_up
            Off -> On on power
            Off -> Resume on resume
            state On {
                initial Stopped
                history deep Resume
                On -> Off on power
                Stopped -> Active on play
                state Active {
                    initial Playing
                    Playing -> Paused on pause
                    Paused -> Playing on play
                }
            }
        });
        let def = crate::tokens::agent(attr, &item).unwrap();
        match def.strategy.get() {
            Some(StrategyDef::Fsm(fsm)) => fsm.clone(),
            other => panic!("{other:?}"),
        }
    }

    fn washer() -> FsmDef {
        let item: syn::Item = syn::parse_quote!(
            struct Washer;
        );
        let attr = quote::quote!(transitions {
            initial Idle
            Idle -> Running on start
            parallel Running {
                state Wash { initial Filling  Filling -> Rinsed on next  final Rinsed }
                state Dry { initial Cold  Cold -> Dried on next  final Dried }
            }
            Running -> Idle when done
        });
        let def = crate::tokens::agent(attr, &item).unwrap();
        match def.strategy.get() {
            Some(StrategyDef::Fsm(fsm)) => fsm.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn regions_are_separated_and_final_states_marked() {
        assert_eq!(
            mermaid(&washer()),
            "stateDiagram-v2
    [*] --> Idle
    state Running {
        state Wash {
            [*] --> Filling
            Filling
            Rinsed
            Rinsed --> [*]
        }
        --
        state Dry {
            [*] --> Cold
            Cold
            Dried
            Dried --> [*]
        }
    }
    Idle --> Running: start
    Filling --> Rinsed: next
    Cold --> Dried: next
    Running --> Idle: done
"
        );
        let dot = dot("Washer", &washer());
        assert!(
            dot.contains(
                "subgraph cluster_Wash {\n            label=\"Wash\";\n            style=dashed;"
            ),
            "{dot}"
        );
        assert!(dot.contains("Rinsed [shape=doublecircle];"), "{dot}");
        // An edge to a parallel state goes to its first region's default leaf.
        assert!(
            dot.contains("Idle -> Filling [label=\"start\", lhead=cluster_Running];"),
            "{dot}"
        );
    }

    #[test]
    fn mermaid_nests_compound_states() {
        assert_eq!(
            mermaid(&player()),
            "stateDiagram-v2
    [*] --> Off
    state On {
        [*] --> Stopped
        Stopped
        state Active {
            [*] --> Playing
            Playing
            Paused
        }
        state \"H*\" as Resume
    }
    Off --> On: power
    Off --> Resume: resume
    On --> Off: power
    Stopped --> Active: play
    Playing --> Paused: pause
    Paused --> Playing: play
    On : enter / power_up
"
        );
    }

    #[test]
    fn dot_draws_compound_states_as_clusters() {
        assert_eq!(
            dot("Player", &player()),
            r#"digraph Player {
    rankdir=LR;
    compound=true;
    node [shape=box, style=rounded];
    __start [shape=point];
    __start -> Off;
    subgraph cluster_On {
        label="On\nenter / power_up";
        Stopped;
        subgraph cluster_Active {
            label="Active";
            Playing;
            Paused;
        }
        Resume [label="H*", shape=circle];
    }
    Off -> Stopped [label="power", lhead=cluster_On];
    Off -> Resume [label="resume"];
    Stopped -> Off [label="power", ltail=cluster_On];
    Stopped -> Playing [label="play", lhead=cluster_Active];
    Playing -> Paused [label="pause"];
    Paused -> Playing [label="play"];
}
"#
        );
    }

    #[test]
    fn durations_use_their_largest_exact_unit() {
        assert_eq!(duration(DurationMs(1_800_000)), "30m");
        assert_eq!(duration(DurationMs(1_500)), "1500ms");
        assert_eq!(duration(DurationMs(2_000)), "2s");
        assert_eq!(duration(DurationMs(0)), "0ms");
    }
}
