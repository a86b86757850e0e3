//! The same agent written as a `.agent` file and with `#[agent]` builds the same model and the
//! same generated code (the state struct aside: a file declares its fields, a macro agent is the
//! user's own struct). `examples/order-service/tests/` checks the file's behaviour end to end.

use agent_dsl::model::{AgentDef, FileId, StateDef};
use agent_dsl::{check, emit, syntax, tokens};
use quote::quote;

const FILE: &str = r#"
agent Order {
    description "Takes an order from cart to delivery"
    state { total: f64 = 0.0 }
    strategy fsm {
        initial Cart
        terminal Delivered
        terminal Cancelled as failure
        enter Paid do send_receipt
        exit Pending do release_hold

        Cart    -> Pending   on checkout do validate_order
        Pending -> Paid      on pay      if paid_in_full do billing::charge
        Pending -> Cancelled on cancel
        Pending -> Cancelled after 30m
        Pending on remind do send_reminder
        Paid    -> Delivered on deliver
        interrupt approval(review::Request) -> Vec<review::Decision>
        Paid on audit_refund do note ask approval
        Paid on approval do apply_decision
    }
    routes {
        "order.checkout"  => checkout
        "order.pay"       => pay priority 10
        "order.*.cancel"  => cancel
        "order.**"        => audit
    }
    actions audit
    tick every 250ms
}
"#;

fn from_file() -> AgentDef {
    let mut file = syntax::parse(FileId(0), FILE).expect("the file parses");
    assert_eq!(file.agents.len(), 1);
    file.agents.remove(0)
}

fn from_macro() -> AgentDef {
    // The blocks are copied from the file unchanged: one language, two hosts.
    let attr = quote! {
        strategy = Fsm,
        description = "Takes an order from cart to delivery",
        transitions {
            initial Cart
            terminal Delivered
            terminal Cancelled as failure
            enter Paid do send_receipt
            exit Pending do release_hold

            Cart    -> Pending   on checkout do validate_order
            Pending -> Paid      on pay      if paid_in_full do billing::charge
            Pending -> Cancelled on cancel
            Pending -> Cancelled after 30m
            Pending on remind do send_reminder
            Paid    -> Delivered on deliver
            interrupt approval(review::Request) -> Vec<review::Decision>
            Paid on audit_refund do note ask approval
            Paid on approval do apply_decision
        },
        routes {
            "order.checkout"  => checkout
            "order.pay"       => pay priority 10
            "order.*.cancel"  => cancel
            "order.**"        => audit
        },
        actions [audit],
        tick = 250ms,
    };
    let item: syn::Item = syn::parse_quote! {
        #[derive(Debug, Clone, Default)]
        struct Order { total: f64 }
    };
    tokens::agent(attr, &item).expect("the macro input parses")
}

#[test]
fn file_and_macro_build_the_same_model() {
    let mut file = from_file();
    let from_macro = from_macro();
    assert!(matches!(&file.state, StateDef::Fields(fields) if fields.len() == 1));
    file.state = StateDef::External;
    assert_eq!(file, from_macro);
}

#[test]
fn file_and_macro_generate_the_same_code() {
    let file = from_file();
    let from_macro = from_macro();
    check::file(std::slice::from_ref(&file), &[]).expect("the file agent checks");
    check::agent(&from_macro).expect("the macro agent checks");
    assert_eq!(
        emit::agent(&file).to_string(),
        emit::agent(&from_macro).to_string()
    );
    // What only the file generates: the state struct and its defaults.
    let state = emit::state_struct(&file).to_string();
    assert!(state.contains("pub struct Order"), "{state}");
    assert!(emit::state_struct(&from_macro).is_empty());
}

const SEARCH_FILE: &str = r#"
agent Chooser {
    strategy adaptive {
        model "capable"
        available_strategies cot, tot, got
        complexity_thresholds 0.25, 0.7
        default_strategy cot
        branching_factor 2
        traversal_strategy best_first
        evaluation_prompt "Score it."
        act_threshold 0.85
        token_budget 5000
    }
}
"#;

fn search_from_macro() -> AgentDef {
    let attr = quote! {
        strategy = Adaptive,
        model = "capable",
        available_strategies = [cot, tot, got],
        complexity_thresholds = (0.25, 0.7),
        default_strategy = cot,
        branching_factor = 2,
        traversal_strategy = best_first,
        evaluation_prompt = "Score it.",
        act_threshold = 0.85,
        token_budget = 5000,
    };
    let item: syn::Item = syn::parse_quote! {
        struct Chooser;
    };
    tokens::agent(attr, &item).expect("the macro input parses")
}

#[test]
fn search_options_build_the_same_model_and_code_in_both_front_ends() {
    let mut file = syntax::parse(FileId(0), SEARCH_FILE).expect("the file parses");
    let mut file = file.agents.remove(0);
    let from_macro = search_from_macro();
    file.state = StateDef::External;
    assert_eq!(file, from_macro);
    check::agent(&file).expect("the file agent checks");
    check::agent(&from_macro).expect("the macro agent checks");
    let code = emit::agent(&from_macro).to_string();
    assert_eq!(emit::agent(&file).to_string(), code);
    for expected in [
        "Traversal :: BestFirst",
        "StrategyKind :: Tot",
        "(0.25f32 , 0.7f32)",
        "Some (5000u64)",
    ] {
        assert!(code.contains(expected), "{expected} in {code}");
    }
}

const PLUGINS_FILE: &str = r#"
agent Helper {
    strategy react { model "fast" }
    plugins {
        Policy { mode monitor, deny_patterns "drop table", "rm -rf" }
        Quota { max_requests 50, window_ms 60000 }
        Retrieval { enrich false }
        custom(audit::Audit) { level "info" }
    }
    default_plugins false
}
"#;

#[test]
fn plugins_build_the_same_model_and_code_in_both_front_ends() {
    let mut file = syntax::parse(FileId(0), PLUGINS_FILE)
        .expect("the file parses")
        .agents
        .remove(0);
    let attr = quote! {
        strategy = React,
        model = "fast",
        plugins = [
            Policy { mode = monitor, deny_patterns = ["drop table", "rm -rf"] },
            Quota { max_requests = 50, window_ms = 60000 },
            Retrieval { enrich = false },
            custom(audit::Audit) { level = "info" },
        ],
        default_plugins = false,
    };
    let item: syn::Item = syn::parse_quote! { struct Helper; };
    let from_macro = tokens::agent(attr, &item).expect("the macro input parses");
    file.state = StateDef::External;
    assert_eq!(file, from_macro);
    check::agent(&from_macro).expect("the plugins check");
    let code = emit::agent(&from_macro).to_string();
    assert_eq!(code, emit::agent(&file).to_string());
    // No default plugins, the declared ones in order, as struct literals.
    assert!(!code.contains("ModelRouting"), "{code}");
    for expected in [
        "mode : :: core :: convert :: From :: from (\"monitor\")",
        "max_requests : 50",
        "enrich : false",
        "audit :: Audit { level : :: core :: convert :: From :: from (\"info\")",
    ] {
        assert!(code.contains(expected), "`{expected}` in {code}");
    }
}

#[test]
fn an_ai_agent_mounts_model_routing_and_policy_first_unless_it_lists_them() {
    let agent = |attr: proc_macro2::TokenStream| {
        let item: syn::Item = syn::parse_quote! { struct Helper; };
        let def = tokens::agent(attr, &item).expect("the macro input parses");
        let mounted: Vec<String> = emit::mounted(&def)
            .iter()
            .map(|m| match m {
                emit::Mounted::Default(name) => format!("{name} (default)"),
                emit::Mounted::Declared(p) => p.name.value.clone(),
            })
            .collect();
        mounted
    };
    assert_eq!(
        agent(quote!(strategy = React, plugins = [Quota])),
        ["ModelRouting (default)", "Policy (default)", "Quota"]
    );
    assert_eq!(
        agent(quote!(strategy = React, plugins = [Quota, Policy { mode = monitor }])),
        ["ModelRouting (default)", "Quota", "Policy"]
    );
    assert!(agent(quote!(strategy = Direct, plugins = [])).is_empty());
    assert!(agent(quote!(strategy = React, default_plugins = false)).is_empty());
}

/// A statechart's body, written once for both hosts.
macro_rules! player_machine {
    ($($body:tt)*) => {
        const PLAYER_BODY: &str = stringify!($($body)*);
        fn player_from_macro() -> AgentDef {
            let attr = quote! { strategy = Fsm, transitions { $($body)* } };
            let item: syn::Item = syn::parse_quote! { struct Player; };
            tokens::agent(attr, &item).expect("the macro input parses")
        }
    };
}

player_machine! {
    initial Off
    terminal Broken as failure
    enter On do power_up
    Off -> On on power
    Off -> Resume on resume
    state On {
        initial Stopped
        history deep Resume
        history Last -> Active
        On -> Off on power
        On -> Broken on smash
        On -> Off after 30m
        On -> local Stopped on reset
        Stopped -> Active on play
        state Active {
            initial Playing
            Playing -> Paused on pause
            Playing on tick do count
            Paused -> Playing on play if ready
            Active -> Last on again
        }
    }
}

#[test]
fn statecharts_build_the_same_model_and_code_in_both_front_ends() {
    let text = format!("agent Player {{ strategy fsm {{ {PLAYER_BODY} }} }}");
    let mut file = syntax::parse(FileId(0), &text).expect("the file parses");
    let mut file = file.agents.remove(0);
    file.state = StateDef::External;
    let from_macro = player_from_macro();
    assert_eq!(file, from_macro);
    let agent_dsl::model::StrategyDef::Fsm(fsm) = from_macro.strategy.get().unwrap() else {
        panic!("not an FSM")
    };
    assert_eq!(fsm.compounds.len(), 2);
    assert_eq!(fsm.histories.len(), 2);
    assert!(fsm.rows.iter().any(|r| r.local));
    check::agent(&from_macro).expect("the statechart checks");
    let code = emit::agent(&from_macro).to_string();
    assert_eq!(emit::agent(&file).to_string(), code);
    assert!(code.contains("const NESTED : bool = true"), "{code}");
}

#[test]
fn a_statechart_file_formats_to_itself_and_keeps_its_meaning() {
    let text = format!("agent Player {{ strategy fsm {{ {PLAYER_BODY} }} }}");
    let formatted = syntax::format::format(FileId(0), &text).expect("formats");
    assert!(
        formatted.contains("        state On {\n            initial Stopped\n"),
        "{formatted}"
    );
    assert!(
        formatted.contains("                Playing -> Paused on pause\n"),
        "{formatted}"
    );
    assert_eq!(
        syntax::format::format(FileId(0), &formatted).unwrap(),
        formatted
    );
    let before = syntax::parse(FileId(0), &text).unwrap().agents;
    let after = syntax::parse(FileId(0), &formatted).unwrap().agents;
    assert_eq!(before, after);
}

/// A statechart with parallel regions and completion, written once for both hosts.
macro_rules! washer_machine {
    ($($body:tt)*) => {
        const WASHER_BODY: &str = stringify!($($body)*);
        fn washer_from_macro() -> AgentDef {
            let attr = quote! { strategy = Fsm, transitions { $($body)* } };
            let item: syn::Item = syn::parse_quote! { struct Washer; };
            tokens::agent(attr, &item).expect("the macro input parses")
        }
    };
}

washer_machine! {
    initial Idle
    Idle -> Running on start
    Idle -> Back on resume
    parallel Running {
        history deep Back
        Running -> Idle on stop
        state Wash {
            initial Filling
            Filling -> Rinsed on next
            final Rinsed
        }
        state Dry {
            initial Cold
            Cold -> Dried on next if warm do heat
            final Dried
        }
    }
    Running -> Idle when done do report
}

#[test]
fn parallel_regions_build_the_same_model_and_code_in_both_front_ends() {
    let text = format!("agent Washer {{ strategy fsm {{ {WASHER_BODY} }} }}");
    let mut file = syntax::parse(FileId(0), &text).expect("the file parses");
    let mut file = file.agents.remove(0);
    file.state = StateDef::External;
    let from_macro = washer_from_macro();
    assert_eq!(file, from_macro);
    let agent_dsl::model::StrategyDef::Fsm(fsm) = from_macro.strategy.get().unwrap() else {
        panic!("not an FSM")
    };
    assert_eq!(fsm.compounds.iter().filter(|c| c.parallel).count(), 1);
    assert_eq!(fsm.finals.len(), 2);
    assert!(fsm.rows.iter().any(|r| r.is_done()));
    check::agent(&from_macro).expect("the statechart checks");
    let code = emit::agent(&from_macro).to_string();
    assert_eq!(emit::agent(&file).to_string(), code);
    assert!(code.contains("const PARALLEL : bool = true"), "{code}");

    let formatted = syntax::format::format(FileId(0), &text).expect("formats");
    assert!(
        formatted.contains("        parallel Running {\n            history deep Back\n"),
        "{formatted}"
    );
    assert!(
        formatted.contains("                final Rinsed\n"),
        "{formatted}"
    );
    assert!(
        formatted.contains("        Running -> Idle when done do report\n"),
        "{formatted}"
    );
    assert_eq!(
        syntax::format::format(FileId(0), &formatted).unwrap(),
        formatted
    );
    let after = syntax::parse(FileId(0), &formatted).unwrap().agents;
    assert_eq!(after.len(), 1);
}

const ASKING_TREE: &str = r#"
agent Shipment {
    strategy behavior {
        sequence {
            action pack
            parallel(success = 2) {
                ask approval(review::Manifest) -> Verdict do record_approval
                ask customs(review::Manifest) -> Verdict do record_customs
            }
        }
    }
}
"#;

#[test]
fn ask_leaves_build_the_same_model_and_code_in_both_front_ends() {
    let mut file = syntax::parse(FileId(0), ASKING_TREE)
        .expect("the file parses")
        .agents
        .remove(0);
    let attr = quote! {
        strategy = BehaviorTree,
        tree = {
            sequence {
                action pack
                parallel(success = 2) {
                    ask approval(review::Manifest) -> Verdict do record_approval
                    ask customs(review::Manifest) -> Verdict do record_customs
                }
            }
        },
    };
    let item: syn::Item = syn::parse_quote! { struct Shipment; };
    let from_macro = tokens::agent(attr, &item).expect("the macro input parses");
    file.state = StateDef::External;
    assert_eq!(file, from_macro);
    check::agent(&from_macro).expect("the tree checks");
    let code = emit::agent(&from_macro).to_string();
    assert_eq!(emit::agent(&file).to_string(), code);
    for expected in ["bt :: Ask ::", "fn check_answer", "\"review::Manifest\""] {
        assert!(code.contains(expected), "{expected} in {code}");
    }
    // The formatter keeps the leaf on one line, its types compact.
    let formatted = syntax::format::format(FileId(0), ASKING_TREE).unwrap();
    assert!(
        formatted.contains(
            "                ask approval(review::Manifest) -> Verdict do record_approval\n"
        ),
        "{formatted}"
    );
}

#[test]
fn approvals_build_the_same_model_and_code_in_both_front_ends() {
    let text = "agent Refunds { strategy react { tools lookup, refund approve refund } }";
    let mut file = syntax::parse(FileId(0), text)
        .expect("the file parses")
        .agents
        .remove(0);
    let attr = quote! { strategy = React, tools = [lookup, refund], approve = [refund] };
    let item: syn::Item = syn::parse_quote! { struct Refunds; };
    let from_macro = tokens::agent(attr, &item).expect("the macro input parses");
    file.state = StateDef::External;
    assert_eq!(file, from_macro);
    check::agent(&from_macro).expect("the approvals check");
    let code = emit::agent(&from_macro).to_string();
    assert_eq!(emit::agent(&file).to_string(), code);
    assert!(code.contains("approve : & [\"refund\"]"), "{code}");
    let formatted = syntax::format::format(FileId(0), text).unwrap();
    assert!(
        formatted.contains("        approve refund\n"),
        "{formatted}"
    );
}
