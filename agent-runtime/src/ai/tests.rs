//! The AI machines driven directly through `cmd` (every transition), and through the
//! in-process runner with the scripted model.

use std::cell::RefCell;
use std::time::Duration;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::*;
use crate::action::{Action, ActionEntry, AsyncAction, NoParams, Outcome, SyncAction};
use crate::agent::{Agent, AgentSpec};
use crate::directive::Directive;
use crate::error::ActionError;
use crate::instruction::Instruction;
use crate::signal::Signal;
use crate::snapshot::Status;

// ---------------------------------------------------------------- a hand-written helpdesk

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Desk {
    pub(super) tickets: Vec<String>,
    lookups: u32,
    /// The stop condition holds once this many tickets are open.
    stop_at: Option<usize>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct OrderId {
    id: u32,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Subject {
    subject: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Wait {
    ms: u64,
    label: String,
}

struct LookupOrder;
impl Action<Desk> for LookupOrder {
    type Params = OrderId;
    const NAME: &'static str = "lookup_order";
    const DESCRIPTION: &'static str = "Looks up an order by id";
    const ENTRY: ActionEntry<Desk> = ActionEntry::sync::<Self>();
}
impl SyncAction<Desk> for LookupOrder {
    fn run(desk: &mut Desk, p: OrderId) -> Result<Outcome, ActionError> {
        desk.lookups += 1;
        if p.id == 0 {
            return Err(ActionError::new("there is no order 0"));
        }
        Ok(Outcome::new().reply(json!({"id": p.id, "status": "shipped"})))
    }
}

struct OpenTicket;
impl Action<Desk> for OpenTicket {
    type Params = Subject;
    const NAME: &'static str = "open_ticket";
    const DESCRIPTION: &'static str = "Opens a support ticket";
    const ENTRY: ActionEntry<Desk> = ActionEntry::sync::<Self>();
}
impl SyncAction<Desk> for OpenTicket {
    fn run(desk: &mut Desk, p: Subject) -> Result<Outcome, ActionError> {
        desk.tickets.push(p.subject);
        Ok(Outcome::new().reply(json!(format!("ticket #{}", desk.tickets.len()))))
    }
}

struct Explode;
impl Action<Desk> for Explode {
    type Params = NoParams;
    const NAME: &'static str = "explode";
    const DESCRIPTION: &'static str = "Panics";
    const ENTRY: ActionEntry<Desk> = ActionEntry::sync::<Self>();
}
impl SyncAction<Desk> for Explode {
    fn run(desk: &mut Desk, _: NoParams) -> Result<Outcome, ActionError> {
        desk.lookups = 999;
        panic!("the explode tool blew up")
    }
}

/// An async tool: waits, then records its label as a ticket.
struct Slow;
impl Action<Desk> for Slow {
    type Params = Wait;
    const NAME: &'static str = "slow";
    const DESCRIPTION: &'static str = "Waits, then files its label";
    const ENTRY: ActionEntry<Desk> = ActionEntry::asynchronous::<Self>();
}
impl AsyncAction<Desk> for Slow {
    fn run(_: Desk, p: Wait) -> BoxFuture<'static, Result<Outcome, ActionError>> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(p.ms)).await;
            Ok(Outcome::new()
                .set(json!({"lookups": p.ms}))
                .reply(json!({"label": p.label})))
        })
    }
}

/// An action that is not offered as a tool.
struct Secret;
impl Action<Desk> for Secret {
    type Params = NoParams;
    const NAME: &'static str = "secret";
    const DESCRIPTION: &'static str = "Not a tool";
    const ENTRY: ActionEntry<Desk> = ActionEntry::sync::<Self>();
}
impl SyncAction<Desk> for Secret {
    fn run(desk: &mut Desk, _: NoParams) -> Result<Outcome, ActionError> {
        desk.tickets.push("secret".into());
        Ok(Outcome::new())
    }
}

static DESK_ACTIONS: [ActionEntry<Desk>; 5] = [
    LookupOrder::ENTRY,
    OpenTicket::ENTRY,
    Explode::ENTRY,
    Slow::ENTRY,
    Secret::ENTRY,
];

impl AgentSpec for Desk {
    const NAME: &'static str = "Desk";
    type Strategy = React;
    fn actions() -> &'static [ActionEntry<Self>] {
        &DESK_ACTIONS
    }
}

impl AiAgent for Desk {
    const AI: AiConfig = AiConfig::new("fast")
        .system("You answer customers.")
        .tools(&["lookup_order", "open_ticket", "explode", "slow"])
        .max_iterations(4);
    fn hooks() -> &'static dyn StepHooks<Self> {
        &Recorder
    }
}

thread_local! {
    static EVENTS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    static FALLBACK: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn events() -> Vec<String> {
    EVENTS.with(|e| e.borrow_mut().drain(..).collect())
}

fn record(event: String) {
    EVENTS.with(|e| e.borrow_mut().push(event));
}

/// Records every hook call (per test thread); stops when `stop_at` tickets are open; answers
/// failures with the thread's fallback.
struct Recorder;
impl<S: HasStop> StepHooks<S> for Recorder {
    fn stop_condition(&self, state: &S, run: &AiRun) -> bool {
        let stop = state.should_stop();
        record(format!("stop_condition {} -> {stop}", run.step));
        stop
    }
    fn on_step_start(&self, _state: &S, step: Step<'_>) {
        record(format!("start {}", step.number));
    }
    fn on_reason(&self, _state: &S, step: Step<'_>, response: &LlmResponse) {
        record(format!("reason {} {:?}", step.number, response.text));
    }
    fn on_act(&self, _state: &S, step: Step<'_>, calls: &[ToolCall]) {
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        record(format!("act {} {}", step.number, names.join(",")));
    }
    fn on_observe(&self, _state: &S, step: Step<'_>, results: &[ToolResult]) {
        let oks: Vec<String> = results
            .iter()
            .map(|r| format!("{}:{}", r.name, r.ok))
            .collect();
        record(format!("observe {} {}", step.number, oks.join(",")));
    }
    fn on_step_end(&self, _state: &S, step: Step<'_>) {
        record(format!("end {}", step.number));
    }
    fn on_complete(&self, _state: &S, result: &AiResult) {
        record(format!("complete {}", result.reason.as_str()));
    }
    fn on_cancel(&self, state: &S, step: Step<'_>) {
        // Hooks see the agent's state: here, what the request did before it was cancelled.
        record(format!(
            "cancel {} at step {} with {} tickets",
            step.request_id,
            step.number,
            state.tickets()
        ));
    }
    fn on_error(&self, _state: &S, failure: &AiFailure) -> Option<String> {
        record(format!("error {}", failure.request_id()));
        FALLBACK.with(|f| f.borrow().clone())
    }
}

trait HasStop {
    fn should_stop(&self) -> bool;
    fn tickets(&self) -> usize;
}
impl HasStop for Desk {
    fn tickets(&self) -> usize {
        self.tickets.len()
    }
    fn should_stop(&self) -> bool {
        self.stop_at.is_some_and(|n| self.tickets.len() >= n)
    }
}

// ---------------------------------------------------------------- helpers

fn query(id: &str, text: &str) -> Instruction {
    Instruction::new(QUERY, json!({ "query": text })).with_id(id)
}

fn reply(call_id: &str, response: LlmResponse) -> Instruction {
    LlmReply::new(call_id, Ok(response)).into_instruction()
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: format!("p-{name}"),
        name: name.into(),
        arguments: args,
    }
}

fn calls(directives: &[Directive]) -> Vec<&LlmCall> {
    directives
        .iter()
        .filter_map(|d| match d {
            Directive::Llm(call) => Some(&**call),
            _ => None,
        })
        .collect()
}

fn emitted(directives: &[Directive]) -> Vec<&str> {
    directives
        .iter()
        .filter_map(|d| match d {
            Directive::Emit(s) => Some(s.signal_type.as_str()),
            _ => None,
        })
        .collect()
}

fn started(id: &str) -> Agent<Desk> {
    let mut agent = Agent::new(Desk::default());
    let out = agent.cmd(query(id, "Where is order 42?"));
    assert_eq!(calls(&out).len(), 1, "{out:?}");
    events();
    agent
}

fn tool_messages(call: &LlmCall) -> Vec<String> {
    call.request
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.clone())
        .collect()
}

// ---------------------------------------------------------------- ReAct transitions

#[test]
fn a_query_starts_a_request_and_calls_the_model() {
    let mut agent = Agent::new(Desk::default());
    assert_eq!(agent.snapshot().status, Status::Idle);
    let out = agent.cmd(query("r1", "Where is order 42?"));
    assert_eq!(emitted(&out), [REQUEST_STARTED]);
    let [call] = calls(&out)[..] else {
        panic!("{out:?}")
    };
    assert_eq!(call.call_id, "r1/llm/1");
    assert_eq!(call.request_id, "r1");
    assert_eq!(call.request.model, "fast");
    assert_eq!(
        call.request.messages[0],
        ChatMessage::system("You answer customers.")
    );
    assert_eq!(
        call.request.messages[1],
        ChatMessage::user("Where is order 42?")
    );
    let tools: Vec<&str> = call.request.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["lookup_order", "open_ticket", "explode", "slow"]);
    assert_eq!(
        call.request.tools[0].parameters["additionalProperties"],
        false
    );
    assert_eq!(agent.strategy_state().phase, Phase::AwaitingLlm);
    assert_eq!(agent.snapshot().status, Status::Waiting);
    assert_eq!(events(), ["start 1"]);
}

#[test]
fn tool_calls_run_apply_their_changes_and_feed_results_in_call_order() {
    let mut agent = started("r1");
    let out = agent.cmd(reply(
        "r1/llm/1",
        LlmResponse::tool_calls(
            "Looking it up.",
            vec![
                call("lookup_order", json!({"id": 42})),
                call("open_ticket", json!({"subject": "late"})),
            ],
        ),
    ));
    assert_eq!(agent.state().lookups, 1);
    assert_eq!(agent.state().tickets, ["late"]);
    let [next] = calls(&out)[..] else {
        panic!("{out:?}")
    };
    assert_eq!(next.call_id, "r1/llm/2");
    let assistant = &next.request.messages[2];
    assert_eq!(assistant.role, Role::Assistant);
    assert_eq!(assistant.content, "Looking it up.");
    assert_eq!(assistant.tool_calls.len(), 2);
    assert_eq!(
        tool_messages(next),
        [r#"{"id":42,"status":"shipped"}"#, "ticket #1"]
    );
    assert_eq!(
        next.request.messages[3].tool_call_id.as_deref(),
        Some("p-lookup_order")
    );
    assert_eq!(
        emitted(&out),
        [USAGE, TOOL_STARTED, TOOL_RESULT, TOOL_STARTED, TOOL_RESULT],
        "tool progress is published"
    );
    let published: Vec<&Signal> = out
        .iter()
        .filter_map(|d| match d {
            Directive::Emit(s) if s.signal_type.starts_with("ai.tool.") => Some(s),
            _ => None,
        })
        .collect();
    assert_eq!(published[0].id, "r1/tool/1/0/started");
    assert_eq!(
        published[0].data,
        json!({"request_id": "r1", "call_id": "r1/tool/1/0", "name": "lookup_order", "arguments": {"id": 42}})
    );
    assert_eq!(published[1].data["request_id"], "r1");
    assert_eq!(published[1].data["name"], "lookup_order");
    assert_eq!(published[1].data["ok"], true);
    assert_eq!(
        published[1].data["content"],
        r#"{"id":42,"status":"shipped"}"#
    );

    let out = agent.cmd(reply(
        "r1/llm/2",
        LlmResponse::text("It shipped; ticket #1 is open."),
    ));
    assert_eq!(emitted(&out), [USAGE, REQUEST_COMPLETED]);
    let snapshot = agent.snapshot();
    assert_eq!(snapshot.status, Status::Success);
    let result: AiResult = serde_json::from_value(snapshot.result.unwrap()).unwrap();
    assert_eq!(result.reason, Termination::FinalAnswer);
    assert_eq!(
        result.answer.as_deref(),
        Some("It shipped; ticket #1 is open.")
    );
    assert_eq!((result.steps, result.llm_calls), (2, 2));
}

#[test]
fn the_hosts_unheard_word_leaves_informational_events_out_for_one_step() {
    use crate::agent::DynAgent;
    let tool_round = || {
        reply(
            "r1/llm/1",
            LlmResponse::tool_calls(
                "Looking it up.",
                vec![call("lookup_order", json!({"id": 42}))],
            ),
        )
    };
    let mut heard = started("r1");
    let out = heard.cmd(tool_round());
    assert_eq!(emitted(&out), [USAGE, TOOL_STARTED, TOOL_RESULT]);

    let mut quiet = started("r1");
    quiet.set_unheard(true);
    let quiet_out = quiet.cmd(tool_round());
    assert!(emitted(&quiet_out).is_empty(), "{quiet_out:?}");
    assert_eq!(calls(&quiet_out), calls(&out), "the same next model call");
    assert_eq!(quiet.state(), heard.state());
    // The step's machine took the word: the next step is heard again.
    let last = quiet.cmd(reply("r1/llm/2", LlmResponse::text("It shipped.")));
    assert_eq!(emitted(&last), [USAGE, REQUEST_COMPLETED]);
}

#[test]
fn hooks_run_in_order_within_each_step() {
    let mut agent = Agent::new(Desk::default());
    agent.cmd(query("r1", "q"));
    agent.cmd(reply(
        "r1/llm/1",
        LlmResponse::tool_calls("t", vec![call("lookup_order", json!({"id": 1}))]),
    ));
    agent.cmd(reply("r1/llm/2", LlmResponse::text("done")));
    assert_eq!(
        events(),
        [
            "start 1",
            "reason 1 \"t\"",
            "act 1 lookup_order",
            "observe 1 lookup_order:true",
            "end 1",
            "stop_condition 1 -> false",
            "start 2",
            "reason 2 \"done\"",
            "end 2",
            "stop_condition 2 -> false",
            "complete final_answer",
        ]
    );
}

#[test]
fn a_reply_for_another_call_id_is_ignored() {
    let mut agent = started("r1");
    let before = agent.clone();
    assert!(
        agent
            .cmd(reply("r1/llm/9", LlmResponse::text("stale")))
            .is_empty()
    );
    assert!(
        agent
            .cmd(reply("r0/llm/1", LlmResponse::text("stale")))
            .is_empty()
    );
    assert_eq!(
        serde_json::to_value(&agent).unwrap(),
        serde_json::to_value(&before).unwrap()
    );
    // Once answered, the same reply again is stale too.
    agent.cmd(reply("r1/llm/1", LlmResponse::text("done")));
    let done = serde_json::to_value(&agent).unwrap();
    assert!(
        agent
            .cmd(reply("r1/llm/1", LlmResponse::text("again")))
            .is_empty()
    );
    assert_eq!(serde_json::to_value(&agent).unwrap(), done);
}

#[test]
fn a_query_while_busy_is_refused() {
    let mut agent = started("r1");
    let out = agent.cmd(query("r2", "another"));
    assert_eq!(emitted(&out), [REQUEST_FAILED]);
    let Directive::Emit(failed) = &out[0] else {
        panic!()
    };
    assert_eq!(failed.data["reason"], "busy");
    assert_eq!(failed.data["request_id"], "r2");
    let error = out[1].as_error().unwrap().to_string();
    assert!(error.contains("busy with request `r1`"), "{error}");
    assert!(calls(&out).is_empty());
    let run = agent.strategy_state().run.as_ref().unwrap();
    assert_eq!(run.request_id, "r1");
    // After the first request ends, a new one is welcome.
    agent.cmd(reply("r1/llm/1", LlmResponse::text("done")));
    let out = agent.cmd(query("r3", "next"));
    assert_eq!(calls(&out)[0].call_id, "r3/llm/1");
}

#[test]
fn max_iterations_ends_the_request_as_completed() {
    let mut agent = started("r1");
    for n in 1..=4 {
        let out = agent.cmd(reply(
            &format!("r1/llm/{n}"),
            LlmResponse::tool_calls("again", vec![call("lookup_order", json!({"id": n}))]),
        ));
        if n < 4 {
            assert_eq!(calls(&out).len(), 1, "call {n}: {out:?}");
        } else {
            assert!(calls(&out).is_empty(), "{out:?}");
            assert_eq!(
                emitted(&out),
                [USAGE, TOOL_STARTED, TOOL_RESULT, REQUEST_COMPLETED]
            );
        }
    }
    let result = agent
        .strategy_state()
        .run
        .as_ref()
        .unwrap()
        .result
        .clone()
        .unwrap();
    assert_eq!(result.reason, Termination::MaxIterations);
    assert_eq!(result.llm_calls, 4);
    assert_eq!(result.answer, None);
    assert_eq!(agent.snapshot().status, Status::Success);
}

#[test]
fn cancel_ends_the_request_and_later_results_are_ignored() {
    let mut agent = started("r1");
    agent.state_mut().tickets.push("earlier".into());
    let out = agent.cmd(Instruction::new(CANCEL, Value::Null));
    assert_eq!(emitted(&out), [REQUEST_FAILED]);
    assert_eq!(events(), ["cancel r1 at step 1 with 1 tickets"]);
    let Directive::Emit(signal) = &out[0] else {
        panic!()
    };
    assert_eq!(signal.data["reason"], "cancelled");
    assert_eq!(agent.snapshot().status, Status::Failure);
    assert!(
        agent
            .cmd(reply("r1/llm/1", LlmResponse::text("late")))
            .is_empty()
    );
    // Cancelling when idle does nothing.
    assert!(agent.cmd(Instruction::new(CANCEL, Value::Null)).is_empty());
}

fn one_round(agent: &mut Agent<Desk>, tool_calls: Vec<ToolCall>) -> LlmCall {
    let out = agent.cmd(reply("r1/llm/1", LlmResponse::tool_calls("", tool_calls)));
    calls(&out)
        .first()
        .map(|c| (*c).clone())
        .unwrap_or_else(|| panic!("no next call: {out:?}"))
}

#[test]
fn an_unknown_tool_is_an_error_result_for_the_model() {
    let mut agent = started("r1");
    let next = one_round(
        &mut agent,
        vec![call("refund", json!({})), call("secret", json!({}))],
    );
    let results = tool_messages(&next);
    assert!(
        results[0].contains(
            "unknown tool `refund`; the tools are: `lookup_order`, `open_ticket`, `explode`, `slow`"
        ),
        "{results:?}"
    );
    assert!(
        results[1].contains("unknown tool `secret`"),
        "an action that is not a tool: {results:?}"
    );
    assert!(agent.state().tickets.is_empty(), "`secret` did not run");
}

#[test]
fn invalid_arguments_are_reported_and_the_tool_does_not_run() {
    let mut agent = started("r1");
    let next = one_round(
        &mut agent,
        vec![
            call("lookup_order", json!({"id": "forty-two"})),
            call("lookup_order", json!({"order": 42})),
            call("open_ticket", Value::String("{not json".into())),
        ],
    );
    let results = tool_messages(&next);
    assert!(
        results[0]
            .contains("invalid arguments for `lookup_order`: $.id: expected integer, found string"),
        "{results:?}"
    );
    assert!(
        results[1].contains("missing required field `id`"),
        "{results:?}"
    );
    assert!(results[1].contains("unknown field `order`"), "{results:?}");
    assert!(results[2].contains("not a JSON object"), "{results:?}");
    assert_eq!(agent.state().lookups, 0);
}

#[test]
fn a_failing_or_panicking_tool_is_an_error_result_and_changes_nothing() {
    let mut agent = started("r1");
    let next = one_round(
        &mut agent,
        vec![
            call("lookup_order", json!({"id": 0})),
            call("explode", json!({})),
            call("open_ticket", json!({"subject": "still works"})),
        ],
    );
    let results = tool_messages(&next);
    assert_eq!(results[0], r#"{"error":"there is no order 0"}"#);
    assert!(
        results[1].contains("panicked: the explode tool blew up"),
        "{results:?}"
    );
    assert_eq!(results[2], "ticket #1");
    assert_eq!(agent.state().lookups, 0, "failed tools left no trace");
    assert_eq!(agent.state().tickets, ["still works"]);
    assert!(
        events()
            .iter()
            .any(|e| e == "observe 1 lookup_order:false,explode:false,open_ticket:true")
    );
}

#[test]
fn a_repeated_round_gets_a_note() {
    let mut agent = started("r1");
    let same = || LlmResponse::tool_calls("", vec![call("lookup_order", json!({"id": 7}))]);
    let out = agent.cmd(reply("r1/llm/1", same()));
    let first = calls(&out)[0].clone();
    assert!(
        !first
            .request
            .messages
            .iter()
            .any(|m| m.content == REPEAT_NOTE)
    );
    let out = agent.cmd(reply("r1/llm/2", same()));
    let second = calls(&out)[0];
    let last = second.request.messages.last().unwrap();
    assert_eq!(
        (last.role, last.content.as_str()),
        (Role::User, REPEAT_NOTE)
    );
    // A different round is not a repeat.
    let out = agent.cmd(reply(
        "r1/llm/3",
        LlmResponse::tool_calls("", vec![call("lookup_order", json!({"id": 8}))]),
    ));
    assert_ne!(
        calls(&out)[0].request.messages.last().unwrap().content,
        REPEAT_NOTE
    );
}

#[test]
fn the_stop_condition_ends_the_request_after_the_step() {
    let mut agent = Agent::new(Desk {
        stop_at: Some(1),
        ..Desk::default()
    });
    agent.cmd(query("r1", "q"));
    let out = agent.cmd(reply(
        "r1/llm/1",
        LlmResponse::tool_calls("", vec![call("open_ticket", json!({"subject": "x"}))]),
    ));
    assert!(calls(&out).is_empty());
    let result = agent
        .strategy_state()
        .run
        .as_ref()
        .unwrap()
        .result
        .clone()
        .unwrap();
    assert_eq!(result.reason, Termination::StopCondition);
    let events = events();
    assert_eq!(
        &events[events.len() - 3..],
        [
            "end 1",
            "stop_condition 1 -> true",
            "complete stop_condition"
        ]
    );
}

#[test]
fn async_tools_run_in_the_host_and_results_keep_call_order() {
    let mut agent = started("r1");
    let out = agent.cmd(reply(
        "r1/llm/1",
        LlmResponse::tool_calls(
            "",
            vec![
                call("slow", json!({"ms": 20, "label": "a"})),
                call("open_ticket", json!({"subject": "sync"})),
                call("slow", json!({"ms": 10, "label": "b"})),
            ],
        ),
    ));
    let runs: Vec<&Instruction> = out
        .iter()
        .filter_map(|d| match d {
            Directive::RunInstruction { instruction, .. } => Some(instruction),
            _ => None,
        })
        .collect();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].id, "r1/tool/1/0");
    assert_eq!(runs[1].id, "r1/tool/1/2");
    assert_eq!(agent.strategy_state().phase, Phase::AwaitingTools);
    assert_eq!(agent.snapshot().status, Status::Waiting);
    let (a, b) = (runs[0].clone(), runs[1].clone());
    // The later call finishes first: nothing moves until the round is complete.
    let b_done = Outcome::new().reply(json!({"label": "b"}));
    assert!(calls(&agent.cmd(Instruction::completed(&b, Ok(b_done)))).is_empty());
    let a_done = Outcome::new()
        .set(json!({"lookups": 5}))
        .reply(json!({"label": "a"}));
    let out = agent.cmd(Instruction::completed(&a, Ok(a_done.clone())));
    let next = calls(&out)[0];
    assert_eq!(
        tool_messages(next),
        [r#"{"label":"a"}"#, "ticket #1", r#"{"label":"b"}"#]
    );
    assert_eq!(
        agent.state().lookups,
        5,
        "the async tool's state change applied"
    );
    // A duplicate completion is stale.
    assert!(agent.cmd(Instruction::completed(&a, Ok(a_done))).is_empty());
}

#[test]
fn cancelling_while_async_tools_run_cancels_them() {
    let mut agent = started("r1");
    agent.cmd(reply(
        "r1/llm/1",
        LlmResponse::tool_calls(
            "",
            vec![
                call("slow", json!({"ms": 1000, "label": "a"})),
                call("open_ticket", json!({"subject": "sync"})),
                call("slow", json!({"ms": 1000, "label": "b"})),
            ],
        ),
    ));
    let out = agent.cmd(Instruction::new(CANCEL, Value::Null));
    let cancelled: Vec<&str> = out
        .iter()
        .filter_map(|d| match d {
            Directive::CancelInstruction { id } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        cancelled,
        ["r1/tool/1/0", "r1/tool/1/2"],
        "the running async tools, not the sync one that finished"
    );
    assert_eq!(emitted(&out), [REQUEST_FAILED]);
    assert_eq!(agent.snapshot().status, Status::Failure);
}

#[test]
fn async_tool_results_may_also_arrive_as_signals() {
    let mut agent = started("r1");
    agent.cmd(reply(
        "r1/llm/1",
        LlmResponse::tool_calls(
            "",
            vec![
                call("slow", json!({"ms": 1, "label": "a"})),
                call("slow", json!({"ms": 1, "label": "b"})),
            ],
        ),
    ));
    let result = |params: Value| Instruction::new(TOOL_RESULT, params);
    let out = agent.cmd(result(
        json!({"call_id": "r1/tool/1/1", "error": "worker lost"}),
    ));
    assert!(calls(&out).is_empty());
    // Unknown or stale ids are ignored; a malformed one is an error.
    assert!(
        agent
            .cmd(result(json!({"call_id": "r1/tool/9/0", "result": 1})))
            .is_empty()
    );
    assert!(
        agent.cmd(result(json!({"result": 1})))[0]
            .as_error()
            .is_some()
    );
    let out = agent.cmd(result(
        json!({"call_id": "r1/tool/1/0", "result": {"label": "a"}}),
    ));
    assert_eq!(
        tool_messages(calls(&out)[0]),
        [r#"{"label":"a"}"#, r#"{"error":"worker lost"}"#]
    );
}

#[test]
fn a_model_failure_fails_the_request_unless_on_error_falls_back() {
    let mut agent = started("r1");
    let err = LlmError::new(LlmErrorKind::Server, "HTTP 500 after 2 attempts").with_status(500);
    let out = agent.cmd(LlmReply::new("r1/llm/1", Err(err.clone())).into_instruction());
    assert_eq!(emitted(&out), [REQUEST_ERROR, REQUEST_FAILED]);
    let Directive::Emit(error) = &out[0] else {
        panic!("{out:?}")
    };
    assert_eq!(error.data["call_id"], "r1/llm/1");
    assert_eq!(error.data["request_id"], "r1");
    assert_eq!(error.data["error"]["status"], 500);
    assert!(
        out[2].as_error().unwrap().to_string().contains("HTTP 500"),
        "{out:?}"
    );
    assert_eq!(agent.snapshot().status, Status::Failure);
    assert_eq!(events(), ["error r1"]);

    FALLBACK.with(|f| *f.borrow_mut() = Some("Please try again later.".into()));
    let mut agent = started("r2");
    let out = agent.cmd(LlmReply::new("r2/llm/1", Err(err)).into_instruction());
    FALLBACK.with(|f| *f.borrow_mut() = None);
    assert_eq!(emitted(&out), [REQUEST_ERROR, REQUEST_COMPLETED]);
    assert!(out.iter().all(|d| d.as_error().is_none()));
    let result = agent
        .strategy_state()
        .run
        .as_ref()
        .unwrap()
        .result
        .clone()
        .unwrap();
    assert_eq!(result.answer.as_deref(), Some("Please try again later."));
    assert_eq!(result.reason, Termination::Failed);
    assert!(result.error.unwrap().contains("HTTP 500"));
    assert_eq!(agent.snapshot().status, Status::Success);
    assert_eq!(events(), ["error r2", "complete failed"]);
}

#[test]
fn plain_instructions_still_run_actions() {
    let mut agent = Agent::new(Desk::default());
    let out = agent.cmd(Instruction::new(
        "open_ticket",
        json!({"subject": "direct"}),
    ));
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(agent.state().tickets, ["direct"]);
    let out = agent.cmd(Instruction::new(QUERY, json!({"nope": 1})));
    assert!(
        out[0]
            .as_error()
            .unwrap()
            .to_string()
            .contains("needs a query")
    );
}

#[test]
fn a_checkpoint_mid_request_continues_where_it_stopped() {
    let mut agent = started("r1");
    agent.cmd(reply(
        "r1/llm/1",
        LlmResponse::tool_calls("", vec![call("open_ticket", json!({"subject": "x"}))]),
    ));
    let saved = serde_json::to_string(&agent).unwrap();
    let mut thawed: Agent<Desk> = serde_json::from_str(&saved).unwrap();
    let pending = React::pending_llm_call(&thawed).expect("waiting on call 2");
    assert_eq!(pending.call_id, "r1/llm/2");
    assert_eq!(tool_messages(&pending), ["ticket #1"]);
    thawed.cmd(reply("r1/llm/2", LlmResponse::text("done")));
    assert_eq!(thawed.snapshot().status, Status::Success);
    assert_eq!(thawed.state().tickets, ["x"], "the tool did not run again");
}

// ---------------------------------------------------------------- Chain of Thought / Draft

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Thinker;
impl AgentSpec for Thinker {
    const NAME: &'static str = "Thinker";
    type Strategy = ChainOfThought;
    fn actions() -> &'static [ActionEntry<Self>] {
        &[]
    }
}
impl AiAgent for Thinker {
    const AI: AiConfig = AiConfig::new("capable")
        .system("Be careful.")
        .temperature(0.2);
    fn hooks() -> &'static dyn StepHooks<Self> {
        &ThinkRecorder
    }
}
struct ThinkRecorder;
impl StepHooks<Thinker> for ThinkRecorder {
    fn on_step_start(&self, _state: &Thinker, step: Step<'_>) {
        record(format!("start {}", step.number));
    }
    fn on_reason(&self, _state: &Thinker, step: Step<'_>, _: &LlmResponse) {
        record(format!("reason {}", step.number));
    }
    fn on_step_end(&self, _state: &Thinker, step: Step<'_>) {
        record(format!("end {}", step.number));
    }
    fn stop_condition(&self, _: &Thinker, _: &AiRun) -> bool {
        record("stop_condition".into());
        false
    }
    fn on_complete(&self, _state: &Thinker, result: &AiResult) {
        record(format!("complete {}", result.reason.as_str()));
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Drafter;
impl AgentSpec for Drafter {
    const NAME: &'static str = "Drafter";
    type Strategy = ChainOfDraft;
    fn actions() -> &'static [ActionEntry<Self>] {
        &[]
    }
}
impl AiAgent for Drafter {
    const AI: AiConfig = AiConfig::new("fast");
}

#[test]
fn chain_of_thought_is_one_call_parsed_into_steps() {
    let mut agent = Agent::new(Thinker);
    let out = agent.cmd(query("t1", "What is 6 x 7?"));
    let [call] = calls(&out)[..] else {
        panic!("{out:?}")
    };
    assert!(call.request.tools.is_empty());
    assert_eq!(call.request.temperature, Some(0.2));
    let system = &call.request.messages[0].content;
    assert!(
        system.starts_with("Be careful.") && system.contains(COT_PROMPT),
        "{system}"
    );
    agent.cmd(reply(
        "t1/llm/1",
        LlmResponse::text("Step 1: 6 x 7 is 6 x 5 + 6 x 2.\nStep 2: 30 + 12 = 42.\nConclusion: 42"),
    ));
    let result = agent
        .strategy_state()
        .run
        .as_ref()
        .unwrap()
        .result
        .clone()
        .unwrap();
    assert_eq!(result.answer.as_deref(), Some("42"));
    assert_eq!(
        result.reasoning,
        ["6 x 7 is 6 x 5 + 6 x 2.", "30 + 12 = 42."]
    );
    assert!(result.raw.starts_with("Step 1"));
    assert_eq!((result.steps, result.llm_calls), (1, 1));
    assert_eq!(
        events(),
        [
            "start 1",
            "reason 1",
            "end 1",
            "stop_condition",
            "complete final_answer"
        ]
    );
}

#[test]
fn chain_of_draft_reads_the_hash_answer_and_ignores_tool_calls() {
    let mut agent = Agent::new(Drafter);
    let out = agent.cmd(query("d1", "20 - x = 12?"));
    assert!(calls(&out)[0].request.messages[0].content.contains("####"));
    let mut response = LlmResponse::text("20 - 12\n= 8\n#### 8");
    response.tool_calls.push(call("anything", json!({})));
    agent.cmd(reply("d1/llm/1", response));
    let result = agent
        .strategy_state()
        .run
        .as_ref()
        .unwrap()
        .result
        .clone()
        .unwrap();
    assert_eq!(result.answer.as_deref(), Some("8"));
    assert_eq!(result.reasoning, ["20 - 12", "= 8"]);
}

// ---------------------------------------------------------------- the in-process runner

fn runner(model: ScriptedModel) -> AiRunner {
    let model = std::sync::Arc::new(model);
    AiRunner::new(ModelTable::standard(
        model,
        "scripted-fast",
        "scripted-capable",
    ))
}

#[tokio::test(start_paused = true)]
async fn ask_runs_a_request_to_its_answer() {
    let model = ScriptedModel::parse(
        r#"
        user "Where is order 42?"
        say "Let me check."
        call lookup_order {"id": 42}
        also slow {"ms": 100, "label": "carrier"}
        call open_ticket {"subject": "order 42 late"}
        answer "Order 42 shipped; I opened ticket #1."
        "#,
    )
    .unwrap();
    let runner = runner(model.clone());
    let mut agent = Agent::new(Desk::default());
    let answer = agent.ask(&runner, "Where is order 42?").await.unwrap();
    assert_eq!(
        answer.answer(),
        Some("Order 42 shipped; I opened ticket #1.")
    );
    assert_eq!(answer.result.steps, 3);
    assert_eq!(answer.result.reason, Termination::FinalAnswer);
    assert!(answer.result.usage.total_tokens > 0);
    model.assert_finished();
    assert_eq!(agent.state().tickets, ["order 42 late"]);
    assert_eq!(
        agent.state().lookups,
        100,
        "the async tool's change applied"
    );
    let requests = model.requests();
    assert_eq!(requests[0].model, "scripted-fast", "the alias was resolved");
    assert_eq!(
        tool_messages_of(&requests[1]),
        [r#"{"id":42,"status":"shipped"}"#, r#"{"label":"carrier"}"#]
    );
    let signals: Vec<&str> = emitted(&answer.directives);
    assert_eq!(signals.first(), Some(&REQUEST_STARTED));
    assert_eq!(signals.last(), Some(&REQUEST_COMPLETED));
}

fn tool_messages_of(request: &LlmRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.clone())
        .collect()
}

#[tokio::test]
async fn ask_streams_deltas_when_asked() {
    let model = ScriptedModel::new()
        .user("hi")
        .answer("a streamed answer of some length");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let runner = runner(model).on_delta(move |call, delta| {
        sink.lock()
            .unwrap()
            .push((call.call_id.clone(), delta.clone()));
    });
    let mut agent = Agent::new(Desk::default());
    let answer = agent.ask(&runner, "hi").await.unwrap();
    assert_eq!(answer.answer(), Some("a streamed answer of some length"));
    let seen = seen.lock().unwrap();
    assert!(seen.len() > 3, "{seen:?}");
    assert!(seen.iter().all(|(id, _)| id.ends_with("/llm/1")));
    assert!(matches!(seen.last().unwrap().1, LlmDelta::Finish { .. }));
}

#[tokio::test]
async fn ask_reports_failures_clearly() {
    let mut agent = Agent::new(Desk::default());
    let empty = AiRunner::new(ModelTable::new());
    let err = agent.ask(&empty, "q").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown model alias `fast`; known aliases: none (add one with `ModelTable::alias`)"
    );

    let model = ScriptedModel::new().user("expected prompt").answer("x");
    let err = agent
        .ask(&runner(model), "another prompt")
        .await
        .unwrap_err();
    let AskError::Failed { result, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(result.reason, Termination::Failed);
    assert!(
        err.to_string()
            .contains("expected the prompt \"expected prompt\""),
        "{err}"
    );

    let model = ScriptedModel::new().fail("the provider is down");
    let err = agent.ask(&runner(model), "q").await.unwrap_err();
    assert!(err.to_string().contains("the provider is down"), "{err}");
}
