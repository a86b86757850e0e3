//! Parsing Chain-of-Thought and Chain-of-Draft answers into steps and a conclusion.

use serde::{Deserialize, Serialize};

/// A reasoning answer taken apart; the raw text is kept.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Reasoning {
    /// The steps, markers removed, in order.
    pub steps: Vec<String>,
    /// The conclusion, when the text has one.
    pub conclusion: Option<String>,
    /// The text as the model wrote it.
    pub raw: String,
}

impl Reasoning {
    /// The conclusion, or the last step when there is none.
    pub fn answer(&self) -> Option<&str> {
        self.conclusion
            .as_deref()
            .or_else(|| self.steps.last().map(String::as_str))
    }
}

const CONCLUSIONS: &[&str] = &["conclusion:", "final answer:", "answer:", "therefore:"];

/// A conclusion marker at the start of `line` (case-insensitive): the text after it.
fn conclusion_of(line: &str) -> Option<&str> {
    let lower = line.to_ascii_lowercase();
    CONCLUSIONS
        .iter()
        .find(|m| lower.starts_with(*m))
        .map(|m| line[m.len()..].trim())
}

/// A step marker at the start of `line` (`Step 3:`, `3.`, `3)`, `-`, `*`, `•`): the text after it.
fn step_of(line: &str) -> Option<&str> {
    let lower = line.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("step") {
        let digits = rest
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .count();
        if digits > 0 {
            let skip = line.len() - rest.len() + (rest.len() - rest.trim_start().len()) + digits;
            let tail = line[skip..].trim_start();
            return Some(tail.trim_start_matches([':', '.', ')', '-']).trim());
        }
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && line[digits..].starts_with(['.', ')']) {
        return Some(line[digits + 1..].trim());
    }
    for bullet in ["- ", "* ", "• "] {
        if let Some(rest) = line.strip_prefix(bullet) {
            return Some(rest.trim());
        }
    }
    None
}

/// Parses a Chain-of-Thought answer: numbered or bulleted steps (lines without a marker
/// continue the previous step, or are steps of their own when no line has a marker), then a
/// `Conclusion:`/`Answer:` line (whose following lines belong to it).
pub fn chain_of_thought(text: &str) -> Reasoning {
    let mut steps: Vec<String> = Vec::new();
    let mut conclusion: Option<String> = None;
    let marked = text.lines().any(|l| step_of(l.trim()).is_some());
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(c) = conclusion.as_mut() {
            c.push('\n');
            c.push_str(line);
        } else if let Some(rest) = conclusion_of(line) {
            conclusion = Some(rest.to_string());
        } else if let Some(rest) = step_of(line) {
            steps.push(rest.to_string());
        } else if marked && let Some(last) = steps.last_mut() {
            last.push(' ');
            last.push_str(line);
        } else {
            steps.push(line.to_string());
        }
    }
    Reasoning {
        steps,
        conclusion: conclusion.map(|c| c.trim().to_string()),
        raw: text.to_string(),
    }
}

/// Parses a Chain-of-Draft answer: terse drafts, one per line, then `####` and the answer. Without
/// `####` it reads like Chain of Thought.
pub fn chain_of_draft(text: &str) -> Reasoning {
    let Some(at) = text.rfind("####") else {
        return chain_of_thought(text);
    };
    let (drafts, answer) = (&text[..at], text[at + 4..].trim());
    let steps = drafts
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| step_of(l).unwrap_or(l).to_string())
        .collect();
    Reasoning {
        steps,
        conclusion: (!answer.is_empty()).then(|| answer.to_string()),
        raw: text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_steps_and_a_conclusion() {
        let r = chain_of_thought(
            "Step 1: The order is 42.\nStep 2: It shipped Monday,\n  three days ago.\nConclusion: It arrives today.",
        );
        assert_eq!(
            r.steps,
            ["The order is 42.", "It shipped Monday, three days ago."]
        );
        assert_eq!(r.conclusion.as_deref(), Some("It arrives today."));
        assert!(r.raw.starts_with("Step 1:"));
    }

    #[test]
    fn list_numbers_bullets_and_answer_markers() {
        let r = chain_of_thought("1. first\n2) second\n- third\n* fourth\nAnswer: 7");
        assert_eq!(r.steps, ["first", "second", "third", "fourth"]);
        assert_eq!(r.answer(), Some("7"));
    }

    #[test]
    fn unmarked_lines_are_steps_and_the_last_answers_without_a_conclusion() {
        let r = chain_of_thought("think a\nthink b");
        assert_eq!(r.steps, ["think a", "think b"]);
        assert_eq!(r.conclusion, None);
        assert_eq!(r.answer(), Some("think b"));
    }

    #[test]
    fn drafts_and_the_hash_answer() {
        let r = chain_of_draft("20 - x = 12\nx = 8\n#### 8");
        assert_eq!(r.steps, ["20 - x = 12", "x = 8"]);
        assert_eq!(r.conclusion.as_deref(), Some("8"));
        let r = chain_of_draft("1. a\n2. b\nConclusion: c");
        assert_eq!(r.steps, ["a", "b"]);
        assert_eq!(r.answer(), Some("c"));
    }
}
