//! The long explanations of the diagnostic codes (`agentc explain E0305`), with an example each.
//! They live in `dsl/docs/errors.md`, which is also the guide's error chapter; a test checks that
//! every code has an entry and that each `.agent` example reports its code.

/// The whole error reference, in Markdown: one `## CODE: title` section per code.
pub const REFERENCE: &str = include_str!("../../docs/errors.md");

/// The section of `REFERENCE` explaining `code` (`"E0305"`, any case), heading included.
pub fn explain(code: &str) -> Option<&'static str> {
    let heading = format!("\n## {}:", code.to_ascii_uppercase());
    let start = REFERENCE.find(&heading)? + 1;
    let rest = &REFERENCE[start..];
    let end = rest.find("\n## ").map_or(rest.len(), |i| i + 1);
    Some(rest[..end].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::codes::ALL;

    #[test]
    fn every_code_is_explained_under_its_title() {
        for code in ALL {
            let text = explain(code.id).unwrap_or_else(|| panic!("{} is not explained", code.id));
            let first = text.lines().next().unwrap();
            assert_eq!(first, format!("## {}: {}", code.id, code.title));
            assert!(text.contains("```"), "{}: no example", code.id);
        }
        assert_eq!(explain("e0305"), explain("E0305"));
        assert!(explain("E9999").is_none());
        assert!(explain("E03").is_none());
    }
}
