//! A Direct agent defined with the macros, end to end: actions, routes, errors, async actions.

use std::time::Duration;

use stratagem::prelude::*;
use stratagem::{ActionErrorKind, AgentError, ErrorContext, Runner};

#[derive(Debug, thiserror::Error)]
enum LedgerError {
    #[error("insufficient funds: balance {balance}, asked {asked}")]
    Insufficient { balance: i64, asked: i64 },
}

/// Keeps a balance and a history of operations.
#[agent(
    strategy = Direct,
    tick = 250ms,
    actions [deposit, withdraw, explode, note, reset, audit, fetch_rate],
    routes {
        "ledger.deposit" => deposit
        "ledger.withdraw" => withdraw priority 10
        "ledger.**" => audit
    }
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Ledger {
    balance: i64,
    history: Vec<String>,
    audits: u32,
    rate: Option<f64>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
struct Amount {
    amount: i64,
}

/// Adds money.
#[action]
fn deposit(ledger: &mut Ledger, params: Amount) {
    ledger.balance += params.amount;
    ledger.history.push(format!("+{}", params.amount));
}

#[action(description = "Takes money out, if there is enough")]
fn withdraw(ledger: &mut Ledger, params: Amount) -> Result<(), LedgerError> {
    // Mutate first, fail after: the failure must still leave the state untouched.
    ledger.history.push(format!("-{}", params.amount));
    ledger.balance -= params.amount;
    if ledger.balance < 0 {
        return Err(LedgerError::Insufficient {
            balance: ledger.balance + params.amount,
            asked: params.amount,
        });
    }
    Ok(())
}

#[action]
fn explode(ledger: &mut Ledger) {
    ledger.balance = 1_000_000;
    panic!("the action blew up");
}

#[action]
fn note(ledger: &Ledger) -> Outcome {
    Outcome::new().emit(Signal::new(
        "ledger.noted",
        json!({ "balance": ledger.balance }),
    ))
}

#[action]
fn reset() -> Outcome {
    Outcome::new().set(json!({"balance": 0, "history": []}))
}

#[action]
fn audit(ledger: &mut Ledger) {
    ledger.audits += 1;
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Currency {
    code: String,
}

#[action(timeout = 2s, max_retries = 0)]
async fn fetch_rate(ledger: &Ledger, params: Currency) -> Result<Outcome, stratagem::ActionError> {
    tokio::time::sleep(Duration::from_millis(10)).await;
    match params.code.as_str() {
        "EUR" => Ok(Outcome::new().set(json!({"rate": 1.25 + ledger.balance as f64 / 400.0}))),
        other => Err(stratagem::ActionError::new(format!(
            "no rate for `{other}`"
        ))),
    }
}

fn ins(action: &str, params: serde_json::Value) -> Instruction {
    Instruction::new(action, params).with_id(action)
}

#[test]
fn instructions_run_in_order_each_seeing_the_previous_state() {
    let mut agent = Ledger::new();
    let out = agent.cmd([
        ins("deposit", json!({"amount": 10})),
        ins("withdraw", json!({"amount": 4})),
        ins("deposit", json!({"amount": 1})),
    ]);
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(agent.state().balance, 7);
    assert_eq!(agent.state().history, ["+10", "-4", "+1"]);
}

#[test]
fn a_failing_instruction_changes_nothing_and_the_batch_continues() {
    let mut agent = Ledger::new();
    let out = agent.cmd([
        ins("deposit", json!({"amount": 5})),
        ins("withdraw", json!({"amount": 50})),
        ins("deposit", json!({"amount": 1})),
    ]);
    assert_eq!(agent.state().balance, 6);
    assert_eq!(
        agent.state().history,
        ["+5", "+1"],
        "the failed withdraw left no trace"
    );
    let [Directive::Error { error, context }] = out.as_slice() else {
        panic!("expected exactly one error directive, got {out:?}");
    };
    assert_eq!(
        context,
        &ErrorContext::Instruction {
            id: "withdraw".into(),
            action: "withdraw".into()
        }
    );
    let AgentError::Action { action, error } = error else {
        panic!("{error:?}");
    };
    assert_eq!(action, "withdraw");
    assert_eq!(error.message(), "insufficient funds: balance 5, asked 50");
    assert!(matches!(
        error.downcast_ref::<LedgerError>(),
        Some(LedgerError::Insufficient { asked: 50, .. })
    ));
}

#[test]
fn a_panicking_action_is_a_failing_action() {
    let mut agent = Ledger::new();
    let out = agent.cmd([
        ins("deposit", json!({"amount": 3})),
        ins("explode", json!(null)),
        ins("deposit", json!({"amount": 4})),
    ]);
    assert_eq!(
        agent.state().balance,
        7,
        "the panic's mutation was discarded"
    );
    assert_eq!(out.len(), 1);
    let Some(AgentError::Action { error, .. }) = out[0].as_error() else {
        panic!("{out:?}");
    };
    assert_eq!(error.kind(), ActionErrorKind::Panicked);
    assert!(error.message().contains("the action blew up"), "{error}");
}

#[test]
fn unknown_actions_and_bad_parameters_are_errors() {
    let mut agent = Ledger::new();
    let out = agent.cmd([
        ins("depositt", json!({"amount": 3})),
        ins("deposit", json!({"amount": "three"})),
    ]);
    assert_eq!(agent.state(), &Ledger::default());
    assert_eq!(out.len(), 2);
    assert!(
        matches!(out[0].as_error(), Some(AgentError::UnknownAction { name, known }) if name == "depositt" && known.contains(&"deposit".to_string())),
        "{out:?}"
    );
    let Some(AgentError::Action { error, .. }) = out[1].as_error() else {
        panic!("{out:?}");
    };
    assert_eq!(error.kind(), ActionErrorKind::InvalidParams);
}

#[test]
fn outcomes_carry_directives_and_state_ops() {
    let mut agent = Ledger::new();
    agent.cmd(ins("deposit", json!({"amount": 9})));
    let out = agent.cmd(ins("note", json!({})));
    let [Directive::Emit(signal)] = out.as_slice() else {
        panic!("{out:?}");
    };
    assert_eq!(signal.signal_type, "ledger.noted");
    assert_eq!(signal.data, json!({"balance": 9}));

    agent.cmd(ins("reset", json!(null)));
    assert_eq!(agent.state().balance, 0);
    assert!(agent.state().history.is_empty());
}

#[test]
fn signals_run_every_matching_route_most_specific_first() {
    let mut agent = Ledger::new();
    let out = agent.handle_signal(&Signal::new("ledger.deposit", json!({"amount": 2})));
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(agent.state().balance, 2);
    assert_eq!(agent.state().audits, 1, "`ledger.**` matched too");

    let out = agent.handle_signal(&Signal::new("ledger.closed", json!({})));
    assert!(out.is_empty());
    assert_eq!(agent.state().audits, 2);

    let out = agent.handle_signal(&Signal::new("payroll.run", json!({})));
    assert!(
        matches!(out.as_slice(), [Directive::Error { error: AgentError::NoRoute { signal_type }, context: ErrorContext::Signal { .. } }] if signal_type == "payroll.run"),
        "{out:?}"
    );
}

#[test]
fn generated_metadata() {
    use stratagem::AgentSpec;
    assert_eq!(Ledger::NAME, "Ledger");
    assert_eq!(Ledger::TICK_INTERVAL, Some(Duration::from_millis(250)));
    assert_eq!(
        Ledger::DESCRIPTION,
        "Keeps a balance and a history of operations."
    );
    let spec = Ledger::new().action_spec("withdraw").unwrap();
    assert_eq!(spec.description, "Takes money out, if there is enough");
    assert_eq!(spec.parameters["additionalProperties"], false);
    assert_eq!(spec.parameters["properties"]["amount"]["type"], "integer");
    assert_eq!(
        Ledger::new().action_spec("deposit").unwrap().description,
        "Adds money."
    );
    let names: Vec<_> = Ledger::actions().iter().map(|a| a.name).collect();
    assert_eq!(
        names,
        [
            "deposit",
            "withdraw",
            "explode",
            "note",
            "reset",
            "audit",
            "fetch_rate"
        ]
    );
    assert!(Ledger::action("fetch_rate").unwrap().is_async());
    assert_eq!(
        Ledger::action("fetch_rate").unwrap().exec.timeout,
        Duration::from_secs(2)
    );
    assert_eq!(Ledger::action("fetch_rate").unwrap().exec.max_retries, 0);
}

#[tokio::test(start_paused = true)]
async fn async_actions_run_in_the_runner_and_their_outcome_is_applied() {
    let mut agent = Ledger::new();
    agent.cmd(ins("deposit", json!({"amount": 100})));
    let started = agent.cmd(ins("fetch_rate", json!({"code": "EUR"})));
    assert!(matches!(
        started.as_slice(),
        [Directive::RunInstruction { .. }]
    ));
    assert_eq!(agent.snapshot().status, Status::Waiting);
    let out = Runner::new().settle(&mut agent, started).await;
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(agent.state().rate, Some(1.5));
    assert_eq!(agent.snapshot().status, Status::Idle);

    let out = Runner::new()
        .run(&mut agent, ins("fetch_rate", json!({"code": "XYZ"})))
        .await;
    let Some(AgentError::Action { error, .. }) = out[0].as_error() else {
        panic!("{out:?}");
    };
    assert_eq!(error.message(), "no rate for `XYZ`");
    assert_eq!(agent.state().rate, Some(1.5));
}

#[test]
fn agents_round_trip_through_serde() {
    let mut agent = Ledger::new().with_id("ledger-1");
    agent.cmd(ins("deposit", json!({"amount": 5})));
    let json = serde_json::to_value(&agent).unwrap();
    assert_eq!(json["agent"], "Ledger");
    assert_eq!(json["id"], "ledger-1");
    assert_eq!(json["state"]["balance"], 5);
    let back: Agent<Ledger> = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(back, agent);

    let mut wrong = json;
    wrong["agent"] = json!("Order");
    let err = serde_json::from_value::<Agent<Ledger>>(wrong).unwrap_err();
    assert_eq!(
        err.to_string(),
        "this checkpoint holds agent `Order`, not `Ledger`"
    );
}
