//! TRM, recursive refinement: one call answers with a confidence; while the confidence is
//! below `act_threshold` and fewer than `max_supervision_steps` rounds ran, a call critiques
//! the latest answer and improves it, with a new confidence. Every draft and critique is kept.
//! Ends with `final_answer` at the threshold, `max_iterations` at the round cap, `budget` when
//! the budget runs out first.

use serde::{Deserialize, Serialize};

use super::search::{Concluded, Cx, Purpose, score_in};
use super::state::Termination;

/// How TRM asks for the first answer.
pub const TRM_ANSWER_PROMPT: &str = "Answer the question. Reply as:\nAnswer: <your answer>\nConfidence: <0.0 to 1.0, how sure you are>";
/// How TRM asks for a round of critique and improvement.
pub const TRM_REFINE_PROMPT: &str = "Critique the current answer to the question: what is wrong or missing. Then improve it. Reply as:\nCritique: <the problems>\nAnswer: <the improved answer>\nConfidence: <0.0 to 1.0, how sure you are>";

/// One answer of the refinement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Draft {
    /// The answer.
    pub answer: String,
    /// What the round found wrong with the previous answer (none for the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critique: Option<String>,
    /// The model's confidence, 0.0..=1.0 (0 when it gave none).
    pub confidence: f64,
}

/// TRM's state and trace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Refinement {
    /// Every answer, the first one first.
    pub drafts: Vec<Draft>,
    /// Critique-and-improve rounds started.
    pub supervision_steps: u32,
    /// The last reply as the model wrote it.
    #[serde(default)]
    pub raw: String,
}

/// The text after `marker` up to the next of `markers` (case-insensitive, line starts).
fn section(text: &str, marker: &str) -> Option<String> {
    let mut out: Option<Vec<&str>> = None;
    for line in text.lines() {
        let lower = line.trim().to_ascii_lowercase();
        let starts = |m: &str| lower.starts_with(m);
        if starts(marker) {
            let rest = line.trim()[marker.len()..].trim();
            out = Some(vec![rest]);
        } else if ["answer:", "critique:", "confidence:"]
            .iter()
            .any(|m| starts(m))
        {
            if out.is_some() {
                break;
            }
        } else if let Some(lines) = out.as_mut() {
            lines.push(line.trim());
        }
    }
    out.map(|lines| lines.join("\n").trim().to_string())
}

/// Takes a reply apart into a draft (a reply with no `Answer:` is all answer).
pub fn parse_draft(text: &str) -> Draft {
    let confidence = text
        .to_ascii_lowercase()
        .contains("confidence:")
        .then(|| score_in(text, "confidence:", false))
        .flatten()
        .unwrap_or(0.0);
    let answer = section(text, "answer:").unwrap_or_else(|| {
        super::search::without_line(
            &super::search::without_line(text, "confidence:"),
            "critique:",
        )
    });
    Draft {
        answer,
        critique: section(text, "critique:"),
        confidence,
    }
}

impl Refinement {
    pub(crate) fn start(cx: &mut Cx<'_>) -> Self {
        if cx.calls_left() > 0 {
            cx.call(Purpose::Answer, TRM_ANSWER_PROMPT, cx.query.to_string());
        }
        Refinement::default()
    }

    pub(crate) fn answered(&mut self, _cx: &mut Cx<'_>, _purpose: Purpose, text: &str) {
        self.drafts.push(parse_draft(text));
        self.raw = text.to_string();
    }

    pub(crate) fn step_ended(&mut self, cx: &mut Cx<'_>) -> Option<Termination> {
        let Some(latest) = self.drafts.last() else {
            return Some(Termination::Budget);
        };
        if latest.confidence >= f64::from(cx.config.act_threshold) {
            return Some(Termination::FinalAnswer);
        }
        if self.supervision_steps >= cx.config.max_supervision_steps {
            return Some(Termination::MaxIterations);
        }
        if cx.calls_left() == 0 {
            return Some(Termination::Budget);
        }
        let prompt = format!(
            "Question: {}\nCurrent answer: {}\nCritique it and improve it.",
            cx.query, latest.answer
        );
        self.supervision_steps += 1;
        cx.call(Purpose::Refine, TRM_REFINE_PROMPT, prompt);
        None
    }
}

pub(crate) fn outcome(refinement: &mut Refinement) -> Concluded {
    Concluded {
        answer: refinement.drafts.last().map(|d| d.answer.clone()),
        reasoning: refinement
            .drafts
            .iter()
            .filter_map(|d| d.critique.clone())
            .collect(),
        raw: refinement.raw.clone(),
    }
}
