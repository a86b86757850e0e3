//! The search strategies (ToT, GoT, TRM), AoT and Adaptive driven through `cmd` and through
//! the in-process runner on the scripted model.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::*;
use crate::action::ActionEntry;
use crate::agent::{Agent, AgentSpec};
use crate::directive::Directive;
use crate::instruction::Instruction;
use crate::snapshot::Status;
use crate::strategy::Strategy;

macro_rules! agent {
    ($name:ident, $strategy:ty, $config:expr) => {
        agent!($name, $strategy, $config, &NoHooks);
    };
    ($name:ident, $strategy:ty, $config:expr, $hooks:expr) => {
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        struct $name;
        impl AgentSpec for $name {
            const NAME: &'static str = stringify!($name);
            type Strategy = $strategy;
            fn actions() -> &'static [ActionEntry<Self>] {
                &[]
            }
        }
        impl AiAgent for $name {
            const AI: AiConfig = $config;
            fn hooks() -> &'static dyn StepHooks<Self> {
                $hooks
            }
        }
    };
}

const TOT: ReasoningConfig = ReasoningConfig {
    branching_factor: 3,
    max_depth: 2,
    beam_width: 1,
    ..ReasoningConfig::DEFAULT
};

agent!(
    Explorer,
    TreeOfThoughts,
    AiConfig::new("fast").reasoning(TOT)
);
agent!(
    Diver,
    TreeOfThoughts,
    AiConfig::new("fast").reasoning(ReasoningConfig {
        traversal: Traversal::Dfs,
        ..TOT
    })
);
agent!(
    Climber,
    TreeOfThoughts,
    AiConfig::new("fast").reasoning(ReasoningConfig {
        traversal: Traversal::BestFirst,
        ..TOT
    })
);
agent!(
    Thrifty,
    TreeOfThoughts,
    AiConfig::new("fast").reasoning(ReasoningConfig {
        max_llm_calls: 4,
        ..TOT
    })
);
agent!(
    Weaver,
    GraphOfThoughts,
    AiConfig::new("fast").reasoning(ReasoningConfig {
        branching_factor: 3,
        max_depth: 2,
        max_nodes: 10,
        ..ReasoningConfig::DEFAULT
    })
);
agent!(
    Picker,
    GraphOfThoughts,
    AiConfig::new("fast").reasoning(ReasoningConfig {
        aggregation: Aggregation::Best,
        ..ReasoningConfig::DEFAULT
    })
);
agent!(
    Polisher,
    Trm,
    AiConfig::new("fast").reasoning(ReasoningConfig {
        act_threshold: 0.9,
        max_supervision_steps: 2,
        ..ReasoningConfig::DEFAULT
    })
);
agent!(Searcher, AlgorithmOfThoughts, AiConfig::new("fast"));
agent!(
    Chooser,
    Adaptive,
    AiConfig::new("fast").reasoning(ReasoningConfig {
        available_strategies: &[StrategyKind::Cod, StrategyKind::Cot, StrategyKind::Tot],
        branching_factor: 2,
        max_depth: 1,
        beam_width: 1,
        ..ReasoningConfig::DEFAULT
    })
);

static FALLBACK: Hooks<Rescued> = Hooks::new()
    .on_step_start(|_, step| record(format!("start {}", step.number)))
    .on_step_end(|_, step| record(format!("end {}", step.number)))
    .on_error(|_, _| Some("no idea, sorry".to_string()));
agent!(
    Rescued,
    TreeOfThoughts,
    AiConfig::new("fast").reasoning(TOT),
    &FALLBACK
);

static EVENTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn record(event: String) {
    EVENTS.lock().unwrap().push(event);
}

fn runner(model: &ScriptedModel) -> AiRunner {
    let model = std::sync::Arc::new(model.clone());
    AiRunner::new(ModelTable::standard(model, "m", "m"))
}

fn llm_calls(directives: &[Directive]) -> Vec<LlmCall> {
    directives
        .iter()
        .filter_map(|d| match d {
            Directive::Llm(call) => Some((**call).clone()),
            _ => None,
        })
        .collect()
}

fn answer(call: &LlmCall, text: &str) -> Instruction {
    LlmReply::new(call.call_id.clone(), Ok(LlmResponse::text(text))).into_instruction()
}

/// The script of a tree where the second thought of the first step (`B`) is the one to keep,
/// and `B then Y` is the best second step.
fn tree_script() -> ScriptedModel {
    tree_script_on(ScriptedModel::new())
}

fn tree_script_on(mut model: ScriptedModel) -> ScriptedModel {
    for (i, (thought, score)) in [("A", 3), ("B", 9), ("C", 5)].into_iter().enumerate() {
        model = model
            .when(
                format!("No steps yet.\nPropose candidate {} of 3 for step 1", i + 1),
                thought,
            )
            .when(
                format!("Proposed step 1: {thought}\n"),
                format!("Score: {score}"),
            );
    }
    for (i, (thought, score)) in [("B then X", 4), ("B then Y", 8), ("B then Z", 6)]
        .into_iter()
        .enumerate()
    {
        model = model
            .when(
                format!("1. B\nPropose candidate {} of 3 for step 2", i + 1),
                thought,
            )
            .when(
                format!("Proposed step 2: {thought}\n"),
                format!("Score: {score}"),
            );
    }
    model
}

fn tree(result: &AiResult) -> &TreeSearch {
    match result.trace.as_ref() {
        Some(Trace::Tree(tree)) => tree,
        other => panic!("expected a tree, got {other:?}"),
    }
}

#[tokio::test]
async fn tree_of_thoughts_keeps_the_right_branch_in_its_beam() {
    let model = tree_script();
    let mut agent = Agent::new(Explorer);
    let answer = agent.ask(&runner(&model), "Q?").await.unwrap();
    let result = &answer.result;
    assert_eq!(result.reason, Termination::FinalAnswer);
    assert_eq!(result.answer.as_deref(), Some("B then Y"));
    assert_eq!(result.reasoning, ["B", "B then Y"]);
    assert_eq!(result.strategy, Some(StrategyKind::Tot));
    assert_eq!((result.steps, result.llm_calls), (2, 12));
    let tree = tree(result);
    let status = |thought: &str| {
        tree.nodes
            .iter()
            .find(|n| n.thought == thought)
            .map(|n| n.status)
            .unwrap()
    };
    assert_eq!(status("A"), NodeStatus::Pruned);
    assert_eq!(status("B"), NodeStatus::Expanded);
    assert_eq!(status("C"), NodeStatus::Pruned);
    assert_eq!(status("B then Y"), NodeStatus::Open);
    assert_eq!(status("B then Z"), NodeStatus::Pruned);
    assert_eq!(tree.nodes.len(), 7);
    // Nothing was asked twice.
    assert_eq!(model.requests().len(), 12);
    assert_eq!(agent.snapshot().status, Status::Success);
}

#[tokio::test]
async fn depth_first_and_best_first_stop_at_the_first_node_at_max_depth() {
    for traversal in ["dfs", "best_first"] {
        let model = tree_script();
        let result = if traversal == "dfs" {
            Agent::new(Diver).ask(&runner(&model), "Q?").await
        } else {
            Agent::new(Climber).ask(&runner(&model), "Q?").await
        }
        .unwrap()
        .result;
        assert_eq!(result.answer.as_deref(), Some("B then Y"), "{traversal}");
        assert_eq!(result.llm_calls, 12, "{traversal}");
        assert_eq!(tree(&result).best, Some(5), "{traversal}");
    }
}

#[tokio::test]
async fn a_spent_call_budget_ends_with_the_best_so_far() {
    let model = tree_script();
    let result = Agent::new(Thrifty)
        .ask(&runner(&model), "Q?")
        .await
        .unwrap()
        .result;
    assert_eq!(result.reason, Termination::Budget);
    assert_eq!(
        result.llm_calls, 4,
        "two thoughts, each generated and scored"
    );
    assert_eq!(result.answer.as_deref(), Some("B"));
}

#[test]
fn a_frontier_goes_out_in_one_step_and_a_checkpoint_keeps_answered_calls() {
    let mut agent = Agent::new(Explorer);
    let out = agent.cmd(Instruction::new(QUERY, json!("Q?")).with_id("r"));
    let first = llm_calls(&out);
    assert_eq!(first.len(), 3, "the three generations of the root at once");
    assert!(first.iter().all(|c| c.request_id == "r"));
    assert_eq!(
        first.iter().map(|c| c.call_id.as_str()).collect::<Vec<_>>(),
        ["r/llm/1", "r/llm/2", "r/llm/3"]
    );
    // A thought arrives: its evaluation goes out at once, within the same step.
    let out = agent.cmd(answer(&first[1], "B"));
    let eval = llm_calls(&out);
    assert_eq!(eval.len(), 1);
    assert!(
        eval[0]
            .request
            .last_user_message()
            .unwrap()
            .contains("Proposed step 1: B")
    );
    // A reply nobody waits for changes nothing.
    let stale = LlmReply::new("r/llm/99", Ok(LlmResponse::text("x"))).into_instruction();
    assert!(agent.cmd(stale).is_empty());
    // Busy: a second query is refused.
    let out = agent.cmd(Instruction::new(QUERY, json!("again")).with_id("r2"));
    assert!(out.iter().any(|d| d.as_error().is_some()), "{out:?}");

    let saved = serde_json::to_string(&agent).unwrap();
    let mut thawed: Agent<Explorer> = serde_json::from_str(&saved).unwrap();
    let pending = TreeOfThoughts::pending_llm_calls(&thawed);
    let ids: Vec<&str> = pending.iter().map(|c| c.call_id.as_str()).collect();
    assert_eq!(ids, ["r/llm/1", "r/llm/3", "r/llm/4"], "call 2 answered");
    assert_eq!(
        pending[0].request, first[0].request,
        "the same prompt again"
    );
    assert_eq!(thawed.snapshot().status, Status::Waiting);

    // Cancel ends it; late answers are ignored.
    thawed.cmd(Instruction::new(CANCEL, json!(null)));
    assert_eq!(thawed.snapshot().status, Status::Failure);
    assert!(thawed.cmd(answer(&pending[0], "A")).is_empty());
    assert!(TreeOfThoughts::pending_llm_calls(&thawed).is_empty());
}

#[tokio::test]
async fn a_failed_call_fails_the_search_unless_on_error_answers() {
    let model =
        tree_script_on(ScriptedModel::new().when_fail("candidate 2 of 3 for step 1", "HTTP 500"));
    EVENTS.lock().unwrap().clear();
    let result = Agent::new(Rescued)
        .ask(&runner(&model), "Q?")
        .await
        .unwrap()
        .result;
    assert_eq!(result.reason, Termination::Failed);
    assert_eq!(result.answer.as_deref(), Some("no idea, sorry"));
    assert!(result.error.unwrap().contains("HTTP 500"));
    assert_eq!(EVENTS.lock().unwrap().as_slice(), ["start 1"]);

    let err = Agent::new(Explorer)
        .ask(&runner(&model), "Q?")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("HTTP 500"), "{err}");
}

fn graph(result: &AiResult) -> &GraphSearch {
    match result.trace.as_ref() {
        Some(Trace::Graph(graph)) => graph,
        other => panic!("expected a graph, got {other:?}"),
    }
}

fn graph_script() -> ScriptedModel {
    ScriptedModel::new()
        .when("Propose thought 1 of 3", "solar\nScore: 6")
        .when("Propose thought 2 of 3", "wind\nScore: 7")
        .when("Propose thought 3 of 3", "coal\nScore: 1")
}

#[tokio::test]
async fn graph_of_thoughts_connects_and_aggregates_into_one_answer() {
    let model = graph_script()
        .when("[1] solar\n[2] wind\n[3] coal\nWhich", "Group: 1, 2")
        .when(
            "Thoughts to merge:\n[1] solar\n[2] wind\n",
            "renewables\nScore: 8",
        )
        .when("[1] renewables\n[2] coal\nWhich", "Group: 1, 2")
        .when(
            "Thoughts to merge:\n[1] renewables\n[2] coal\n",
            "a mix, renewables first",
        );
    let result = Agent::new(Weaver)
        .ask(&runner(&model), "Energy?")
        .await
        .unwrap()
        .result;
    assert_eq!(result.answer.as_deref(), Some("a mix, renewables first"));
    assert_eq!(result.reasoning, ["renewables", "coal"]);
    assert_eq!(result.llm_calls, 7);
    let graph = graph(&result);
    assert_eq!(graph.nodes.len(), 6);
    assert_eq!(graph.rounds, 2);
    let count = |kind| graph.edges.iter().filter(|e| e.kind == kind).count();
    assert_eq!(
        (
            count(EdgeKind::Generated),
            count(EdgeKind::Connected),
            count(EdgeKind::Aggregated)
        ),
        (3, 2, 4)
    );
    assert_eq!(graph.nodes[4].score, Some(0.8));
    assert_eq!(graph.answer, Some(5));
}

#[tokio::test]
async fn unrelated_thoughts_are_merged_once_at_the_end_and_best_needs_no_merge() {
    let model = graph_script()
        .when("Which thoughts belong together?", "none of them")
        .when(
            "Thoughts to merge:\n[1] solar\n[2] wind\n[3] coal\n",
            "all three",
        );
    let result = Agent::new(Weaver)
        .ask(&runner(&model), "Energy?")
        .await
        .unwrap()
        .result;
    assert_eq!(result.answer.as_deref(), Some("all three"));
    assert_eq!(graph(&result).stage, Stage::Final);

    let result = Agent::new(Picker)
        .ask(&runner(&graph_script()), "Energy?")
        .await
        .unwrap()
        .result;
    assert_eq!(result.answer.as_deref(), Some("wind"));
    assert_eq!(result.llm_calls, 3);
}

fn drafts(result: &AiResult) -> &[Draft] {
    match result.trace.as_ref() {
        Some(Trace::Refinement(r)) => &r.drafts,
        other => panic!("expected drafts, got {other:?}"),
    }
}

#[tokio::test]
async fn trm_stops_at_the_confidence_threshold() {
    let model = ScriptedModel::new()
        .user("What is 6 * 7?")
        .answer("Answer: 40\nConfidence: 0.3")
        .answer("Critique: 6 * 7 is not 40.\nAnswer: 42\nConfidence: 0.95");
    let result = Agent::new(Polisher)
        .ask(&runner(&model), "What is 6 * 7?")
        .await
        .unwrap()
        .result;
    model.assert_finished();
    assert_eq!(result.reason, Termination::FinalAnswer);
    assert_eq!(result.answer.as_deref(), Some("42"));
    let drafts = drafts(&result);
    assert_eq!(drafts.len(), 2);
    assert_eq!(drafts[0].confidence, 0.3);
    assert_eq!(drafts[1].critique.as_deref(), Some("6 * 7 is not 40."));
    assert_eq!(result.reasoning, ["6 * 7 is not 40."]);
    let refine = &model.requests()[1];
    assert!(
        refine
            .last_user_message()
            .unwrap()
            .contains("Current answer: 40")
    );
}

#[tokio::test]
async fn trm_stops_at_the_supervision_cap() {
    let model = ScriptedModel::new()
        .answer("Answer: a\nConfidence: 0.2")
        .answer("Critique: vague\nAnswer: b\nConfidence: 0.4")
        .answer("Critique: still vague\nAnswer: c\nConfidence: 0.5");
    let result = Agent::new(Polisher)
        .ask(&runner(&model), "Hm?")
        .await
        .unwrap()
        .result;
    model.assert_finished();
    assert_eq!(result.reason, Termination::MaxIterations);
    assert_eq!(result.answer.as_deref(), Some("c"));
    assert_eq!(drafts(&result).len(), 3);
}

#[tokio::test]
async fn algorithm_of_thoughts_makes_one_call_with_its_example() {
    let model = ScriptedModel::new().answer(
        "Try: 8 - 5 = 3, 3 - 3 = 0. Backtrack.\nTry: 8 - 5 = 3, 3 / 3 = 1.\nAnswer: (8 - 5) / 3",
    );
    let result = Agent::new(Searcher)
        .ask(&runner(&model), "Make 1 from 3, 5, 8.")
        .await
        .unwrap()
        .result;
    assert_eq!(result.answer.as_deref(), Some("(8 - 5) / 3"));
    assert_eq!(result.reasoning.len(), 2);
    assert!(result.raw.starts_with("Try:"));
    assert!(
        model.requests()[0].messages[0]
            .content
            .contains("backtrack")
    );
}

#[tokio::test]
async fn adaptive_picks_by_complexity_and_runs_the_choice_in_the_request() {
    let model = ScriptedModel::new().answer("capital\n#### Paris");
    let result = Agent::new(Chooser)
        .ask(&runner(&model), "What is the capital of France?")
        .await
        .unwrap()
        .result;
    assert_eq!(result.strategy, Some(StrategyKind::Cod));
    assert_eq!(result.answer.as_deref(), Some("Paris"));
    assert_eq!(result.adaptive.as_ref().unwrap().class, Complexity::Simple);

    let model = ScriptedModel::new().answer("Step 1: density\nConclusion: it is lighter");
    let result = Agent::new(Chooser)
        .ask(
            &runner(&model),
            "Why does ice float on water, and what happens to a lake in winter?",
        )
        .await
        .unwrap()
        .result;
    assert_eq!(result.strategy, Some(StrategyKind::Cot));
    assert_eq!(result.answer.as_deref(), Some("it is lighter"));

    let model = ScriptedModel::new()
        .when("candidate 1 of 2", "stations downtown")
        .when("candidate 2 of 2", "stations everywhere")
        .when("Proposed step 1: stations downtown", "Score: 7")
        .when("Proposed step 1: stations everywhere", "Score: 3");
    let result = Agent::new(Chooser)
        .ask(
            &runner(&model),
            "Compare three designs for a city bike-sharing system, evaluate the trade-offs of each, and plan a rollout strategy.",
        )
        .await
        .unwrap()
        .result;
    assert_eq!(result.strategy, Some(StrategyKind::Tot));
    assert_eq!(result.answer.as_deref(), Some("stations downtown"));
    let choice = result.adaptive.unwrap();
    assert_eq!(choice.class, Complexity::Complex);
    assert!(choice.reason.contains("`tot`"), "{}", choice.reason);
}

#[test]
fn every_strategy_answers_its_reasoning_signal() {
    fn patterns<S: AgentSpec>() -> Vec<String> {
        S::Strategy::signal_routes()
            .into_iter()
            .map(|r| r.pattern.to_string())
            .collect()
    }
    assert!(patterns::<Explorer>().contains(&"reasoning.tot.run".to_string()));
    assert!(patterns::<Weaver>().contains(&"reasoning.got.run".to_string()));
    assert!(patterns::<Chooser>().contains(&"reasoning.adaptive.run".to_string()));
    let mut agent = Agent::new(Polisher);
    let signal = crate::signal::Signal::new("reasoning.trm.run", json!({"query": "Hm?"}));
    let out = agent.handle_signal(&signal);
    assert_eq!(llm_calls(&out).len(), 1);
}
