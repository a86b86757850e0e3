//! AI agents written with `#[agent(strategy = React|ChainOfThought|ChainOfDraft, ...)]`, run
//! in-process on the scripted model.

use std::sync::Arc;

use stratagem::ai::{
    AiAgent, AiConfig, AiRunner, ModelTable, ScriptedModel, StepHooks, Termination,
};
use stratagem::prelude::*;

/// Files expenses.
#[agent(
    strategy = React,
    model = "capable",
    system = "You file expenses.",
    tools = [record, check_budget],
    actions [reset],
    max_iterations = 5,
    temperature = 0.5,
    max_tokens = 256,
    routes { "expenses.reset" => reset },
    hooks = STOP_AT_LIMIT
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Expenses {
    total: u32,
    items: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Item {
    what: String,
    amount: u32,
}

/// Records an expense.
#[action]
fn record(expenses: &mut Expenses, item: Item) -> Outcome {
    expenses.total += item.amount;
    expenses.items.push(item.what);
    Outcome::new().reply(json!({"total": expenses.total}))
}

/// Checks the budget (slowly: it asks another service).
#[action]
async fn check_budget(_expenses: &Expenses) -> Outcome {
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    Outcome::new().reply(json!({"left": 100}))
}

/// Starts over.
#[action]
fn reset(expenses: &mut Expenses) {
    *expenses = Expenses::default();
}

static STOP_AT_LIMIT: stratagem::ai::Hooks<Expenses> =
    stratagem::ai::Hooks::new().stop_condition(|e: &Expenses, _| e.total >= 1000);

/// Thinks aloud.
#[agent(strategy = ChainOfThought, model = "fast")]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Thinker {}

/// Drafts.
#[agent(strategy = ChainOfDraft)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Drafter {}

fn runner(model: ScriptedModel) -> AiRunner {
    AiRunner::new(ModelTable::standard(Arc::new(model), "small", "large"))
}

#[test]
fn the_macro_generates_the_configuration() {
    let expected = AiConfig::new("capable")
        .system("You file expenses.")
        .tools(&["record", "check_budget"])
        .max_iterations(5)
        .temperature(0.5)
        .max_tokens(256);
    assert_eq!(Expenses::AI, expected);
    assert_eq!(Thinker::AI, AiConfig::new("fast"));
    assert_eq!(Drafter::AI, AiConfig::DEFAULT);
    let names: Vec<&str> = Expenses::actions().iter().map(|a| a.name).collect();
    assert_eq!(
        names,
        ["reset", "record", "check_budget"],
        "tools join the actions"
    );
    let tools: Vec<String> = Expenses::tool_specs()
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(tools, ["record", "check_budget"]);
    assert_eq!(
        Expenses::tool_specs()[0].parameters["required"],
        json!(["what", "amount"])
    );
    let hooks: &dyn StepHooks<Expenses> = Expenses::hooks();
    let run_state = Expenses {
        total: 1000,
        items: vec![],
    };
    let mut agent = Expenses::new();
    agent.cmd(Instruction::new(stratagem::ai::QUERY, json!("q")));
    let run = agent.strategy_state().run.clone().unwrap();
    assert!(hooks.stop_condition(&run_state, &run));
}

#[tokio::test]
async fn a_react_agent_runs_with_sync_and_async_tools() {
    let model = ScriptedModel::parse(
        r#"
        user "File a taxi ride of 30"
        call check_budget
        call record {"what": "taxi", "amount": 30}
        answer "Filed: taxi, 30. Total 30."
        "#,
    )
    .unwrap();
    let runner = runner(model.clone());
    let mut expenses = Expenses::new();
    let answer = expenses
        .ask(&runner, "File a taxi ride of 30")
        .await
        .unwrap();
    assert_eq!(answer.answer(), Some("Filed: taxi, 30. Total 30."));
    assert_eq!(expenses.state().items, ["taxi"]);
    model.assert_finished();
    let request = &model.requests()[0];
    assert_eq!(
        request.model, "large",
        "`capable` resolved through the table"
    );
    assert_eq!(request.temperature, Some(0.5));
    assert_eq!(request.max_tokens, Some(256));
    // Routes and plain actions still work beside the strategy.
    expenses.handle_signal(&Signal::new("expenses.reset", json!(null)));
    assert_eq!(expenses.state().total, 0);
}

#[tokio::test]
async fn the_stop_condition_hook_from_the_macro_ends_the_request() {
    let model = ScriptedModel::new()
        .call("record", json!({"what": "laptop", "amount": 1500}))
        .answer("never reached");
    let mut expenses = Expenses::new();
    let answer = expenses
        .ask(&runner(model.clone()), "buy a laptop")
        .await
        .unwrap();
    assert_eq!(answer.result.reason, Termination::StopCondition);
    assert_eq!(model.remaining(), 1);
}

#[tokio::test]
async fn chain_of_thought_and_draft_agents_answer_in_one_call() {
    let model = ScriptedModel::new().answer("Step 1: 2 + 2 = 4\nConclusion: 4");
    let mut thinker = Thinker::new();
    let answer = thinker.ask(&runner(model), "2 + 2?").await.unwrap();
    assert_eq!(answer.answer(), Some("4"));
    assert_eq!(answer.result.reasoning, ["2 + 2 = 4"]);

    let model = ScriptedModel::new().answer("2+2\n#### 4");
    let mut drafter = Drafter::new();
    let answer = drafter.ask(&runner(model), "2 + 2?").await.unwrap();
    assert_eq!(answer.answer(), Some("4"));
}
