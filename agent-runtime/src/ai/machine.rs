//! The pure machine behind [`React`](super::React), [`ChainOfThought`](super::ChainOfThought)
//! and [`ChainOfDraft`](super::ChainOfDraft): messages in (a query, an LLM answer, a tool
//! result, a cancel), directives out (`Llm` calls, `RunInstruction` for async tools, signals).
//!
//! ReAct: idle -> awaiting_llm <-> awaiting_tools -> completed | failed. Sync tools run inside
//! `cmd` on a draft of the state (committed only if they succeed); async tools become
//! `RunInstruction` directives whose id is the tool call's id, so the host runs them
//! concurrently and their completions come back through `cmd`. Results join the conversation
//! in call order once the whole round is in. Chain of Thought / Draft make one LLM call and
//! parse the answer.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::action::{ActionFn, Outcome};
use crate::directive::Directive;
use crate::error::{ActionError, AgentError, ErrorContext};
use crate::instruction::Instruction;
use crate::interrupt::{INTERRUPT_SIGNAL, InterruptError, InterruptSpec, RESUME_SIGNAL};
use crate::plugin::{checked_arguments, run_sync_tool, unknown_tool};
use crate::signal::Signal;
use crate::snapshot::{Snapshot, Status};
use crate::state_op::apply_ops;
use crate::strategy::{Dispatch, dispatch_action};

use super::adaptive;
use super::aot;
use super::approval::{self, Approval, ToolApproval};
use super::hooks::{GuardedHooks, Step};
use super::kind::StrategyKind;
use super::model::{
    ChatMessage, LlmError, LlmRequest, LlmResponse, Role, ToolCall, ToolChoice, ToolSpec,
};
use super::parse::{Reasoning, chain_of_draft, chain_of_thought};
use super::schema;
use super::search::{self, Concluded};
use super::semconv;
use super::spec::{AiAgent, AiConfig};
use super::state::{
    AiFailure, AiResult, AiRun, AiState, LlmCall, PendingTool, Phase, Termination, ToolResult,
};

/// Starts a request: data `{"query": "...", "request_id"?: "..."}` or just the query string.
/// Without a `request_id` the instruction's id names the request.
pub const QUERY: &str = "ai.query";
/// The model's answer to a call: data [`LlmReply`].
pub const LLM_RESPONSE: &str = "ai.llm.response";
/// Cancels the running request.
pub const CANCEL: &str = "ai.cancel";
/// The result of an async tool call, from a host that ran it elsewhere (instead of the
/// `RunInstruction` completion): data `{"call_id", "result"}` or `{"call_id", "error"}`.
/// The strategies also emit it when a tool call has its result, for subscribers: data
/// `{"request_id", "call_id", "name", "ok", "content"}` ([`ToolResult`] and the request).
pub const TOOL_RESULT: &str = "ai.tool.result";
/// A streamed piece of an answer, emitted by hosts to subscribers: data `{"request_id",
/// "call_id", "delta"}`.
pub const LLM_DELTA: &str = "ai.llm.delta";
/// Tokens used by one call: data `{"request_id", "call_id", "usage", "total"}`.
pub const USAGE: &str = "ai.usage";
/// A request started: data `{"request_id", "query"}`.
pub const REQUEST_STARTED: &str = "ai.request.started";
/// A request ended with a result: data [`AiResult`].
pub const REQUEST_COMPLETED: &str = "ai.request.completed";
/// A request failed, was cancelled or was refused: data `{"request_id", "reason", "message"}`.
pub const REQUEST_FAILED: &str = "ai.request.failed";
/// A model call failed: data `{"request_id", "call_id", "error"}` ([`LlmError`]). Emitted
/// before the request ends (with `ai.request.failed`, or `ai.request.completed` when `on_error`
/// gives a fallback answer).
pub const REQUEST_ERROR: &str = "ai.request.error";
/// A tool call starts: data `{"request_id", "call_id", "name", "arguments"}`.
pub const TOOL_STARTED: &str = "ai.tool.started";

/// The request a tool call's instruction id (`{request}/tool/{round}/{index}`) belongs to, or
/// `None` for an instruction that is not a tool call.
pub(crate) fn tool_call_request(instruction_id: &str) -> Option<&str> {
    let (request, tail) = instruction_id.rsplit_once("/tool/")?;
    let (round, index) = tail.split_once('/')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(round) && digits(index)).then_some(request)
}

/// The instructions for Chain of Thought.
pub const COT_PROMPT: &str = "Think step by step. Write each step on its own line as `Step N: ...`, then give the answer on a last line starting with `Conclusion:`.";
/// The instructions for Chain of Draft.
pub const COD_PROMPT: &str = "Think step by step, but keep only a minimal draft of each step, five words at most, one per line. Then write `####` followed by the answer.";
/// What the model is told when a round repeats the previous one exactly.
pub const REPEAT_NOTE: &str = "Note: you just repeated the previous round's tool calls exactly (same tools, same arguments), so their results are the same. Use the results you already have, try something else, or answer.";

/// The model's answer to one call, as hosts feed it back (`ai.llm.response`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmReply {
    /// The call it answers.
    pub call_id: String,
    /// The answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<LlmResponse>,
    /// Or why there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<LlmError>,
}

impl LlmReply {
    /// The reply to `call_id`.
    pub fn new(call_id: impl Into<String>, result: Result<LlmResponse, LlmError>) -> Self {
        let (response, error) = match result {
            Ok(r) => (Some(r), None),
            Err(e) => (None, Some(e)),
        };
        LlmReply {
            call_id: call_id.into(),
            response,
            error,
        }
    }

    /// The id of the signal and instruction that carry it: `{call_id}/reply`.
    pub(crate) fn signal_id(&self) -> String {
        format!("{}/reply", self.call_id)
    }

    /// The reply as the JSON an `ai.llm.response` signal or instruction carries. Its fields
    /// are strings and JSON values, which always serialize: `Null` is never reached.
    pub(crate) fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// As the instruction a host feeds to `cmd`.
    pub fn into_instruction(self) -> Instruction {
        Instruction::new(LLM_RESPONSE, self.to_json()).with_id(self.signal_id())
    }

    /// As the signal a server routes back to the agent.
    pub fn into_signal(self) -> Signal {
        Signal::with_id(self.signal_id(), LLM_RESPONSE, self.to_json())
    }
}

/// Runs instructions through the machine. `agent_id` starts the ids of the approval
/// interrupts it raises.
pub(crate) fn cmd<S: AiAgent>(
    agent_id: &str,
    state: &mut S,
    ai: &mut AiState,
    instructions: Vec<Instruction>,
    kind: StrategyKind,
    unheard: bool,
) -> Vec<Directive> {
    let mut machine = Machine::new(agent_id, state, ai, kind, unheard);
    for instruction in instructions {
        machine.instruction(instruction);
    }
    machine.out
}

/// What [`cmd`] does with an `ai.llm.response` instruction carrying `reply` as JSON, with the
/// reply kept typed (a host that built it itself skips the JSON round trip).
pub(crate) fn cmd_reply<S: AiAgent>(
    agent_id: &str,
    state: &mut S,
    ai: &mut AiState,
    reply: LlmReply,
    kind: StrategyKind,
    unheard: bool,
) -> Vec<Directive> {
    let mut machine = Machine::new(agent_id, state, ai, kind, unheard);
    machine.llm_reply(reply);
    machine.out
}

/// Answers the approval interrupt `id` of a tool call with `value` (an [`Approval`]): the
/// call runs, or the model is told it was refused. On `Err` nothing changed.
pub(crate) fn resume<S: AiAgent>(
    agent_id: &str,
    state: &mut S,
    ai: &mut AiState,
    id: &str,
    value: Value,
    kind: StrategyKind,
    unheard: bool,
) -> Result<Vec<Directive>, AgentError> {
    let mut machine = Machine::new(agent_id, state, ai, kind, unheard);
    machine.resume(id, value)?;
    Ok(machine.out)
}

/// The snapshot of an AI agent: `Idle` before any request, `Waiting` while one runs,
/// `Success`/`Failure` with the [`AiResult`] once it ended.
pub(crate) fn snapshot(ai: &AiState) -> Snapshot {
    let status = status(ai);
    let mut details = json!({ "phase": ai.phase });
    if let Some(run) = &ai.run {
        details["request_id"] = json!(run.request_id);
        details["step"] = json!(run.step);
        details["llm_calls"] = json!(run.llm_calls);
        if let Some(call) = &run.llm_call {
            details["awaiting_llm"] = json!(call);
        }
        if !run.calls.is_empty() {
            details["awaiting_llm"] = search::awaiting(run);
        }
        if let Some(strategy) = run.strategy {
            details["strategy"] = json!(strategy);
        }
        if !run.tools.is_empty() {
            details["awaiting_tools"] = run
                .tools
                .iter()
                .filter(|t| t.result.is_none())
                .map(|t| json!(t.call_id))
                .collect();
        }
    }
    if !ai.interrupts.pending.is_empty() {
        details["interrupts"] = ai.interrupts.pending.iter().map(|p| json!(p.id)).collect();
    }
    let snapshot = Snapshot::new(status).with_details(details);
    match ai.run.as_ref().and_then(|r| r.result.as_ref()) {
        Some(result) if !ai.phase.is_busy() => {
            snapshot.with_result(serde_json::to_value(result).unwrap_or(Value::Null))
        }
        _ => snapshot,
    }
}

/// The status of [`snapshot`], without its details.
pub(crate) fn status(ai: &AiState) -> Status {
    match ai.phase {
        Phase::Idle if ai.in_flight.is_empty() => Status::Idle,
        Phase::Idle | Phase::AwaitingLlm | Phase::AwaitingTools => Status::Waiting,
        Phase::Completed => Status::Success,
        Phase::Failed => Status::Failure,
    }
}

/// The `Llm` directives the agent was waiting on: what a host re-issues when it thaws an agent
/// checkpointed mid-call (several when a search had a step in flight; the calls that had
/// answered are not among them).
pub fn pending_llm_calls<S: AiAgent>(
    config: &AiConfig,
    ai: &AiState,
    kind: StrategyKind,
) -> Vec<LlmCall> {
    let Some(run) = ai.run.as_ref().filter(|_| ai.phase == Phase::AwaitingLlm) else {
        return Vec::new();
    };
    if !run.calls.is_empty() {
        return search::pending_calls(config, run);
    }
    let Some(call_id) = run.llm_call.clone() else {
        return Vec::new();
    };
    let react = run.strategy.unwrap_or(kind) == StrategyKind::React;
    vec![LlmCall {
        call_id,
        request_id: run.request_id.clone(),
        request: request_for::<S>(config, run, react, None),
    }]
}

fn request_for<S: AiAgent>(
    config: &AiConfig,
    run: &AiRun,
    react: bool,
    hosted: Option<Arc<[ToolSpec]>>,
) -> LlmRequest {
    let mut request = LlmRequest::new(
        run.model.as_deref().unwrap_or(config.model),
        run.messages.clone(),
    );
    if react {
        request.tools = hosted.unwrap_or_else(S::tool_specs);
        request.tool_choice = if request.tools.is_empty() {
            ToolChoice::None
        } else {
            ToolChoice::Auto
        };
    }
    request.temperature = config.temperature;
    request.max_tokens = config.max_tokens;
    request
}

/// One `cmd` call's worth of the shared request lifecycle; the search strategies extend it in
/// `search.rs`.
pub(crate) struct Machine<'a, S: AiAgent> {
    pub(super) state: &'a mut S,
    pub(super) ai: &'a mut AiState,
    /// The agent's id: approval interrupts' ids start with it.
    pub(super) agent_id: &'a str,
    /// The agent's strategy (a request may run another one: Adaptive's choice).
    pub(super) kind: StrategyKind,
    pub(super) hooks: GuardedHooks<S>,
    pub(super) out: Vec<Directive>,
    /// Nobody can hear this step's informational events: they are left out (the host's word,
    /// `DynAgent::set_unheard`, unless a plugin hears them).
    unheard: bool,
}

impl<'a, S: AiAgent> Machine<'a, S> {
    fn new(
        agent_id: &'a str,
        state: &'a mut S,
        ai: &'a mut AiState,
        kind: StrategyKind,
        unheard: bool,
    ) -> Self {
        Machine {
            agent_id,
            state,
            ai,
            kind,
            hooks: GuardedHooks(S::hooks()),
            out: Vec::new(),
            unheard: unheard && !S::plugins().hears_ai_events(),
        }
    }

    fn instruction(&mut self, instruction: Instruction) {
        if instruction.is_completion() {
            self.completion(instruction);
            return;
        }
        match instruction.action.as_str() {
            QUERY => self.query(instruction),
            LLM_RESPONSE => self.llm_response(instruction),
            CANCEL => self.cancel(),
            TOOL_RESULT => self.tool_result_signal(instruction),
            RESUME_SIGNAL => {
                let context = ErrorContext::instruction(&instruction);
                let resumed = crate::strategy::parse_resume(instruction.params)
                    .and_then(|r| self.resume(&r.id, r.value));
                if let Err(error) = resumed {
                    self.out.push(Directive::error(error, context));
                }
            }
            _ => self.direct(instruction),
        }
    }

    /// See [`resume`].
    fn resume(&mut self, id: &str, value: Value) -> Result<(), AgentError> {
        let interrupt = |error| AgentError::Interrupt { error };
        let at = self
            .ai
            .interrupts
            .find(S::NAME, self.agent_id, id)
            .map_err(interrupt)?;
        let pending = &self.ai.interrupts.pending[at];
        let approval = crate::action::decode_params_ref::<Approval>(&pending.interrupt, &value)
            .map_err(|error| {
                interrupt(InterruptError::WrongType {
                    id: pending.id.clone(),
                    interrupt: pending.interrupt.clone(),
                    expected: pending.resume_type.clone(),
                    error: error.message().to_string(),
                })
            })?;
        let call_id = pending.payload["call_id"].as_str().unwrap_or_default();
        let index = self.waiting_tool(call_id);
        // Withdrawn interrupts leave the pending list when their request ends: a call still
        // pending belongs to the current round.
        let Some(index) = index else {
            return Err(interrupt(InterruptError::Unknown {
                agent: S::NAME.to_string(),
                id: crate::quote::clip(id.to_string()),
                pending: Vec::new(),
            }));
        };
        self.ai.interrupts.pending.remove(at);
        if approval.approve {
            self.start_tool(index, true);
        } else {
            let tool = &self.run().tools[index];
            let (call_id, name) = (tool.call_id.clone(), tool.name.clone());
            self.record_tool_result(index, tool_result(call_id, name, Err(approval.refusal())));
        }
        self.observe_if_complete();
        Ok(())
    }

    /// Raises the approval interrupt of tool call `index` (its arguments fit the tool).
    fn ask_approval(&mut self, index: usize, tool: &'static str) {
        let run = self.run_ref();
        let call = &run.tools[index];
        let payload = ToolApproval {
            request_id: run.request_id.clone(),
            call_id: call.call_id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
        };
        let spec = InterruptSpec {
            name: tool,
            payload: approval::PAYLOAD_TYPE,
            resume: approval::RESUME_TYPE,
        };
        let payload = serde_json::to_value(payload).unwrap_or(Value::Null);
        let pending = self.ai.interrupts.raise(self.agent_id, &spec, payload);
        tracing::debug!(
            target: "stratagem::ai",
            agent = S::NAME,
            id = self.agent_id,
            interrupt = %pending.id,
            "tool call waits for approval"
        );
        let data = serde_json::to_value(&pending).unwrap_or(Value::Null);
        self.out.push(Directive::Interrupt(Signal::with_id(
            pending.id,
            INTERRUPT_SIGNAL,
            data,
        )));
    }

    /// The tool call of the current round with id `call_id` still waiting for its result.
    fn waiting_tool(&self, call_id: &str) -> Option<usize> {
        if self.ai.phase != Phase::AwaitingTools {
            return None;
        }
        self.ai.run.as_ref().and_then(|run| {
            run.tools
                .iter()
                .position(|t| t.call_id == call_id && t.result.is_none())
        })
    }

    /// The request ended: the approvals it waited for are withdrawn.
    fn withdraw_approvals(&mut self) {
        self.ai.interrupts.pending.clear();
    }

    pub(super) fn run(&mut self) -> &mut AiRun {
        self.ai
            .run
            .as_mut()
            .expect("a busy AI strategy always has a run")
    }

    pub(super) fn run_ref(&self) -> &AiRun {
        self.ai
            .run
            .as_ref()
            .expect("a busy AI strategy always has a run")
    }

    /// The strategy running the current request.
    fn running(&self) -> StrategyKind {
        self.ai
            .run
            .as_ref()
            .and_then(|r| r.strategy)
            .unwrap_or(self.kind)
    }

    pub(super) fn step(&self) -> Step<'_> {
        let run = self
            .ai
            .run
            .as_ref()
            .expect("a busy AI strategy always has a run");
        Step {
            request_id: &run.request_id,
            number: run.step,
        }
    }

    pub(super) fn emit(&mut self, id: String, signal_type: &str, data: Value) {
        self.out
            .push(Directive::Emit(Signal::with_id(id, signal_type, data)));
    }

    /// Emits an informational event (`ai.usage`, `ai.tool.started`, `ai.tool.result`), built
    /// only when someone can hear it.
    fn emit_event(&mut self, signal_type: &str, build: impl FnOnce(&Self) -> (String, Value)) {
        if !self.unheard {
            let (id, data) = build(self);
            self.emit(id, signal_type, data);
        }
    }

    fn bad_instruction(&mut self, instruction: &Instruction, message: String) {
        self.out.push(Directive::error(
            AgentError::Strategy { message },
            ErrorContext::instruction(instruction),
        ));
    }

    fn query(&mut self, instruction: Instruction) {
        let model = instruction
            .params
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_string);
        let (query, request_id) = match &instruction.params {
            Value::String(q) => (q.clone(), instruction.id.clone()),
            Value::Object(map) => match map.get("query").and_then(Value::as_str) {
                Some(q) => (
                    q.to_string(),
                    map.get("request_id")
                        .and_then(Value::as_str)
                        .map_or_else(|| instruction.id.clone(), str::to_string),
                ),
                None => {
                    let message =
                        "`ai.query` needs a query: `{\"query\": \"...\"}` or a string".to_string();
                    return self.bad_instruction(&instruction, message);
                }
            },
            _ => {
                let message =
                    "`ai.query` needs a query: `{\"query\": \"...\"}` or a string".to_string();
                return self.bad_instruction(&instruction, message);
            }
        };
        if self.ai.phase.is_busy() {
            let current = self.ai.run.as_ref().map_or("", |r| r.request_id.as_str());
            let message = format!(
                "request `{request_id}` refused: the agent is busy with request `{current}`; wait for it to end or send `{CANCEL}`"
            );
            self.emit(
                format!("{request_id}/failed"),
                REQUEST_FAILED,
                json!({"request_id": request_id, "reason": "busy", "message": message}),
            );
            return self.bad_instruction(&instruction, message);
        }
        let config = self.state.config();
        let (kind, adaptive) = match self.kind {
            StrategyKind::Adaptive => {
                let has_tools = match self.state.hosted_tools() {
                    Some(hosted) => !hosted.is_empty(),
                    None => !config.tools.is_empty(),
                };
                let choice = adaptive::choose(&query, &config.reasoning, has_tools);
                (choice.strategy, Some(choice))
            }
            kind => (kind, None),
        };
        let mut messages = Vec::with_capacity(2);
        let instructions = match kind {
            StrategyKind::Cot => Some(COT_PROMPT),
            StrategyKind::Cod => Some(COD_PROMPT),
            StrategyKind::Aot => Some(aot::AOT_PROMPT),
            _ => None,
        };
        let system = match (config.system, instructions) {
            (Some(s), Some(i)) => Some(format!("{s}\n\n{i}")),
            (None, Some(i)) => Some(i.to_string()),
            (system, None) => system.map(str::to_string),
        };
        if kind.is_search() {
            // A search builds each call's prompt itself.
        } else if let Some(system) = system {
            messages.push(ChatMessage::system(system));
        }
        messages.push(ChatMessage::user(query.clone()));
        let mut started = json!({"request_id": request_id, "query": query});
        if let Some(choice) = &adaptive {
            started["strategy"] = json!(choice.strategy);
        }
        self.emit(format!("{request_id}/started"), REQUEST_STARTED, started);
        self.ai.run = Some(AiRun {
            request_id,
            query,
            messages,
            step: 0,
            llm_calls: 0,
            llm_call: None,
            tools: Vec::new(),
            previous_round: Vec::new(),
            usage: Default::default(),
            strategy: Some(kind),
            adaptive,
            model,
            calls: Vec::new(),
            trace: None,
            result: None,
        });
        if kind.is_search() {
            self.start_search(kind);
        } else {
            self.start_step();
        }
    }

    fn start_step(&mut self) {
        self.run().step += 1;
        self.hooks.on_step_start(self.state, self.step());
        let react = self.running() == StrategyKind::React;
        let config = self.state.config();
        let run = self.run();
        run.llm_calls += 1;
        let call_id = format!("{}/llm/{}", run.request_id, run.llm_calls);
        run.llm_call = Some(call_id.clone());
        let hosted = self.state.hosted_tools();
        let run = self.run();
        let request = request_for::<S>(&config, run, react, hosted);
        let request_id = self.run().request_id.clone();
        self.ai.phase = Phase::AwaitingLlm;
        self.out.push(Directive::Llm(Box::new(LlmCall {
            call_id,
            request_id,
            request,
        })));
    }

    fn llm_response(&mut self, mut instruction: Instruction) {
        let params = std::mem::take(&mut instruction.params);
        match serde_json::from_value(params) {
            Ok(reply) => self.llm_reply(reply),
            Err(e) => self.bad_instruction(
                &instruction,
                format!("`{LLM_RESPONSE}` carries no valid reply: {e}"),
            ),
        }
    }

    fn llm_reply(&mut self, reply: LlmReply) {
        let current = self.ai.run.as_ref().and_then(|r| r.llm_call.as_deref());
        let awaited =
            current == Some(reply.call_id.as_str()) || self.awaits_search_call(&reply.call_id);
        if self.ai.phase != Phase::AwaitingLlm || !awaited {
            tracing::debug!(call_id = %reply.call_id, "stale LLM reply ignored");
            return;
        }
        self.run().llm_call = None;
        let response = match (reply.response, reply.error) {
            (Some(response), _) => response,
            (None, error) => {
                let error = error.unwrap_or_else(|| {
                    LlmError::new(
                        super::model::LlmErrorKind::Malformed,
                        "the reply carries neither a response nor an error",
                    )
                });
                let request_id = self.run().request_id.clone();
                self.emit(
                    format!("{}/error", reply.call_id),
                    REQUEST_ERROR,
                    json!({"request_id": request_id, "call_id": reply.call_id, "error": error}),
                );
                return self.fail(AiFailure::Llm { request_id, error });
            }
        };
        let run = self.run();
        run.usage.add(response.usage);
        self.emit_event(USAGE, |m| {
            let run = m.run_ref();
            let (request_id, total, n) = (&run.request_id, run.usage, run.llm_calls);
            (
                format!("{request_id}/usage/{n}"),
                json!({"request_id": request_id, "call_id": reply.call_id, "usage": response.usage, "total": total}),
            )
        });
        self.hooks.on_reason(self.state, self.step(), &response);
        let running = self.running();
        if running.is_search() {
            self.search_reply(&reply.call_id, &response);
        } else if running == StrategyKind::React && !response.tool_calls.is_empty() {
            self.act(response);
        } else {
            self.answer(response);
        }
    }

    fn answer(&mut self, response: LlmResponse) {
        let reasoning = match self.running() {
            StrategyKind::Cot => chain_of_thought(&response.text),
            StrategyKind::Cod => chain_of_draft(&response.text),
            StrategyKind::Aot => aot::algorithm_of_thoughts(&response.text),
            _ => Reasoning {
                conclusion: Some(response.text.clone()),
                ..Reasoning::default()
            },
        };
        let answer = reasoning.answer().map(str::to_string);
        self.run()
            .messages
            .push(ChatMessage::assistant(response.text, Vec::new()));
        self.hooks.on_step_end(self.state, self.step());
        let reason = if self.stop_condition() {
            Termination::StopCondition
        } else {
            Termination::FinalAnswer
        };
        self.finish(reason, answer, reasoning.steps, None);
    }

    pub(super) fn stop_condition(&self) -> bool {
        let run = self
            .ai
            .run
            .as_ref()
            .expect("a busy AI strategy always has a run");
        self.hooks.stop_condition(self.state, run)
    }

    fn act(&mut self, response: LlmResponse) {
        let run = self.run();
        let round = run.llm_calls;
        let calls: Vec<ToolCall> = response
            .tool_calls
            .into_iter()
            .enumerate()
            .map(|(i, mut call)| {
                if call.id.is_empty() {
                    call.id = format!("call_{round}_{i}");
                }
                call
            })
            .collect();
        run.messages
            .push(ChatMessage::assistant(response.text, calls.clone()));
        run.tools = calls
            .iter()
            .enumerate()
            .map(|(i, call)| PendingTool {
                call_id: format!("{}/tool/{round}/{i}", run.request_id),
                provider_id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                result: None,
            })
            .collect();
        self.ai.phase = Phase::AwaitingTools;
        self.hooks.on_act(self.state, self.step(), &calls);
        for index in 0..calls.len() {
            self.start_tool(index, false);
        }
        self.observe_if_complete();
    }

    /// Checks a call and runs it (sync) or hands it to the host (async); a call of a tool
    /// that needs approval (and is not `approved` yet) waits for it instead, when its
    /// arguments fit the tool.
    fn start_tool(&mut self, index: usize, approved: bool) {
        let tool = &self.run_ref().tools[index];
        let (call_id, name, arguments, provider_id) = (
            tool.call_id.clone(),
            tool.name.clone(),
            tool.arguments.clone(),
            tool.provider_id.clone(),
        );
        if !approved && self.state.hosted_tools().is_none() {
            let asks = self.state.config().approve.iter().find(|t| **t == name);
            if let Some(&tool) = asks
                && prepare::<S>(&name, arguments.clone()).is_ok()
            {
                return self.ask_approval(index, tool);
            }
        }
        // A sync tool runs here, inside its span; an async one gets its span where the host
        // runs it.
        let span = || semconv::tool_span(None, &name, &provider_id);
        self.emit_event(TOOL_STARTED, |m| {
            let request_id = &m.run_ref().request_id;
            (
                format!("{call_id}/started"),
                json!({"request_id": request_id, "call_id": call_id, "name": name, "arguments": arguments}),
            )
        });
        if let Some(hosted) = self.state.hosted_tools() {
            // The host runs every tool of a host type: it answers with a completion.
            match prepare_hosted(&hosted, &name, arguments) {
                Ok(params) => self.out.push(Directive::RunInstruction {
                    instruction: Instruction {
                        id: call_id,
                        action: name,
                        params,
                        deadline: None,
                        exec: None,
                        outcome: None,
                    },
                    exec: crate::instruction::ExecOptions::DEFAULT,
                }),
                Err(message) => {
                    span().record(semconv::ERROR_TYPE, semconv::INVALID_ARGUMENTS);
                    self.record_tool_result(index, tool_result(call_id, name, Err(message)));
                }
            }
            return;
        }
        let outcome = match prepare::<S>(&name, arguments) {
            Err(message) => {
                span().record(semconv::ERROR_TYPE, semconv::INVALID_ARGUMENTS);
                Some(Err(message))
            }
            Ok((entry, params)) => match entry.run {
                ActionFn::Sync(run) => {
                    let span = span();
                    let result = span.in_scope(|| self.run_sync_tool(&name, run, params));
                    if result.is_err() {
                        span.record(semconv::ERROR_TYPE, semconv::TOOL_FAILED);
                    }
                    Some(result)
                }
                ActionFn::Async(_) => {
                    self.out.push(Directive::RunInstruction {
                        instruction: Instruction {
                            id: call_id.clone(),
                            action: name.clone(),
                            params,
                            deadline: None,
                            exec: None,
                            outcome: None,
                        },
                        exec: entry.exec,
                    });
                    None
                }
            },
        };
        if let Some(outcome) = outcome {
            self.record_tool_result(index, tool_result(call_id, name, outcome));
        }
    }

    /// Runs a sync tool on a draft of the state; commits it only on success.
    fn run_sync_tool(
        &mut self,
        name: &str,
        run: fn(&mut S, Value) -> Result<Outcome, ActionError>,
        params: Value,
    ) -> Result<Option<Value>, String> {
        let (reply, directives) = run_sync_tool(self.state, name, run, params)?;
        self.out.extend(directives);
        Ok(reply)
    }

    fn completion(&mut self, instruction: Instruction) {
        let tool = self.waiting_tool(&instruction.id);
        if let Some(index) = tool {
            let outcome = match instruction
                .outcome
                .expect("a completion carries an outcome")
            {
                Err(e) => Err(e.message().to_string()),
                Ok(outcome) => match apply_ops(self.state, &outcome.ops) {
                    Ok(()) => {
                        self.out.extend(outcome.directives);
                        Ok(outcome.reply.map(|r| *r))
                    }
                    Err(e) => Err(e.message().to_string()),
                },
            };
            let result = tool_result(instruction.id, instruction.action, outcome);
            self.record_tool_result(index, result);
            self.observe_if_complete();
            return;
        }
        if let Some(pos) = self
            .ai
            .in_flight
            .iter()
            .position(|id| *id == instruction.id)
        {
            self.ai.in_flight.remove(pos);
            let context = ErrorContext::instruction(&instruction);
            match crate::strategy::complete_action(self.state, instruction) {
                Ok(directives) => self.out.extend(directives),
                Err(error) => self.out.push(Directive::error(error, context)),
            }
            return;
        }
        // A tool result of a round that ended (cancelled, or an earlier request): ignored.
        tracing::debug!(id = %instruction.id, "stale tool result ignored");
    }

    fn tool_result_signal(&mut self, instruction: Instruction) {
        let Some(call_id) = instruction.params.get("call_id").and_then(Value::as_str) else {
            let message = format!(
                "`{TOOL_RESULT}` needs `{{\"call_id\": \"...\", \"result\": ...}}` or an `error`"
            );
            return self.bad_instruction(&instruction, message);
        };
        let index = self.waiting_tool(call_id);
        let Some(index) = index else {
            tracing::debug!(call_id, "stale tool result ignored");
            return;
        };
        let outcome = match instruction.params.get("error") {
            Some(error) => Err(error
                .as_str()
                .map_or_else(|| error.to_string(), str::to_string)),
            None => Ok(instruction.params.get("result").cloned()),
        };
        let name = self.run().tools[index].name.clone();
        self.record_tool_result(index, tool_result(call_id.to_string(), name, outcome));
        self.observe_if_complete();
    }

    /// Keeps a tool call's result for the round and tells subscribers (`ai.tool.result`).
    fn record_tool_result(&mut self, index: usize, result: ToolResult) {
        self.emit_event(TOOL_RESULT, |m| {
            let mut data = serde_json::to_value(&result).unwrap_or(Value::Null);
            data["request_id"] = Value::String(m.run_ref().request_id.clone());
            (format!("{}/result", result.call_id), data)
        });
        self.run().tools[index].result = Some(result);
    }

    fn observe_if_complete(&mut self) {
        if self.run().tools.iter().any(|t| t.result.is_none()) {
            return;
        }
        let run = self.run();
        let tools = std::mem::take(&mut run.tools);
        let mut results = Vec::with_capacity(tools.len());
        let mut round = Vec::with_capacity(tools.len());
        for tool in tools {
            let result = tool.result.expect("checked above");
            run.messages
                .push(ChatMessage::tool(tool.provider_id, result.content.clone()));
            round.push((tool.name, tool.arguments));
            results.push(result);
        }
        let repeated = round == run.previous_round;
        if repeated {
            run.messages.push(ChatMessage::user(REPEAT_NOTE));
        }
        run.previous_round = round;
        self.hooks.on_observe(self.state, self.step(), &results);
        self.hooks.on_step_end(self.state, self.step());
        if self.stop_condition() {
            self.finish(Termination::StopCondition, None, Vec::new(), None);
        } else if self.run().llm_calls >= self.state.config().max_iterations {
            self.finish(Termination::MaxIterations, None, Vec::new(), None);
        } else {
            self.start_step();
        }
    }

    fn finish(
        &mut self,
        reason: Termination,
        answer: Option<String>,
        reasoning: Vec<String>,
        error: Option<String>,
    ) {
        let raw = self
            .run_ref()
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(|m| m.content.clone())
            .unwrap_or_default();
        let outcome = Concluded {
            answer,
            reasoning,
            raw,
        };
        self.finish_with(reason, outcome, error);
    }

    /// Ends the request with a result: `ai.request.completed`, `on_complete`.
    pub(super) fn finish_with(
        &mut self,
        reason: Termination,
        outcome: Concluded,
        error: Option<String>,
    ) {
        let run = self.run();
        run.llm_call = None;
        run.calls.clear();
        let result = AiResult {
            request_id: run.request_id.clone(),
            reason,
            answer: outcome.answer,
            reasoning: outcome.reasoning,
            raw: outcome.raw,
            error,
            steps: run.step,
            llm_calls: run.llm_calls,
            usage: run.usage,
            strategy: run.strategy,
            adaptive: run.adaptive.clone(),
            trace: run.trace.clone(),
        };
        run.result = Some(result.clone());
        self.ai.phase = Phase::Completed;
        self.withdraw_approvals();
        self.hooks.on_complete(self.state, &result);
        let id = format!("{}/completed", result.request_id);
        self.emit(
            id,
            REQUEST_COMPLETED,
            serde_json::to_value(&result).unwrap_or(Value::Null),
        );
    }

    fn fail(&mut self, failure: AiFailure) {
        let message = failure.to_string();
        if let Some(fallback) = self.hooks.on_error(self.state, &failure) {
            let outcome = Concluded {
                answer: Some(fallback),
                ..Concluded::default()
            };
            return self.finish_with(Termination::Failed, outcome, Some(message));
        }
        self.end_unsuccessfully(Termination::Failed, message.clone());
        self.out.push(Directive::error(
            AgentError::Strategy { message },
            ErrorContext::Strategy,
        ));
    }

    fn end_unsuccessfully(&mut self, reason: Termination, message: String) {
        let run = self.run();
        run.llm_call = None;
        run.tools.clear();
        run.calls.clear();
        let result = AiResult {
            request_id: run.request_id.clone(),
            reason,
            answer: None,
            reasoning: Vec::new(),
            raw: String::new(),
            error: Some(message.clone()),
            steps: run.step,
            llm_calls: run.llm_calls,
            usage: run.usage,
            strategy: run.strategy,
            adaptive: run.adaptive.clone(),
            trace: run.trace.clone(),
        };
        let request_id = result.request_id.clone();
        run.result = Some(result);
        self.ai.phase = Phase::Failed;
        self.withdraw_approvals();
        self.emit(
            format!("{request_id}/failed"),
            REQUEST_FAILED,
            json!({"request_id": request_id, "reason": reason.as_str(), "message": message}),
        );
    }

    fn cancel(&mut self) {
        if !self.ai.phase.is_busy() {
            return;
        }
        let request_id = self.run().request_id.clone();
        self.hooks.on_cancel(self.state, self.step());
        // Tools still running are async: the host aborts them.
        let asking: Vec<&str> = self
            .ai
            .interrupts
            .pending
            .iter()
            .filter_map(|p| p.payload["call_id"].as_str())
            .collect();
        let running: Vec<String> = self
            .ai
            .run
            .iter()
            .flat_map(|run| &run.tools)
            .filter(|t| t.result.is_none() && !asking.contains(&t.call_id.as_str()))
            .map(|t| t.call_id.clone())
            .collect();
        self.out.extend(
            running
                .into_iter()
                .map(|id| Directive::CancelInstruction { id }),
        );
        self.end_unsuccessfully(
            Termination::Cancelled,
            format!("request `{request_id}` was cancelled"),
        );
    }

    fn direct(&mut self, instruction: Instruction) {
        let context = ErrorContext::instruction(&instruction);
        let id = instruction.id.clone();
        match dispatch_action(self.state, instruction) {
            Dispatch::Completed(directives) => self.out.extend(directives),
            Dispatch::Started(run) => {
                self.ai.in_flight.push(id);
                self.out.push(run);
            }
            Dispatch::Failed(error) => self.out.push(Directive::error(error, context)),
        }
    }
}

/// Checks that `name` is one of the agent's tools and that `arguments` fit its schema.
fn prepare<S: AiAgent>(
    name: &str,
    arguments: Value,
) -> Result<(&'static crate::action::ActionEntry<S>, Value), String> {
    let entry = S::AI
        .tools
        .contains(&name)
        .then(|| S::action(name))
        .flatten()
        .ok_or_else(|| {
            let known: Vec<String> = S::AI.tools.iter().map(|t| format!("`{t}`")).collect();
            format!(
                "unknown tool `{name}`; the tools are: {}",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )
        })?;
    let arguments = match arguments {
        Value::Null => Value::Object(Default::default()),
        Value::String(raw) => {
            return Err(format!(
                "the arguments of `{name}` are not a JSON object: {raw}"
            ));
        }
        other => other,
    };
    if let Some(spec) = S::tool_specs().iter().find(|t| t.name == name) {
        let problems = schema::validate(&spec.parameters, &arguments);
        if !problems.is_empty() {
            return Err(format!(
                "invalid arguments for `{name}`: {}",
                problems.join("; ")
            ));
        }
    }
    Ok((entry, arguments))
}

/// [`prepare`] for a host's tools: `name` must be one of them, `arguments` must fit its schema.
fn prepare_hosted(hosted: &[ToolSpec], name: &str, arguments: Value) -> Result<Value, String> {
    let spec = hosted
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| unknown_tool(name, hosted.iter().map(|t| t.name.as_str())))?;
    checked_arguments(name, &spec.parameters, arguments)
}

fn tool_result(
    call_id: String,
    name: String,
    outcome: Result<Option<Value>, String>,
) -> ToolResult {
    match outcome {
        Ok(reply) => ToolResult {
            call_id,
            name,
            ok: true,
            content: match reply {
                None => "{\"ok\":true}".to_string(),
                Some(Value::String(text)) => text,
                Some(value) => value.to_string(),
            },
        },
        Err(message) => ToolResult {
            call_id,
            name,
            ok: false,
            content: json!({ "error": message }).to_string(),
        },
    }
}
