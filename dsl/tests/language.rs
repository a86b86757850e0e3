//! The example of LANGUAGE.md (`tests/valid/language.agent`, copied verbatim) is accepted, and
//! `fmt` keeps its meaning: the formatted file lowers to the same model.

use agent_dsl::build::check_source;
use agent_dsl::model::FileId;
use agent_dsl::syntax::{self, format::format};

const LANGUAGE: &str = include_str!("valid/language.agent");

#[test]
fn the_language_example_is_accepted() {
    let result = check_source(FileId(0), LANGUAGE);
    // Until the AI model lands, `strategy react` is the one part a file cannot compile yet;
    // everything else (FSM, trees, routes, state, a Direct agent) must check cleanly.
    let (agents, behaviors) = match result {
        Ok((def, warnings)) => {
            assert!(warnings.is_empty(), "{warnings:?}");
            (def.agents.len(), def.behaviors.len())
        }
        Err(diagnostics) => {
            for d in &diagnostics {
                assert_eq!(d.code.id, "E0004", "{d:?}");
                assert!(d.message.contains("strategy react"), "{d:?}");
            }
            let (def, _) = syntax::parse_partial(FileId(0), LANGUAGE).unwrap();
            (def.agents.len(), def.behaviors.len())
        }
    };
    assert_eq!((agents, behaviors), (4, 2));
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
