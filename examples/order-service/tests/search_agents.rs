//! The search agents of `agents/reasoning.agent`: the file's options become the configuration,
//! and the agents run on the scripted model.

use std::sync::Arc;

use order_service::agents::{Chooser, Planner};
use stratagem::ai::{AiAgent, AiRunner, ModelTable, ScriptedModel, StrategyKind, Traversal};
use stratagem::prelude::*;

fn runner(model: ScriptedModel) -> AiRunner {
    AiRunner::new(ModelTable::standard(Arc::new(model), "small", "large"))
}

#[test]
fn the_file_options_become_the_configuration() {
    let tot = Planner::AI.reasoning;
    assert_eq!(
        (tot.branching_factor, tot.max_depth, tot.beam_width),
        (2, 1, 1)
    );
    assert_eq!(
        (tot.traversal, tot.max_llm_calls),
        (Traversal::BestFirst, 20)
    );
    let adaptive = Chooser::AI.reasoning;
    assert_eq!(
        adaptive.available_strategies,
        [StrategyKind::Cod, StrategyKind::Tot]
    );
    assert_eq!(adaptive.complexity_thresholds, (0.3, 0.6));
}

#[tokio::test]
async fn the_planner_keeps_its_best_thought_and_the_chooser_picks() {
    let model = ScriptedModel::new()
        .when("candidate 1 of 2", "walk")
        .when("candidate 2 of 2", "fly")
        .when("Proposed step 1: walk", "Score: 4")
        .when("Proposed step 1: fly", "Score: 8");
    let answer = Planner::new()
        .ask(&runner(model), "How to cross?")
        .await
        .unwrap();
    assert_eq!(answer.answer(), Some("fly"));
    assert_eq!(answer.result.llm_calls, 4);

    let model = ScriptedModel::new().answer("short\n#### yes");
    let answer = Chooser::new()
        .ask(&runner(model), "Is it on?")
        .await
        .unwrap();
    assert_eq!(answer.result.strategy, Some(StrategyKind::Cod));
    assert_eq!(answer.answer(), Some("yes"));
}
