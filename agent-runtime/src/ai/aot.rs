//! Algorithm of Thoughts: one call whose instructions carry a worked example of a search
//! (try, check, backtrack), so the model explores within one answer. The explored steps and the
//! answer are parsed from the text (the raw text is kept in the result).

use super::parse::Reasoning;

/// The instructions for Algorithm of Thoughts, with its search example.
pub const AOT_PROMPT: &str = "Solve the problem by searching, as in this example, one line per explored step, then the answer on a last line starting with `Answer:`.\n\nExample. Problem: use 4, 6, 2 once each to make 12.\nTry: 4 + 6 = 10, 10 + 2 = 12. Reached 12.\nAnswer: 4 + 6 + 2 = 12\n\nExample. Problem: use 3, 5, 8 once each to make 1.\nTry: 8 - 5 = 3, 3 - 3 = 0. Not 1, backtrack.\nTry: 5 - 3 = 2, 8 / 2 = 4. Not 1, backtrack.\nTry: 8 - 5 = 3, 3 / 3 = 1. Reached 1.\nAnswer: (8 - 5) / 3 = 1";

const ANSWER: &str = "answer:";

/// Parses an Algorithm-of-Thoughts reply: every line before the `Answer:` line is an explored
/// step (a `Try:`/`Step N:`/bullet marker removed); the answer is the rest of that line and the
/// lines after it. Without an `Answer:` line the last line is the answer.
pub fn algorithm_of_thoughts(text: &str) -> Reasoning {
    let mut steps: Vec<String> = Vec::new();
    let mut conclusion: Option<String> = None;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(c) = conclusion.as_mut() {
            c.push('\n');
            c.push_str(line);
            continue;
        }
        let lower = line.to_ascii_lowercase();
        if lower.starts_with(ANSWER) {
            conclusion = Some(line[ANSWER.len()..].trim().to_string());
        } else {
            steps.push(strip_marker(line).to_string());
        }
    }
    if conclusion.is_none() {
        conclusion = steps.pop();
    }
    Reasoning {
        steps,
        conclusion,
        raw: text.to_string(),
    }
}

fn strip_marker(line: &str) -> &str {
    let lower = line.to_ascii_lowercase();
    for marker in ["try:", "backtrack:", "check:"] {
        if lower.starts_with(marker) {
            return line[marker.len()..].trim();
        }
    }
    if let Some(rest) = lower.strip_prefix("step")
        && let Some(colon) = rest.find(':')
        && rest[..colon].trim().chars().all(|c| c.is_ascii_digit())
    {
        return line["step".len() + colon + 1..].trim();
    }
    line.trim_start_matches(['-', '*', '•']).trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explored_steps_and_the_answer() {
        let r = algorithm_of_thoughts(
            "Try: 8 - 5 = 3, 3 - 3 = 0. Backtrack.\nStep 2: 8 - 5 = 3, 3 / 3 = 1.\nAnswer: (8 - 5) / 3",
        );
        assert_eq!(
            r.steps,
            ["8 - 5 = 3, 3 - 3 = 0. Backtrack.", "8 - 5 = 3, 3 / 3 = 1."]
        );
        assert_eq!(r.answer(), Some("(8 - 5) / 3"));
        let bare = algorithm_of_thoughts("- one\n- two");
        assert_eq!(bare.steps, ["one"]);
        assert_eq!(bare.answer(), Some("two"));
    }
}
