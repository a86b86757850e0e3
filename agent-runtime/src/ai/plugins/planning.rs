//! Planning: plans, decompositions and priorities as typed structures, asked of the model
//! through structured output (Chat's `generate_object`).

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;

use super::calls;
use super::chat::{CHAT_OBJECT, Chat, ChatState};
use crate::directive::Directive;
use crate::error::ActionError;
use crate::plugin::{Flow, Plugin, PluginCall, PluginRoute};
use crate::signal::Signal;

/// The answer to `planning.plan`: data `{"request_id", "object": Plan, "usage", "repaired"}`.
pub const PLANNED: &str = "planning.planned";
/// The answer to `planning.decompose`: data `{"request_id", "object": Decomposition, ...}`.
pub const DECOMPOSED: &str = "planning.decomposed";
/// The answer to `planning.prioritize`: data `{"request_id", "object": Prioritization, ...}`.
pub const PRIORITIZED: &str = "planning.prioritized";

const LLM_REPLY: &str = "planning.llm.response";
const EMBED_REPLY: &str = "planning.embed.response";

/// A plan: ordered steps toward a goal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Plan {
    /// The goal, restated.
    pub goal: String,
    /// The steps, in order.
    pub steps: Vec<PlanStep>,
}

/// One step of a [`Plan`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlanStep {
    /// Its number, from 1.
    pub id: u32,
    /// What to do, briefly.
    pub title: String,
    /// How.
    pub description: String,
    /// The numbers of the steps it needs done first.
    pub depends_on: Vec<u32>,
}

/// A goal broken into subgoals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Decomposition {
    /// The goal, restated.
    pub goal: String,
    /// Its parts.
    pub subgoals: Vec<Subgoal>,
}

/// One part of a [`Decomposition`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Subgoal {
    /// What it achieves.
    pub title: String,
    /// The tasks it takes.
    pub tasks: Vec<String>,
}

/// Tasks in priority order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Prioritization {
    /// The tasks, most important first.
    pub ranked: Vec<RankedTask>,
}

/// One task of a [`Prioritization`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RankedTask {
    /// The task as given.
    pub task: String,
    /// Its rank, from 1 (first).
    pub priority: u32,
    /// Why it ranks there.
    pub reason: String,
}

/// Plans with the model: `planning.plan` (`{"goal", "context"?}`, answered with
/// `planning.planned` holding a [`Plan`]), `planning.decompose` (`{"goal", "context"?}`,
/// `planning.decomposed` with a [`Decomposition`]) and `planning.prioritize` (`{"tasks":
/// ["..."], "criteria"?}`, `planning.prioritized` with a [`Prioritization`]). Each is a
/// structured-output request as `chat.generate_object` makes them (schema from the type,
/// validated, one repair turn); a failure is `ai.request.error`, as Chat's
/// ([`ChatError::from_signal`](super::ChatError::from_signal) reads it). Requests also take
/// `request_id`, `model`, `max_tokens` and `temperature`. Read an answer with
/// [`Planning::read`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Planning {
    /// The model alias of requests that name none (default `"default"`).
    pub default_model: String,
    /// The longest answer, in tokens (default 2048).
    pub max_tokens: u64,
    /// Sampling temperature (default 0.2).
    pub temperature: f64,
    /// The most steps a plan may have (default 10).
    pub max_steps: u64,
}

impl Default for Planning {
    fn default() -> Self {
        Planning {
            default_model: "default".into(),
            max_tokens: 2048,
            temperature: 0.2,
            max_steps: 10,
        }
    }
}

impl Planning {
    fn chat(&self) -> Chat {
        Chat {
            default_model: self.default_model.clone(),
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            system_prompt: "You are a careful planner.".into(),
            ..Chat::default()
        }
    }

    /// The typed structure of a `planning.planned`, `planning.decomposed` or
    /// `planning.prioritized` answer.
    pub fn read<T: DeserializeOwned>(signal: &Signal) -> Result<T, serde_json::Error> {
        Chat::object(signal)
    }

    fn prompt(
        &self,
        action: &str,
        data: &Value,
    ) -> Result<(String, &'static str, Value), ActionError> {
        let text = |k: &str| data.get(k).and_then(Value::as_str);
        let context = text("context")
            .map(|c| format!("\nContext: {c}"))
            .unwrap_or_default();
        let goal = || {
            text("goal").ok_or_else(|| {
                ActionError::invalid_params(
                    &format!("planning.{action}"),
                    "it needs a `goal` string",
                )
            })
        };
        Ok(match action {
            "plan" => (
                format!(
                    "Make a plan of at most {} steps for this goal: {}{context}",
                    self.max_steps,
                    goal()?
                ),
                "plan",
                crate::action::closed_schema::<Plan>(),
            ),
            "decompose" => (
                format!(
                    "Break this goal into subgoals, each with its tasks: {}{context}",
                    goal()?
                ),
                "decomposition",
                crate::action::closed_schema::<Decomposition>(),
            ),
            _ => {
                let tasks: Vec<&str> = data
                    .get("tasks")
                    .and_then(Value::as_array)
                    .and_then(|t| t.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
                    .filter(|t| !t.is_empty())
                    .ok_or_else(|| {
                        ActionError::invalid_params(
                            "planning.prioritize",
                            "it needs `tasks`: a list of strings",
                        )
                    })?;
                let criteria = text("criteria")
                    .map(|c| format!("\nCriteria: {c}"))
                    .unwrap_or_default();
                (
                    format!(
                        "Rank these tasks by priority, most important first:\n- {}{criteria}{context}",
                        tasks.join("\n- ")
                    ),
                    "prioritization",
                    crate::action::closed_schema::<Prioritization>(),
                )
            }
        })
    }
}

/// The answer type of a planning request type.
fn answer_type(request_type: &str) -> &'static str {
    match request_type {
        "planning.plan" => PLANNED,
        "planning.decompose" => DECOMPOSED,
        _ => PRIORITIZED,
    }
}

impl Plugin for Planning {
    const NAME: &'static str = "Planning";
    const STATE_KEY: &'static str = "planning";
    type State = ChatState;

    fn mount(&self) -> ChatState {
        ChatState::default()
    }

    fn routes(&self) -> Vec<PluginRoute> {
        vec![
            PluginRoute::new("planning.plan", "plan"),
            PluginRoute::new("planning.decompose", "decompose"),
            PluginRoute::new("planning.prioritize", "prioritize"),
            PluginRoute::new(LLM_REPLY, "reply"),
        ]
    }

    fn before_route(&self, _: &mut ChatState, signal: &mut Cow<'_, Signal>) -> Flow {
        calls::claim(signal, Self::STATE_KEY, LLM_REPLY, EMBED_REPLY);
        Flow::Continue
    }

    fn run(
        &self,
        state: &mut ChatState,
        call: PluginCall<'_>,
    ) -> Result<Vec<Directive>, ActionError> {
        match call.action {
            "plan" | "decompose" | "prioritize" => {
                let (prompt, name, schema) = self.prompt(call.action, call.params())?;
                Ok(self
                    .chat()
                    .object_request(state, &call, &prompt, name, schema, Self::STATE_KEY))
            }
            "reply" => {
                let mut out = self.chat().on_reply(state, &call, Self::STATE_KEY)?;
                for directive in &mut out {
                    if let Directive::Emit(signal) = directive
                        && signal.signal_type == CHAT_OBJECT
                    {
                        let request_type = signal
                            .data
                            .get("signal_type")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        signal.signal_type = answer_type(request_type).to_string();
                    }
                }
                Ok(out)
            }
            other => Err(ActionError::new(format!(
                "Planning has no action `{other}`"
            ))),
        }
    }
}
