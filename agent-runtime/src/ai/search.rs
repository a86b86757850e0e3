//! The request lifecycle for strategies that search (Tree of Thoughts, Graph of Thoughts,
//! TRM): several model calls outstanding at once, each answer applied as it arrives.
//!
//! The machine in `machine.rs` owns what every strategy shares (query, busy refusal, cancel,
//! stale replies, usage, hooks, `on_error`, the result); this file plugs searches into it. A
//! search is a [`Trace`] (its tree, graph or drafts) plus the calls it is waiting for
//! ([`SearchCall`]s in the run). A **step** is one batch: the calls a strategy issues together
//! (a ToT frontier's generations, a GoT round's aggregations). Hooks see `on_step_start` when a
//! batch goes out, `on_reason` per answer, `on_step_end` and `stop_condition` once every call
//! of the batch has answered; a strategy may add calls to the running step when an answer
//! arrives (ToT scores each thought as soon as it is generated). Answers are folded into the
//! trace on arrival, so a checkpoint taken mid-step keeps them and only the unanswered calls
//! are made again after a thaw. Budget: a strategy issues no call beyond `max_llm_calls`, and
//! none once the usage reaches `token_budget`; it then ends with its best answer so far and
//! the reason `budget`.

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::directive::Directive;

use super::got::{self, GraphSearch};
use super::kind::StrategyKind;
use super::machine::Machine;
use super::model::{ChatMessage, LlmRequest, LlmResponse};
use super::options::ReasoningConfig;
use super::spec::{AiAgent, AiConfig};
use super::state::{AiRun, LlmCall, Phase, Termination};
use super::tot::{self, TreeSearch};
use super::trm::{self, Refinement};

/// What a search's model call is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "purpose", rename_all = "snake_case")]
pub enum Purpose {
    /// Generate the thought of this node.
    Generate {
        /// The node.
        node: u32,
    },
    /// Score this node's thought.
    Evaluate {
        /// The node.
        node: u32,
    },
    /// Relate the current level's thoughts to each other (GoT).
    Connect,
    /// Merge thoughts into this new node (GoT).
    Aggregate {
        /// The node the merge becomes.
        node: u32,
    },
    /// The first answer (TRM).
    Answer,
    /// Critique and improve the latest answer (TRM).
    Refine,
}

/// A model call a search is waiting for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchCall {
    /// The call's id (`<request>/llm/<n>`).
    pub call_id: String,
    /// What the answer is for.
    #[serde(flatten)]
    pub purpose: Purpose,
    /// The prompt, kept so the call can be made again after a thaw.
    pub messages: Vec<ChatMessage>,
}

/// A search's state, kept in the run while it goes and in the result once it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Trace {
    /// Tree of Thoughts.
    Tree(TreeSearch),
    /// Graph of Thoughts.
    Graph(GraphSearch),
    /// TRM's drafts and critiques.
    Refinement(Refinement),
}

/// The answer a search gives (its best so far when it ends early).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Concluded {
    pub(crate) answer: Option<String>,
    pub(crate) reasoning: Vec<String>,
    pub(crate) raw: String,
}

/// What a strategy sees while it plans: the question, its options, the budget left, and where
/// its new calls go.
pub(crate) struct Cx<'a> {
    pub(crate) query: &'a str,
    pub(crate) config: &'a ReasoningConfig,
    system: Option<&'a str>,
    calls_left: u32,
    issued: Vec<(Purpose, Vec<ChatMessage>)>,
}

impl Cx<'_> {
    /// How many more calls the budget allows.
    pub(crate) fn calls_left(&self) -> u32 {
        self.calls_left
    }

    /// Issues a call: the agent's system prompt and `instructions` as the system message,
    /// `prompt` as the user message.
    pub(crate) fn call(&mut self, purpose: Purpose, instructions: &str, prompt: String) {
        debug_assert!(self.calls_left > 0, "strategies check the budget first");
        self.calls_left = self.calls_left.saturating_sub(1);
        let system = match self.system {
            Some(system) => format!("{system}\n\n{instructions}"),
            None => instructions.to_string(),
        };
        self.issued.push((
            purpose,
            vec![ChatMessage::system(system), ChatMessage::user(prompt)],
        ));
    }
}

fn start(kind: StrategyKind, cx: &mut Cx<'_>) -> Trace {
    match kind {
        StrategyKind::Got => Trace::Graph(GraphSearch::start(cx)),
        StrategyKind::Trm => Trace::Refinement(Refinement::start(cx)),
        _ => Trace::Tree(TreeSearch::start(cx)),
    }
}

fn answered(trace: &mut Trace, cx: &mut Cx<'_>, purpose: Purpose, text: &str) {
    match trace {
        Trace::Tree(t) => t.answered(cx, purpose, text),
        Trace::Graph(g) => g.answered(cx, purpose, text),
        Trace::Refinement(r) => r.answered(cx, purpose, text),
    }
}

/// Every call of the step answered: issue the next step's calls, or end (`Some(reason)`).
fn step_ended(trace: &mut Trace, cx: &mut Cx<'_>) -> Option<Termination> {
    match trace {
        Trace::Tree(t) => t.step_ended(cx),
        Trace::Graph(g) => g.step_ended(cx),
        Trace::Refinement(r) => r.step_ended(cx),
    }
}

pub(crate) fn outcome(trace: &mut Trace) -> Concluded {
    match trace {
        Trace::Tree(t) => tot::outcome(t),
        Trace::Graph(g) => got::outcome(g),
        Trace::Refinement(r) => trm::outcome(r),
    }
}

/// Reads a score from `text`: the number after the last `marker` (`score:`, `confidence:`,
/// case-insensitive), else the first number, as 0.0..=1.0. A fraction (`0.8`) is taken as is;
/// a whole number is out of 10 when `tenths` (scores: `Score: 8`) and up to 1 otherwise
/// (`Confidence: 1`); anything above 10 is a percentage.
pub(crate) fn score_in(text: &str, marker: &str, tenths: bool) -> Option<f64> {
    let lower = text.to_ascii_lowercase();
    let from = lower.rfind(marker).map_or(0, |at| at + marker.len());
    let tail = &text[from..];
    let start = tail.find(|c: char| c.is_ascii_digit())?;
    let number: String = tail[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let number = number.trim_end_matches('.');
    let value: f64 = number.parse().ok()?;
    let fraction = number.contains('.') && value <= 1.0;
    let scaled = if fraction || (value <= 1.0 && !tenths) {
        value
    } else if value <= 10.0 {
        value / 10.0
    } else {
        value / 100.0
    };
    Some(scaled.clamp(0.0, 1.0))
}

/// `text` without its lines that start with `marker` (case-insensitive), trimmed.
pub(crate) fn without_line(text: &str, marker: &str) -> String {
    text.lines()
        .filter(|l| !l.trim().to_ascii_lowercase().starts_with(marker))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// The calls a thawed search still waits for, as directives' payloads.
pub(crate) fn pending_calls(config: &AiConfig, run: &AiRun) -> Vec<LlmCall> {
    run.calls
        .iter()
        .map(|call| LlmCall {
            call_id: call.call_id.clone(),
            request_id: run.request_id.clone(),
            request: request_for(config, run.model.as_deref(), call.messages.clone()),
        })
        .collect()
}

fn request_for(config: &AiConfig, model: Option<&str>, messages: Vec<ChatMessage>) -> LlmRequest {
    let mut request = LlmRequest::new(model.unwrap_or(config.model), messages);
    request.temperature = config.temperature;
    request.max_tokens = config.max_tokens;
    request
}

impl<S: AiAgent> Machine<'_, S> {
    fn budget_left(&self) -> u32 {
        let run = self.run_ref();
        let reasoning = &self.state.config().reasoning;
        let spent = reasoning
            .token_budget
            .is_some_and(|budget| run.usage.total_tokens >= budget);
        if spent {
            0
        } else {
            reasoning.max_llm_calls.saturating_sub(run.llm_calls)
        }
    }

    /// Runs `f` on the run's trace with a planning context, then issues the calls it made.
    fn with_cx<R>(&mut self, f: impl FnOnce(&mut Option<Trace>, &mut Cx<'_>) -> R) -> R {
        let calls_left = self.budget_left();
        let ai = self.state.config();
        let config = ai.reasoning;
        let run = self.ai.run.as_mut().expect("a search runs in a request");
        let mut cx = Cx {
            query: &run.query,
            config: &config,
            system: ai.system,
            calls_left,
            issued: Vec::new(),
        };
        let out = f(&mut run.trace, &mut cx);
        let issued = cx.issued;
        self.issue(issued);
        out
    }

    fn issue(&mut self, issued: Vec<(Purpose, Vec<ChatMessage>)>) {
        let ai_config = self.state.config();
        let run = self.ai.run.as_mut().expect("a search runs in a request");
        run.calls.reserve(issued.len());
        self.out.reserve(issued.len());
        for (purpose, messages) in issued {
            run.llm_calls += 1;
            let call_id = format!("{}/llm/{}", run.request_id, run.llm_calls);
            run.calls.push(SearchCall {
                call_id: call_id.clone(),
                purpose,
                messages: messages.clone(),
            });
            self.out.push(Directive::Llm(Box::new(LlmCall {
                call_id,
                request_id: run.request_id.clone(),
                request: request_for(&ai_config, run.model.as_deref(), messages),
            })));
        }
    }

    /// Starts a search request (the run exists, step 0).
    pub(super) fn start_search(&mut self, kind: StrategyKind) {
        self.ai.phase = Phase::AwaitingLlm;
        self.run().step = 1;
        self.hooks.on_step_start(self.state, self.step());
        self.with_cx(|trace, cx| *trace = Some(start(kind, cx)));
        if self.run_ref().calls.is_empty() {
            self.end_search(Termination::Budget);
        }
    }

    /// Whether the search waits for `call_id`.
    pub(super) fn awaits_search_call(&self, call_id: &str) -> bool {
        self.ai
            .run
            .as_ref()
            .is_some_and(|run| run.calls.iter().any(|c| c.call_id == call_id))
    }

    /// A search call answered (usage counted, `on_reason` called).
    pub(super) fn search_reply(&mut self, call_id: &str, response: &LlmResponse) {
        let run = self.run();
        let Some(index) = run.calls.iter().position(|c| c.call_id == call_id) else {
            return;
        };
        let purpose = run.calls.remove(index).purpose;
        self.with_cx(|trace, cx| answered(traced(trace), cx, purpose, &response.text));
        if !self.run_ref().calls.is_empty() {
            return;
        }
        self.hooks.on_step_end(self.state, self.step());
        if self.stop_condition() {
            return self.end_search(Termination::StopCondition);
        }
        let ended = self.with_cx(|trace, cx| step_ended(traced(trace), cx));
        match ended {
            Some(reason) => self.end_search(reason),
            None if self.run_ref().calls.is_empty() => self.end_search(Termination::Budget),
            None => {
                self.run().step += 1;
                self.hooks.on_step_start(self.state, self.step());
            }
        }
    }

    fn end_search(&mut self, reason: Termination) {
        let run = self.run();
        let outcome = run.trace.as_mut().map(outcome).unwrap_or_default();
        self.finish_with(reason, outcome, None);
    }
}

fn traced(trace: &mut Option<Trace>) -> &mut Trace {
    trace.as_mut().expect("a running search has a trace")
}

/// The calls a running search waits for, as a snapshot shows them.
pub(crate) fn awaiting(run: &AiRun) -> serde_json::Value {
    json!(run.calls.iter().map(|c| &c.call_id).collect::<Vec<_>>())
}
