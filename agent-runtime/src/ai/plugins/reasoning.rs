//! Reasoning: `reasoning.<cod|cot|react|aot|tot|got|trm|adaptive>.run` on any agent, each run
//! by that strategy's machine (the one AI agents run on) with the plugin's defaults.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::request_id;
use crate::action::{ActionEntry, Outcome};
use crate::agent::AgentSpec;
use crate::ai::machine;
use crate::ai::{
    AiAgent, AiConfig, AiState, CANCEL, LLM_RESPONSE, Phase, QUERY, REQUEST_FAILED, React,
    ReasoningConfig, StrategyKind, ToolSpec,
};
use crate::directive::Directive;
use crate::error::ActionError;
use crate::instruction::Instruction;
use crate::plugin::{Flow, Plugin, PluginCall, PluginRoute, PluginTools, ToolDone, ToolRun};
use crate::signal::Signal;

/// A model answer to one of Reasoning's calls, as its hook renames `ai.llm.response`.
const LLM_REPLY: &str = "reasoning.llm.response";
/// A run's deadline (scheduled when it starts).
const TIMEOUT: &str = "reasoning.timeout";

/// Runs the eight reasoning strategies as signals: `reasoning.<name>.run` with data
/// `{"query", "request_id"?, "model"?, "timeout_ms"?, "options"?}` (or the query as a string)
/// starts a request run by that strategy's machine, exactly as an AI agent of that strategy
/// runs `ai.query`: it emits `ai.request.started`, the model calls, `ai.usage`, and ends with
/// `ai.request.completed` (the [`AiResult`](crate::ai::AiResult)) or `ai.request.failed`.
/// What the caller leaves out comes from the plugin's options: the model, the timeout (a run
/// still going then fails with reason `timeout`), and the strategies' options (`options` in
/// the data overrides them one by one: `{"max_depth": 1}`).
///
/// Runs in flight are part of the agent's checkpoint. Several may run at once (one per
/// request id). On an AI agent, `reasoning.<its own strategy>.run` stays its strategy's:
/// a strategy's route wins over a plugin route with exactly its pattern.
///
/// A ReAct run (and an Adaptive run that chooses ReAct) offers the agent's actions as tools,
/// filtered by `allow_tools` (empty: all) and `deny_tools` as Chat's are, fixed when the run
/// starts: a sync action runs at once on the agent's state, an async one goes to the host (a
/// `RunInstruction` with the tool call's id) and its completion comes back to the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Reasoning {
    /// The model alias of runs that name none (default `"default"`).
    pub default_model: String,
    /// How long a run may take, in milliseconds; 0: no limit (default 120000).
    pub timeout_ms: u64,
    /// Model calls of a ReAct, CoT, CoD or AoT run (default 10).
    pub max_iterations: u64,
    /// Sampling temperature (default 0.7).
    pub temperature: f64,
    /// The longest answer, in tokens; 0 leaves it to the provider (default 0).
    pub max_tokens: u64,
    /// Candidate thoughts per node, for ToT and GoT (default 3).
    pub branching_factor: u64,
    /// How deep ToT and GoT search (default 3).
    pub max_depth: u64,
    /// Nodes kept per level, for ToT (default 2).
    pub beam_width: u64,
    /// The most model calls of a search (default 50).
    pub max_llm_calls: u64,
    /// The actions a ReAct run offers as tools; empty means every one (default empty).
    pub allow_tools: Vec<String>,
    /// Actions never offered as tools (default none).
    pub deny_tools: Vec<String>,
}

impl Default for Reasoning {
    fn default() -> Self {
        let search = ReasoningConfig::DEFAULT;
        Reasoning {
            default_model: "default".into(),
            timeout_ms: 120_000,
            max_iterations: u64::from(AiConfig::DEFAULT_MAX_ITERATIONS),
            temperature: 0.7,
            max_tokens: 0,
            branching_factor: u64::from(search.branching_factor),
            max_depth: u64::from(search.max_depth),
            beam_width: u64::from(search.beam_width),
            max_llm_calls: u64::from(search.max_llm_calls),
            allow_tools: Vec::new(),
            deny_tools: Vec::new(),
        }
    }
}

/// The options one run uses: the plugin's, with the request's `options` over them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    /// Model calls of a one-line strategy.
    pub max_iterations: u64,
    /// Sampling temperature.
    pub temperature: f64,
    /// The longest answer (0: the provider's).
    pub max_tokens: u64,
    /// Candidate thoughts per node.
    pub branching_factor: u64,
    /// Search depth.
    pub max_depth: u64,
    /// Beam width.
    pub beam_width: u64,
    /// Model calls of a search.
    pub max_llm_calls: u64,
}

impl RunOptions {
    fn config(&self) -> AiConfig {
        let small = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        let mut config = AiConfig::new("default").max_iterations(small(self.max_iterations).max(1));
        config.temperature = Some(self.temperature as f32);
        config.max_tokens = (self.max_tokens > 0).then(|| small(self.max_tokens));
        let mut search = ReasoningConfig::DEFAULT;
        search.branching_factor = small(self.branching_factor).max(1);
        search.max_depth = small(self.max_depth).max(1);
        search.beam_width = small(self.beam_width).max(1);
        search.max_llm_calls = small(self.max_llm_calls).max(1);
        config.reasoning = search;
        config
    }
}

/// One run in flight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReasoningRun {
    /// The strategy.
    pub kind: StrategyKind,
    /// Its options.
    pub options: RunOptions,
    /// The machine's state.
    pub ai: AiState,
    /// The tools it offers (the agent's actions the policy allows, when it started).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
}

/// Reasoning's state: the runs in flight, by request id.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReasoningState {
    /// Request id -> its run.
    pub runs: BTreeMap<String, ReasoningRun>,
    /// Async tools the host runs for a run: instruction id -> request id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, String>,
}

/// What the machine runs on: no actions of its own, the run's configuration and tools (which
/// the plugin runs through the agent's).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Reasoner {
    #[serde(skip)]
    config: AiConfig,
    #[serde(skip)]
    tools: Option<Arc<[ToolSpec]>>,
}

impl AgentSpec for Reasoner {
    const NAME: &'static str = "Reasoning";
    type Strategy = React;

    fn actions() -> &'static [ActionEntry<Self>] {
        &[]
    }
}

impl AiAgent for Reasoner {
    const AI: AiConfig = AiConfig::new("default");

    fn config(&self) -> AiConfig {
        self.config
    }

    fn hosted_tools(&self) -> Option<Arc<[ToolSpec]>> {
        self.tools.clone()
    }
}

/// The request a model call (`<request>/llm/<n>`) belongs to.
fn request_of_call(call_id: &str) -> Option<&str> {
    call_id.rsplit_once("/llm/").map(|(request, _)| request)
}

impl Reasoning {
    fn options(&self, data: &Value) -> RunOptions {
        let given = data.get("options");
        let pick = |name: &str, default: u64| {
            given
                .and_then(|o| o.get(name))
                .and_then(Value::as_u64)
                .unwrap_or(default)
        };
        RunOptions {
            max_iterations: pick("max_iterations", self.max_iterations),
            temperature: given
                .and_then(|o| o.get("temperature"))
                .and_then(Value::as_f64)
                .unwrap_or(self.temperature),
            max_tokens: pick("max_tokens", self.max_tokens),
            branching_factor: pick("branching_factor", self.branching_factor),
            max_depth: pick("max_depth", self.max_depth),
            beam_width: pick("beam_width", self.beam_width),
            max_llm_calls: pick("max_llm_calls", self.max_llm_calls),
        }
    }

    fn start(
        &self,
        state: &mut ReasoningState,
        call: &PluginCall<'_>,
        kind: StrategyKind,
    ) -> Result<Vec<Directive>, ActionError> {
        let data = call.params();
        let run_signal = kind.run_signal();
        let query = match data {
            Value::String(q) => q.clone(),
            _ => ["query", "prompt"]
                .iter()
                .find_map(|k| data.get(*k).and_then(Value::as_str))
                .ok_or_else(|| {
                    ActionError::invalid_params(run_signal, "it needs a `query` string")
                })?
                .to_string(),
        };
        let id = request_id(call.signal);
        if state.runs.contains_key(&id) {
            return Err(ActionError::invalid_params(
                run_signal,
                format!("request `{id}` is already running; give this one another `request_id`"),
            ));
        }
        let model = data
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or(&self.default_model)
            .to_string();
        let options = self.options(data);
        let timeout = data
            .get("timeout_ms")
            .and_then(Value::as_u64)
            .unwrap_or(self.timeout_ms);
        let tools = if matches!(kind, StrategyKind::React | StrategyKind::Adaptive) {
            self.offered(call.tools)
        } else {
            Vec::new()
        };
        let mut run = ReasoningRun {
            kind,
            options,
            ai: AiState::default(),
            tools,
        };
        let query = Instruction::new(
            QUERY,
            json!({"query": query, "request_id": id, "model": model}),
        )
        .with_id(call.instruction.id.clone());
        let out = step(&mut run, vec![query]);
        let mut out = run_tools(&mut run, &id, &mut state.tools, call.tools, out);
        if timeout > 0 {
            out.push(Directive::Schedule {
                delay: Duration::from_millis(timeout),
                signal: Signal::with_id(
                    format!("{id}/timeout"),
                    TIMEOUT,
                    json!({"request_id": id, "timeout_ms": timeout}),
                ),
            });
        }
        keep(state, id, run);
        Ok(out)
    }

    /// The tools a run offers: the agent's actions the policy allows.
    fn offered(&self, tools: &dyn PluginTools) -> Vec<ToolSpec> {
        tools
            .list()
            .into_iter()
            .filter(|(spec, _)| {
                super::tool_allowed(&self.allow_tools, &self.deny_tools, &spec.name)
            })
            .map(|(spec, _)| spec)
            .collect()
    }
}

/// Keeps a run still going; forgets the tools an ended one waited for.
fn keep(state: &mut ReasoningState, id: String, run: ReasoningRun) {
    if ended(&run) {
        state.tools.retain(|_, request| *request != id);
    } else {
        state.runs.insert(id, run);
    }
}

/// Runs instructions through the run's machine.
fn step(run: &mut ReasoningRun, instructions: Vec<Instruction>) -> Vec<Directive> {
    let mut host = Reasoner {
        config: run.options.config(),
        tools: (!run.tools.is_empty()).then(|| Arc::from(run.tools.as_slice())),
    };
    machine::cmd("", &mut host, &mut run.ai, instructions, run.kind, false)
}

/// Runs the tool calls the machine handed out (`RunInstruction`s of request `id`) through the
/// agent's actions: a sync one's result goes straight back to the machine, an async one goes
/// to the host (`tools.start` issues its `RunInstruction`) and is awaited. Returns the other
/// directives, in order.
fn run_tools(
    run: &mut ReasoningRun,
    id: &str,
    awaited: &mut BTreeMap<String, String>,
    tools: &dyn PluginTools,
    mut out: Vec<Directive>,
) -> Vec<Directive> {
    let mut passed = Vec::with_capacity(out.len());
    // Each pass answers one round; a round's results start a model call, never more tools.
    loop {
        let mut completions = Vec::new();
        for directive in out {
            let Directive::RunInstruction { instruction, .. } = directive else {
                passed.push(directive);
                continue;
            };
            let started = tools.start(
                &instruction.id,
                &instruction.action,
                instruction.params.clone(),
            );
            let outcome = match started {
                Ok(ToolRun::Started) => {
                    awaited.insert(instruction.id.clone(), id.to_string());
                    continue;
                }
                Ok(ToolRun::Done(reply)) => Ok(reply_outcome(reply)),
                Err(message) => Err(ActionError::new(message)),
            };
            completions.push(Instruction::completed(&instruction, outcome));
        }
        if completions.is_empty() {
            return passed;
        }
        out = step(run, completions);
    }
}

fn reply_outcome(reply: Option<Value>) -> Outcome {
    match reply {
        Some(reply) => Outcome::new().reply(reply),
        None => Outcome::new(),
    }
}

fn ended(run: &ReasoningRun) -> bool {
    matches!(run.ai.phase, Phase::Completed | Phase::Failed)
}

impl Plugin for Reasoning {
    const NAME: &'static str = "Reasoning";
    const STATE_KEY: &'static str = "reasoning";
    type State = ReasoningState;

    fn mount(&self) -> ReasoningState {
        ReasoningState::default()
    }

    fn routes(&self) -> Vec<PluginRoute> {
        let mut routes: Vec<PluginRoute> = StrategyKind::ALL
            .iter()
            .map(|kind| PluginRoute::new(kind.run_signal(), kind.name()))
            .collect();
        routes.push(PluginRoute::new(LLM_REPLY, "reply"));
        routes.push(PluginRoute::new(TIMEOUT, "timeout"));
        routes
    }

    fn before_route(&self, state: &mut ReasoningState, signal: &mut Cow<'_, Signal>) -> Flow {
        if signal.signal_type == LLM_RESPONSE {
            let ours = signal
                .data
                .get("call_id")
                .and_then(Value::as_str)
                .and_then(request_of_call)
                .is_some_and(|request| state.runs.contains_key(request));
            if ours {
                signal.to_mut().signal_type = LLM_REPLY.to_string();
            }
        }
        Flow::Continue
    }

    fn awaits_tool(&self, state: &ReasoningState, id: &str) -> bool {
        state.tools.contains_key(id)
    }

    fn tool_completed(&self, state: &mut ReasoningState, done: ToolDone<'_>) -> Vec<Directive> {
        let Some(request) = state.tools.remove(done.id) else {
            return Vec::new();
        };
        let Some(mut run) = state.runs.remove(&request) else {
            return Vec::new();
        };
        let outcome = match done.result {
            Ok(reply) => Ok(reply_outcome(reply.clone())),
            Err(message) => Err(ActionError::new(message.clone())),
        };
        let completion = Instruction {
            id: done.id.to_string(),
            action: done.name.to_string(),
            params: Value::Null,
            deadline: None,
            exec: None,
            outcome: Some(outcome),
        };
        // A finished round starts a model call: no tool runs here.
        let out = step(&mut run, vec![completion]);
        keep(state, request, run);
        out
    }

    fn run(
        &self,
        state: &mut ReasoningState,
        call: PluginCall<'_>,
    ) -> Result<Vec<Directive>, ActionError> {
        match call.action {
            "reply" => {
                let request = call
                    .params()
                    .get("call_id")
                    .and_then(Value::as_str)
                    .and_then(request_of_call)
                    .map(str::to_string);
                let Some((request, mut run)) =
                    request.and_then(|r| state.runs.remove(&r).map(|run| (r, run)))
                else {
                    return Ok(Vec::new());
                };
                let reply = Instruction::new(LLM_RESPONSE, call.params().clone())
                    .with_id(call.instruction.id.clone());
                let out = step(&mut run, vec![reply]);
                let out = run_tools(&mut run, &request, &mut state.tools, call.tools, out);
                keep(state, request, run);
                Ok(out)
            }
            "timeout" => {
                let Some(request) = call.params().get("request_id").and_then(Value::as_str) else {
                    return Ok(Vec::new());
                };
                let Some(mut run) = state.runs.remove(request) else {
                    // It ended in time.
                    return Ok(Vec::new());
                };
                // The machine's cancel stops what runs; the request fails with `timeout`.
                let cancel = Instruction::new(CANCEL, Value::Null);
                state.tools.retain(|_, r| r != request);
                let out: Vec<Directive> = step(&mut run, vec![cancel])
                    .into_iter()
                    .map(|d| match d {
                        Directive::Emit(mut s) if s.signal_type == REQUEST_FAILED => {
                            let ms = call
                                .params()
                                .get("timeout_ms")
                                .cloned()
                                .unwrap_or(Value::Null);
                            s.data["reason"] = json!("timeout");
                            s.data["message"] =
                                json!(format!("request `{request}` did not finish within {ms} ms"));
                            Directive::Emit(s)
                        }
                        other => other,
                    })
                    .collect();
                Ok(out)
            }
            name => {
                let kind = StrategyKind::ALL
                    .into_iter()
                    .find(|k| k.name() == name)
                    .ok_or_else(|| ActionError::new(format!("Reasoning has no action `{name}`")))?;
                self.start(state, &call, kind)
            }
        }
    }
}
