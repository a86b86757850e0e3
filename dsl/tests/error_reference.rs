//! The error reference (`dsl/docs/errors.md`, printed by `agentc explain`): each `.agent`
//! example reports the code of the section it illustrates. (The Rust examples are `compile_fail`
//! doc tests of the `stratagem` guide.)

use agent_dsl::build::check_source;
use agent_dsl::check::explain::{REFERENCE, explain};
use agent_dsl::model::FileId;

#[test]
fn each_agent_example_reports_its_code() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for section in REFERENCE.split("\n## ").skip(1) {
        let code = &section[..5];
        assert_eq!(explain(code).map(|s| &s[3..]), Some(section.trim_end()));
        let mut rest = section;
        while let Some(start) = rest.find("```agent\n") {
            let body = &rest[start + 9..];
            let end = body.find("```\n").expect("an unterminated example");
            let example = &body[..end];
            let diagnostics = match check_source(FileId(0), example) {
                Ok((_, warnings)) => warnings,
                Err(diagnostics) => diagnostics,
            };
            if !diagnostics.iter().any(|d| d.code.id == code) {
                let reported: Vec<_> = diagnostics
                    .iter()
                    .map(|d| (d.code.id, &d.message))
                    .collect();
                wrong.push(format!(
                    "the example of {code} reports {reported:?}:\n{example}"
                ));
            }
            checked += 1;
            rest = &body[end..];
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked >= 35, "only {checked} examples");
}

/// The guide's AI chapter lists every search option the checker knows.
#[test]
fn the_guide_lists_every_search_option() {
    let guide = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/ai.md"),
    )
    .unwrap();
    for option in agent_dsl::model::REASONING_OPTIONS {
        assert!(
            guide.contains(&format!("| `{}` |", option.name)),
            "`{}` is missing from docs/ai.md",
            option.name
        );
    }
}
