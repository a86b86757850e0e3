//! One question through all eight reasoning strategies, each trace printed compactly.
//!
//! ```text
//! cargo run --example reasoning                       # offline, on scripted models
//! cargo run --example reasoning -- --base-url http://127.0.0.1:11434/v1 --model llama3.2
//!         [--question "..."]                          # a real endpoint (key: $OPENAI_API_KEY)
//! ```
//!
//! Offline, each strategy gets a scripted model that answers its prompts, so the real machines
//! run (Tree of Thoughts' frontier calls, Graph of Thoughts' rounds, TRM's refinements,
//! Adaptive's choice) without a network.

use std::sync::Arc;

use stratagem::ai::{
    AiResult, LanguageModel, ModelTable, OpenAiCompatible, ScriptedModel, Trace, TreeSearch,
};
use stratagem::ai::{AiRunner, GraphSearch};
use stratagem::prelude::*;

const QUESTION: &str = "A farmer has 17 sheep and all but 9 run away. How many are left?";

/// Reasons and acts (no tools here: it simply answers).
#[agent(strategy = React)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct ReAct;

/// Thinks step by step.
#[agent(strategy = ChainOfThought)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Cot;

/// Thinks in terse drafts.
#[agent(strategy = ChainOfDraft)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Cod;

/// Searches a tree of thoughts.
#[agent(strategy = TreeOfThoughts, branching_factor = 2, max_depth = 2, beam_width = 1)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Tot;

/// Generates, connects and merges thoughts.
#[agent(strategy = GraphOfThoughts, branching_factor = 3, max_depth = 1)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Got;

/// Searches within one answer.
#[agent(strategy = AlgorithmOfThoughts)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Aot;

/// Refines its answer until confident.
#[agent(strategy = Trm, act_threshold = 0.9, max_supervision_steps = 3)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Refiner;

/// Lets the question choose.
#[agent(strategy = Adaptive, available_strategies = [cod, cot, tot])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Chooser;

/// The scripted model of each strategy (offline only).
fn script(strategy: &str) -> ScriptedModel {
    let s = ScriptedModel::new();
    match strategy {
        "react" => s.answer("9 are left: \"all but 9\" means 9 stayed."),
        "cot" => s.answer(
            "Step 1: \"All but 9 run away\" means every sheep except 9 left.\nStep 2: So the 9 stay.\nConclusion: 9",
        ),
        // Adaptive judges this question simple and picks Chain of Draft.
        "cod" | "adaptive" => s.answer("all but 9 leave\n9 stay\n#### 9"),
        "tot" => s
            .when("candidate 1 of 2 for step 1", "Subtract: 17 - 9 = 8 ran away")
            .when("candidate 2 of 2 for step 1", "Read it: all but 9 ran away, so 9 stayed")
            .when("Proposed step 1: Subtract", "Score: 3")
            .when("Proposed step 1: Read it", "Score: 9")
            .when("candidate 1 of 2 for step 2", "So 9 sheep are left")
            .when("candidate 2 of 2 for step 2", "So 8 sheep are left")
            .when("Proposed step 2: So 9", "Score: 9")
            .when("Proposed step 2: So 8", "Score: 1"),
        "got" => s
            .when("thought 1 of 3", "The phrase \"all but 9\" names who stays\nScore: 8")
            .when("thought 2 of 3", "17 - 9 = 8 is the number that ran away\nScore: 6")
            .when("thought 3 of 3", "Sheep do not come back in this story\nScore: 3")
            .when("Which thoughts belong together?", "Group: 1, 2")
            .when("Thoughts to merge:\n[1] The phrase", "8 ran away and 9 stayed, so 9 are left\nScore: 9")
            .when("Thoughts to merge:", "9 sheep are left"),
        "aot" => s.answer(
            "Try: 17 - 9 = 8. But the question asks who is left, not who ran, backtrack.\nTry: all but 9 ran, so 9 stayed. Reached it.\nAnswer: 9",
        ),
        _ => s
            .answer("Answer: 8\nConfidence: 0.6")
            .answer("Critique: 8 ran away; the question asks how many are left.\nAnswer: 9\nConfidence: 0.95"),
    }
}

fn print_tree(tree: &TreeSearch) {
    for node in tree.nodes.iter().skip(1) {
        let score = node.score.map_or("-".to_string(), |s| format!("{s:.1}"));
        println!(
            "    {}[{}] {:?} score {score}: {}",
            "  ".repeat(node.depth as usize - 1),
            node.id,
            node.status,
            node.thought
        );
    }
}

fn print_graph(graph: &GraphSearch) {
    for node in graph.nodes.iter().skip(1) {
        println!("    [{}] {:?}: {}", node.id, node.origin, node.thought);
    }
    let edges: Vec<String> = graph
        .edges
        .iter()
        .map(|e| format!("{}->{} {:?}", e.from, e.to, e.kind))
        .collect();
    println!("    edges: {}", edges.join(", "));
}

fn print(name: &str, result: &AiResult) {
    println!(
        "\n{name}: {} ({} calls, {} tokens, {})",
        result.answer.as_deref().unwrap_or("(no answer)"),
        result.llm_calls,
        result.usage.total_tokens,
        result.reason.as_str()
    );
    if let Some(choice) = &result.adaptive {
        println!("    chose {}: {}", choice.strategy, choice.reason);
    }
    match &result.trace {
        Some(Trace::Tree(tree)) => print_tree(tree),
        Some(Trace::Graph(graph)) => print_graph(graph),
        Some(Trace::Refinement(r)) => {
            for (i, draft) in r.drafts.iter().enumerate() {
                let critique = draft.critique.as_deref().unwrap_or("-");
                println!(
                    "    draft {} (confidence {:.2}): {} | critique: {critique}",
                    i + 1,
                    draft.confidence,
                    draft.answer
                );
            }
        }
        None => {
            for (i, step) in result.reasoning.iter().enumerate() {
                println!("    {}. {step}", i + 1);
            }
        }
    }
}

struct Args {
    base_url: Option<String>,
    model: String,
    question: String,
}

fn args() -> Result<Args, String> {
    let mut args = Args {
        base_url: None,
        model: "llama3.2".to_string(),
        question: QUESTION.to_string(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("`{name}` needs a value"));
        match flag.as_str() {
            "--base-url" => args.base_url = Some(value("--base-url")?),
            "--model" => args.model = value("--model")?,
            "--question" => args.question = value("--question")?,
            "-h" | "--help" => {
                return Err(
                    "usage: reasoning [--base-url URL --model ID [--question TEXT]]".into(),
                );
            }
            other => return Err(format!("unknown argument `{other}`; try `--help`")),
        }
    }
    if args.base_url.is_none() && args.question != QUESTION {
        return Err("`--question` needs a real model: add `--base-url` and `--model` (offline, the scripted models only know their own question)".into());
    }
    Ok(args)
}

/// The runner for one strategy: the real endpoint, or that strategy's script.
fn runner(args: &Args, strategy: &str) -> AiRunner {
    let provider: Arc<dyn LanguageModel> = match &args.base_url {
        Some(url) => Arc::new(OpenAiCompatible::new(url).api_key_env("OPENAI_API_KEY")),
        None => Arc::new(script(strategy)),
    };
    AiRunner::new(ModelTable::new().alias("fast", provider, &args.model))
}

macro_rules! ask {
    ($args:expr, $agent:ty, $strategy:literal) => {
        match <$agent>::new()
            .ask(&runner($args, $strategy), &$args.question)
            .await
        {
            Ok(answer) => print($strategy, &answer.result),
            Err(error) => println!("\n{}: failed: {error}", $strategy),
        }
    };
}

#[tokio::main]
async fn main() {
    let args = match args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    match &args.base_url {
        Some(url) => println!("model: `{}` at {url}", args.model),
        None => println!("model: scripted (offline; pass --base-url and --model for a real one)"),
    }
    println!("question: {}", args.question);
    ask!(&args, ReAct, "react");
    ask!(&args, Cot, "cot");
    ask!(&args, Cod, "cod");
    ask!(&args, Tot, "tot");
    ask!(&args, Got, "got");
    ask!(&args, Aot, "aot");
    ask!(&args, Refiner, "trm");
    ask!(&args, Chooser, "adaptive");
}
