//! FSM agents end to end through `#[agent(strategy = Fsm, transitions { .. })]`: every runtime
//! rule of the Fsm semantics (the guide's `fsm` chapter), through the typed API and through signals and routes.

use std::time::Duration;

use stratagem::prelude::*;
use stratagem::strategy::fsm::TIMEOUT_SIGNAL;
use stratagem::{ActionErrorKind, AgentError, ErrorContext, FsmError};

/// A support ticket: exercises guards (with and without parameters), exit/row/entry actions,
/// failing and panicking actions, a timer, and both kinds of terminal state.
#[agent(
    strategy = Fsm,
    transitions {
        initial Open
        terminal Closed
        terminal Rejected as failure
        exit Open do leave_open
        enter Working do enter_working
        Open    -> Working  on start      if is_urgent do begin_urgent
        Open    -> Working  on start      if has_owner do begin
        Open    -> Open     on poke       do poke
        Open    -> Rejected after 10s
        Working -> Closed   on finish     if done_enough
        Working -> Working  on fail_here  do fail
        Working -> Working  on panic_here do explode
        Working -> Rejected on reject
    },
    actions [audit],
    routes {
        "ticket.start" => start
        "ticket.finish" => finish
        "ticket.**" => audit
    }
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Ticket {
    urgent: bool,
    owner: Option<String>,
    fail_exit: bool,
    fail_enter: bool,
    log: Vec<String>,
    pokes: u32,
    progress: u32,
    audits: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Begin {
    by: String,
}

#[derive(Debug, Deserialize)]
struct Finish {
    progress: u32,
}

fn is_urgent(ticket: &Ticket) -> bool {
    ticket.urgent
}

fn has_owner(ticket: &Ticket) -> bool {
    ticket.owner.is_some()
}

fn done_enough(_: &Ticket, finish: Finish) -> bool {
    finish.progress >= 100
}

#[action]
fn leave_open(ticket: &mut Ticket) -> Result<(), ActionError> {
    ticket.log.push("exit Open".into());
    if ticket.fail_exit {
        return Err(ActionError::new("exit refused"));
    }
    Ok(())
}

#[action]
fn enter_working(ticket: &mut Ticket) -> Result<(), ActionError> {
    ticket.log.push("enter Working".into());
    if ticket.fail_enter {
        return Err(ActionError::new("entry refused"));
    }
    Ok(())
}

#[action]
fn begin(ticket: &mut Ticket, params: Begin) {
    ticket.log.push(format!("begin by {}", params.by));
}

#[action]
fn begin_urgent(ticket: &mut Ticket) {
    ticket.log.push("begin urgent".into());
}

#[action]
fn poke(ticket: &mut Ticket) {
    ticket.pokes += 1;
}

#[action]
fn fail(ticket: &mut Ticket) -> Result<(), ActionError> {
    ticket.progress = 999;
    Err(ActionError::new("cannot do that"))
}

#[action]
fn explode(ticket: &mut Ticket) {
    ticket.progress = 1;
    panic!("the action blew up");
}

#[action]
fn audit(ticket: &mut Ticket) {
    ticket.audits += 1;
}

fn owned() -> Agent<Ticket> {
    let mut ticket = Ticket::new();
    ticket.state_mut().owner = Some("ada".into());
    ticket
}

fn by(name: &str) -> serde_json::Value {
    json!({ "by": name })
}

/// The whole agent as JSON: "unchanged" means this is equal before and after.
fn frozen(agent: &Agent<Ticket>) -> serde_json::Value {
    serde_json::to_value(agent).unwrap()
}

fn working() -> Agent<Ticket> {
    let mut ticket = owned();
    ticket.init();
    ticket.cmd(TicketEvent::Start.with(by("ada"))).unwrap();
    assert_eq!(ticket.fsm_state(), TicketState::Working);
    ticket.state_mut().log.clear();
    ticket
}

#[test]
fn idle_before_the_first_event_and_waiting_after() {
    let mut ticket = owned();
    let snapshot = ticket.snapshot();
    assert_eq!(snapshot.status, Status::Idle);
    assert!(!snapshot.done());
    assert_eq!(snapshot.details["state"], "Open");

    // A rejected event is not a "first event": the agent is unchanged, so still Idle.
    assert!(ticket.cmd(TicketEvent::Finish).is_err());
    assert_eq!(ticket.snapshot().status, Status::Idle);

    ticket.cmd(TicketEvent::Start.with(by("ada"))).unwrap();
    let snapshot = ticket.snapshot();
    assert_eq!(snapshot.status, Status::Waiting);
    assert!(!snapshot.done());
    assert_eq!(snapshot.details["state"], "Working");
}

#[test]
fn the_first_row_whose_guard_holds_fires() {
    // Both guards hold: the first row (declared first) fires.
    let mut ticket = owned();
    ticket.state_mut().urgent = true;
    ticket.cmd(TicketEvent::Start.with(by("ada"))).unwrap();
    assert_eq!(
        ticket.state().log,
        ["exit Open", "begin urgent", "enter Working"]
    );

    // Only the second holds: the second fires.
    let mut ticket = owned();
    ticket.cmd(TicketEvent::Start.with(by("ada"))).unwrap();
    assert_eq!(
        ticket.state().log,
        ["exit Open", "begin by ada", "enter Working"]
    );
    assert_eq!(ticket.fsm_state(), TicketState::Working);
}

#[test]
fn exit_then_row_action_then_entry_then_the_new_state() {
    let mut ticket = owned();
    let directives = ticket.cmd(TicketEvent::Start.with(by("grace"))).unwrap();
    assert_eq!(
        ticket.state().log,
        ["exit Open", "begin by grace", "enter Working"],
        "exit of the source, the row's action, entry of the target, in that order"
    );
    assert_eq!(ticket.fsm_state(), TicketState::Working);
    // The initial state's timer was armed by the first command (no `init` was called).
    assert!(
        matches!(directives.as_slice(), [Directive::Schedule { .. }]),
        "{directives:?}"
    );
}

#[test]
fn no_row_is_an_invalid_transition_and_changes_nothing() {
    let mut ticket = owned();
    ticket.init();
    let before = frozen(&ticket);
    let refused = ticket.cmd(TicketEvent::Finish).unwrap_err();
    // The typed refusal is the two enum values; the names come from the generated tables.
    assert_eq!(
        refused,
        FsmError::InvalidTransition {
            state: TicketState::Open,
            event: TicketEvent::Finish,
        }
    );
    assert_eq!(refused.accepted(), ["start", "poke"]);
    let error = AgentError::from(refused.clone());
    assert_eq!(refused.to_string(), error.to_string());
    assert_eq!(
        error,
        AgentError::InvalidTransition {
            state: "Open".into(),
            event: "finish".into(),
            accepted: vec!["start".into(), "poke".into()].into(),
        }
    );
    assert_eq!(
        error.to_string(),
        "invalid transition: state `Open` has no row for event `finish`; it accepts: `start`, `poke`"
    );
    assert_eq!(frozen(&ticket), before);

    // The untyped path reports the same error as a directive, with the instruction as context.
    let directives =
        ticket.cmd(Instruction::new("finish", json!({"progress": 100})).with_id("i-1"));
    let [Directive::Error { error, context }] = directives.as_slice() else {
        panic!("{directives:?}")
    };
    assert!(matches!(error, AgentError::InvalidTransition { .. }));
    assert_eq!(
        context,
        &ErrorContext::Instruction {
            id: "i-1".into(),
            action: "finish".into()
        }
    );
    assert_eq!(frozen(&ticket), before);
}

#[test]
fn all_guards_false_is_guard_rejected_and_changes_nothing() {
    let mut ticket = Ticket::new(); // neither urgent nor owned
    ticket.init();
    let before = frozen(&ticket);
    let refused = ticket.cmd(TicketEvent::Start.with(by("ada"))).unwrap_err();
    assert_eq!(
        refused,
        FsmError::GuardRejected {
            state: TicketState::Open,
            event: TicketEvent::Start,
        }
    );
    assert_eq!(refused.guards(), ["is_urgent", "has_owner"]);
    let error = AgentError::from(refused);
    assert_eq!(
        error,
        AgentError::GuardRejected {
            state: "Open".into(),
            event: "start".into(),
            guards: vec!["is_urgent".into(), "has_owner".into()].into(),
        }
    );
    assert_eq!(
        error.to_string(),
        "guard rejected: no guard holds for event `start` in state `Open` (tried `is_urgent`, `has_owner`)"
    );
    assert_eq!(frozen(&ticket), before);
}

#[test]
fn guards_read_the_events_parameters() {
    let mut ticket = working();
    let before = frozen(&ticket);
    assert!(matches!(
        ticket.cmd(TicketEvent::Finish.with(json!({"progress": 50}))),
        Err(FsmError::GuardRejected { .. })
    ));
    // Parameters the guard cannot read are a clear error, not a silent `false`.
    let error: AgentError = ticket
        .cmd(TicketEvent::Finish.with(json!({"progress": "most"})))
        .unwrap_err()
        .into();
    let AgentError::GuardFailed { guard, error } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(guard, "done_enough");
    assert_eq!(error.kind(), ActionErrorKind::InvalidParams);
    assert_eq!(frozen(&ticket), before);

    ticket
        .cmd(TicketEvent::Finish.with(json!({"progress": 100})))
        .unwrap();
    assert_eq!(ticket.fsm_state(), TicketState::Closed);
}

#[test]
fn a_failing_action_leaves_state_and_position_unchanged() {
    // The exit action fails.
    let mut ticket = owned();
    ticket.init();
    ticket.state_mut().fail_exit = true;
    let before = frozen(&ticket);
    let error: AgentError = ticket
        .cmd(TicketEvent::Start.with(by("ada")))
        .unwrap_err()
        .into();
    assert!(
        matches!(&error, AgentError::Action { action, .. } if action == "leave_open"),
        "{error:?}"
    );
    assert_eq!(
        frozen(&ticket),
        before,
        "not even the exit action's log line"
    );

    // The entry action fails after exit and row action succeeded: all three are undone.
    let mut ticket = owned();
    ticket.init();
    ticket.state_mut().fail_enter = true;
    let before = frozen(&ticket);
    let error: AgentError = ticket
        .cmd(TicketEvent::Start.with(by("ada")))
        .unwrap_err()
        .into();
    assert_eq!(
        error.to_string(),
        "action `enter_working` failed: entry refused"
    );
    assert_eq!(frozen(&ticket), before);

    // The row's action fails, or panics.
    let mut ticket = working();
    let before = frozen(&ticket);
    let error: AgentError = ticket.cmd(TicketEvent::FailHere).unwrap_err().into();
    assert_eq!(error.to_string(), "action `fail` failed: cannot do that");
    assert_eq!(frozen(&ticket), before);
    let error: AgentError = ticket.cmd(TicketEvent::PanicHere).unwrap_err().into();
    let AgentError::Action { error, .. } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(error.kind(), ActionErrorKind::Panicked);
    assert_eq!(frozen(&ticket), before);

    // Bad parameters for the row's action are the action's failure.
    let mut ticket = owned();
    ticket.init();
    let before = frozen(&ticket);
    let error: AgentError = ticket
        .cmd(TicketEvent::Start.with(json!({"by": 7})))
        .unwrap_err()
        .into();
    let AgentError::Action { action, error } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(action, "begin");
    assert_eq!(error.kind(), ActionErrorKind::InvalidParams);
    assert_eq!(frozen(&ticket), before);
}

fn timer_of(directives: &[Directive]) -> (Duration, Signal) {
    match directives {
        [Directive::Schedule { delay, signal }] => (*delay, signal.clone()),
        other => panic!("expected one Schedule, got {other:?}"),
    }
}

#[test]
fn after_rows_arm_a_schedule_on_entry_and_stale_timers_are_ignored() {
    let mut ticket = owned();
    let (delay, first) = timer_of(&ticket.init());
    assert_eq!(delay, Duration::from_secs(10));
    assert_eq!(first.signal_type, TIMEOUT_SIGNAL);
    assert_eq!(first.data, json!({"state": "Open", "generation": 0}));
    assert!(ticket.init().is_empty(), "init is idempotent");

    // Re-entering Open (a self-transition) arms a new timer; the first one is now stale.
    let (_, second) = timer_of(&ticket.cmd(TicketEvent::Poke).unwrap());
    assert_eq!(second.data, json!({"state": "Open", "generation": 1}));
    let before = frozen(&ticket);
    assert!(
        ticket.handle_signal(&first).is_empty(),
        "a stale timer is ignored"
    );
    assert_eq!(frozen(&ticket), before);

    // The current one fires the `after` row.
    assert!(ticket.handle_signal(&second).is_empty());
    assert_eq!(ticket.fsm_state(), TicketState::Rejected);

    // A timer armed in a state the machine has left is ignored too.
    let mut ticket = owned();
    let (_, timer) = timer_of(&ticket.init());
    ticket.cmd(TicketEvent::Start.with(by("ada"))).unwrap();
    assert!(ticket.handle_signal(&timer).is_empty());
    assert_eq!(ticket.fsm_state(), TicketState::Working);
}

#[test]
fn terminal_states_are_success_or_failure_and_no_event_leaves_them() {
    let mut ticket = working();
    ticket
        .cmd(TicketEvent::Finish.with(json!({"progress": 100})))
        .unwrap();
    let snapshot = ticket.snapshot();
    assert_eq!(snapshot.status, Status::Success);
    assert!(snapshot.done());
    assert_eq!(snapshot.result, Some(json!({"state": "Closed"})));
    let before = frozen(&ticket);
    assert_eq!(
        ticket.cmd(TicketEvent::Reject).unwrap_err().to_string(),
        "invalid transition: state `Closed` has no row for event `reject`; it accepts no events"
    );
    assert_eq!(frozen(&ticket), before);

    let mut ticket = working();
    ticket.cmd(TicketEvent::Reject).unwrap();
    let snapshot = ticket.snapshot();
    assert_eq!(snapshot.status, Status::Failure);
    assert!(snapshot.done());
}

#[test]
fn signals_reach_events_through_routes_with_their_data() {
    let mut ticket = owned();
    let directives = ticket.handle_signal(&Signal::new("ticket.start", by("lin")));
    assert!(
        directives
            .iter()
            .all(|d| matches!(d, Directive::Schedule { .. })),
        "{directives:?}"
    );
    assert_eq!(ticket.fsm_state(), TicketState::Working);
    assert_eq!(ticket.state().log[1], "begin by lin");
    assert_eq!(
        ticket.state().audits,
        1,
        "`ticket.**` reached the plain action too"
    );

    // Bad parameters through a signal: an error directive, the machine does not move.
    let mut ticket = owned();
    ticket.init();
    let directives = ticket.handle_signal(&Signal::new("ticket.start", json!({"by": false})));
    assert_eq!(ticket.fsm_state(), TicketState::Open);
    assert!(
        directives.iter().any(|d| matches!(
            d.as_error(),
            Some(AgentError::Action { action, error }) if action == "begin" && error.kind() == ActionErrorKind::InvalidParams
        )),
        "{directives:?}"
    );
}

#[test]
fn an_unknown_event_names_the_events_and_actions() {
    let mut ticket = owned();
    ticket.init();
    let before = frozen(&ticket);
    let directives = ticket.cmd(Instruction::new("close", json!({})));
    let [Directive::Error { error, .. }] = directives.as_slice() else {
        panic!("{directives:?}")
    };
    assert_eq!(
        error.to_string(),
        "unknown event `close`; this agent's events are: `start`, `poke`, `finish`, `fail_here`, `panic_here`, `reject`; its actions are: `audit`"
    );
    assert_eq!(frozen(&ticket), before);
}

#[test]
fn generated_enums_use_the_dsl_names() {
    assert_eq!(TicketState::Working.to_string(), "Working");
    assert_eq!(TicketEvent::FailHere.to_string(), "fail_here");
    assert_eq!(
        TicketEvent::from_name("panic_here"),
        Some(TicketEvent::PanicHere)
    );
    assert_eq!(TicketState::default(), TicketState::Open);
    assert_eq!(
        TicketState::ALL,
        [
            TicketState::Open,
            TicketState::Closed,
            TicketState::Rejected,
            TicketState::Working
        ]
    );
    assert_eq!(
        serde_json::to_value(TicketEvent::FailHere).unwrap(),
        "fail_here"
    );
    assert_eq!(
        serde_json::from_value::<TicketState>(json!("Closed")).unwrap(),
        TicketState::Closed
    );
    let error = serde_json::from_value::<TicketState>(json!("Done")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown state `Done` of agent `Ticket`; expected one of: `Open`, `Closed`, `Rejected`, `Working`"
    );
}

#[test]
fn checkpoints_keep_the_machine_where_it_was() {
    let mut ticket = owned();
    ticket.init();
    ticket.cmd(TicketEvent::Poke).unwrap();
    ticket.cmd(TicketEvent::Start.with(by("ada"))).unwrap();
    let json = serde_json::to_value(&ticket).unwrap();
    assert_eq!(
        json["strategy"],
        json!({"state": "Working", "started": true, "entered": true, "generation": 2})
    );
    let mut thawed: Agent<Ticket> = serde_json::from_value(json).unwrap();
    assert_eq!(thawed.fsm_state(), TicketState::Working);
    assert!(thawed.init().is_empty(), "a thawed agent re-arms nothing");
    assert_eq!(thawed.snapshot(), ticket.snapshot());
}

#[test]
fn the_machine_is_on_the_generated_type_as_diagrams() {
    assert!(
        TicketState::MERMAID.contains("    Open --> Working: start [is_urgent] / begin_urgent\n"),
        "{}",
        TicketState::MERMAID
    );
    assert!(TicketState::MERMAID.contains("    Open --> Rejected: after 10s\n"));
    assert!(TicketState::DOT.starts_with("digraph Ticket {"));
    assert!(TicketState::DOT.contains("Rejected [shape=doublecircle, color=red];"));
}

/// The transition function (`FsmSpec::transition`, which parallel regions and tools call)
/// and the typed command (which compiles each row's work into that row's arm of the same
/// generated `match`) decide the same step in every state for every event.
#[test]
fn the_transition_function_and_the_command_agree_on_every_state_and_event() {
    use stratagem::FsmSpec;
    use stratagem::strategy::fsm::Step;

    let at = |state: TicketState| {
        let mut ticket = working();
        match state {
            TicketState::Open => ticket = owned(),
            TicketState::Working => {}
            TicketState::Closed => {
                ticket
                    .cmd(TicketEvent::Finish.with(json!({ "progress": 100 })))
                    .unwrap();
            }
            TicketState::Rejected => {
                ticket.cmd(TicketEvent::Reject).unwrap();
            }
        }
        assert_eq!(ticket.fsm_state(), state);
        ticket
    };
    for &state in TicketState::ALL {
        for &event in TicketEvent::ALL {
            // Parameters each guard and action can read (a guard holding and not), and one
            // that a guard cannot read.
            let all = [
                json!(null),
                by("ada"),
                json!({ "progress": 100 }),
                json!({ "progress": 5 }),
                json!(7),
            ];
            for params in all {
                let mut ticket = at(state);
                let step = Ticket::transition(ticket.state(), state, event, &params);
                let before = frozen(&ticket);
                let result = ticket.cmd(event.with(params.clone()));
                let moved_to = ticket.fsm_state();
                let case = format!("{state} {event} {params}: {step:?} {result:?}");
                match (step, result) {
                    (Step::Fire(_, to), Ok(_)) => assert_eq!(moved_to, to, "{case}"),
                    (Step::Stay(_), Ok(_)) => assert_eq!(moved_to, state, "{case}"),
                    // The row's actions failed, or a guard could not read the parameters:
                    // nothing changed.
                    (
                        Step::Fire(..) | Step::Stay(_) | Step::GuardFailed(_),
                        Err(FsmError::Failed(_)),
                    ) => {
                        assert_eq!(frozen(&ticket), before, "{case}")
                    }
                    (Step::Rejected, Err(FsmError::GuardRejected { .. }))
                    | (Step::Invalid, Err(FsmError::InvalidTransition { .. })) => {
                        assert_eq!(frozen(&ticket), before, "{case}")
                    }
                    _ => panic!("the function and the command disagree: {case}"),
                }
            }
        }
    }
}
