//! The language's reference example (`tests/valid/language.agent`) is accepted, and
//! `fmt` keeps its meaning: the formatted file lowers to the same model.

use agent_dsl::build::check_source;
use agent_dsl::model::FileId;
use agent_dsl::syntax::{self, format::format};

const LANGUAGE: &str = include_str!("valid/language.agent");

#[test]
fn the_language_example_is_accepted() {
    let (def, warnings) = check_source(FileId(0), LANGUAGE).unwrap_or_else(|d| panic!("{d:#?}"));
    assert!(warnings.is_empty(), "{warnings:?}");
    let agents: Vec<&str> = def.agents.iter().map(|a| a.name.value.as_str()).collect();
    assert_eq!(agents, ["Order", "Sentry", "Clerk", "Helpdesk"]);
    let behaviors: Vec<&str> = def
        .behaviors
        .iter()
        .map(|b| b.name.value.as_str())
        .collect();
    assert_eq!(behaviors, ["Patrol", "Report"]);
}

#[test]
fn formatting_keeps_the_meaning_and_every_comment() {
    let formatted = format(FileId(0), LANGUAGE).unwrap();
    assert_eq!(
        format(FileId(0), &formatted).unwrap(),
        formatted,
        "idempotent"
    );
    let (before, _) = syntax::parse_partial(FileId(0), LANGUAGE).unwrap();
    let (after, _) = syntax::parse_partial(FileId(0), &formatted).unwrap();
    assert_eq!(before, after);
    let comments = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.find("//").map(|i| l[i..].to_string()))
            .collect()
    };
    assert_eq!(comments(LANGUAGE), comments(&formatted));
}

#[test]
fn the_example_agents_are_in_canonical_layout() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/order-service/agents");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            format(FileId(0), &text).unwrap(),
            text,
            "`{}` is not formatted: run `agentc fmt` on it",
            path.display()
        );
        seen += 1;
    }
    assert_eq!(seen, 4);
}

/// A row inside a parallel region may raise an interrupt (once refused as E0325, now retired).
#[test]
fn an_interrupt_asked_inside_a_parallel_region_is_accepted() {
    let source = r#"
agent Review {
    strategy fsm {
        initial Off
        interrupt approval(Request) -> Decision
        Off -> Running on start
        parallel Running {
            state Left {
                initial A
                A on ping ask approval
                A -> Done on approval
                Done -> A on again
            }
            state Right {
                initial B
                B -> C on pong
                C -> B on pong
            }
        }
    }
}
"#;
    let (def, warnings) = check_source(FileId(0), source).unwrap_or_else(|d| panic!("{d:#?}"));
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(def.agents.len(), 1);
}
