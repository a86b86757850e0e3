//! The search strategies' overhead per LLM call handled, at three search sizes each.
//!
//! - `reasoning/tot_<nodes>`: Tree of Thoughts (breadth first, 5 branches, beam 4) to depth
//!   2, 3 and 6 (25, 45 and 105 nodes; every node costs a generation and an evaluation call).
//!   `machine` feeds synthetic replies straight into `cmd` (a batch per step, as the hosts do):
//!   the machine, its prompts, the directives, the reply round trip. `runner` runs the same
//!   search through `agent.ask` on the scripted model (`when` rules), as tests and programs do.
//!   `hand_written` is the same search as a plain loop with no framework: the same prompts as
//!   `LlmRequest`s, the same synthetic replies, the same score parsing and beam.
//! - `reasoning/got_<nodes>`: Graph of Thoughts with 16, 32 and 64 thoughts merged in pairs
//!   round after round (31, 63 and 127 nodes), `machine` only.
//!
//! Throughput is LLM calls, so criterion reports the time per call handled; the goal is under
//! 20 µs per call and flat across sizes (linear in nodes). No I/O anywhere.
//! `cargo bench -p stratagem-benches --bench search_overhead`; results are in BENCHMARKS.md.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput};
use stratagem::ActionEntry;
use stratagem::ai::{
    AiAgent, AiConfig, ChatMessage, GraphOfThoughts, LlmCall, LlmReply, LlmRequest, LlmResponse,
    QUERY, ReasoningConfig, TOT_EVALUATION_PROMPT, TOT_GENERATION_PROMPT, TreeOfThoughts,
};
use stratagem::prelude::*;

macro_rules! search_agent {
    ($name:ident, $strategy:ty, $config:expr) => {
        #[derive(Debug, Clone, Default, Serialize, Deserialize)]
        struct $name;
        impl AgentSpec for $name {
            const NAME: &'static str = stringify!($name);
            type Strategy = $strategy;
            fn actions() -> &'static [ActionEntry<Self>] {
                &[]
            }
        }
        impl AiAgent for $name {
            const AI: AiConfig = AiConfig::new("fast").reasoning($config);
        }
    };
}

const TOT: ReasoningConfig = ReasoningConfig {
    branching_factor: 5,
    beam_width: 4,
    max_llm_calls: 10_000,
    ..ReasoningConfig::DEFAULT
};
search_agent!(
    Tot2,
    TreeOfThoughts,
    ReasoningConfig {
        max_depth: 2,
        ..TOT
    }
);
search_agent!(
    Tot3,
    TreeOfThoughts,
    ReasoningConfig {
        max_depth: 3,
        ..TOT
    }
);
search_agent!(
    Tot6,
    TreeOfThoughts,
    ReasoningConfig {
        max_depth: 6,
        ..TOT
    }
);

const GOT: ReasoningConfig = ReasoningConfig {
    max_depth: 16,
    max_nodes: 1_000,
    max_llm_calls: 10_000,
    ..ReasoningConfig::DEFAULT
};
search_agent!(
    Got16,
    GraphOfThoughts,
    ReasoningConfig {
        branching_factor: 16,
        ..GOT
    }
);
search_agent!(
    Got32,
    GraphOfThoughts,
    ReasoningConfig {
        branching_factor: 32,
        ..GOT
    }
);
search_agent!(
    Got64,
    GraphOfThoughts,
    ReasoningConfig {
        branching_factor: 64,
        ..GOT
    }
);

const QUESTION: &str = "How should a small town cut its energy bill?";

/// The synthetic model: a thought, a score that varies with the prompt, pairs to merge.
fn reply_text(prompt: &str) -> String {
    if prompt.contains("Proposed step") {
        format!("Score: {}", prompt.len() % 10)
    } else if prompt.contains("Which thoughts belong together?") {
        let n = prompt.lines().filter(|l| l.starts_with('[')).count();
        (1..n)
            .step_by(2)
            .map(|i| format!("Group: {i}, {}\n", i + 1))
            .collect()
    } else if prompt.contains("Thoughts to merge") {
        "a merged idea\nScore: 7".to_string()
    } else {
        format!("an idea of {} characters\nScore: 5", prompt.len())
    }
}

fn reply(call: &LlmCall) -> Instruction {
    let prompt = call.request.last_user_message().unwrap_or("");
    LlmReply::new(
        call.call_id.clone(),
        Ok(LlmResponse::text(reply_text(prompt))),
    )
    .into_instruction()
}

/// Runs one request through `cmd`, answering each batch at once; returns the calls handled.
fn drive<S: AiAgent>(mut agent: Agent<S>) -> usize {
    let mut out = agent.cmd(Instruction::new(QUERY, json!(QUESTION)).with_id("r"));
    let mut calls = 0;
    loop {
        let replies: Vec<Instruction> = out
            .iter()
            .filter_map(|d| match d {
                Directive::Llm(call) => Some(reply(call)),
                _ => None,
            })
            .collect();
        if replies.is_empty() {
            assert_eq!(agent.snapshot().status, Status::Success);
            return calls;
        }
        calls += replies.len();
        out = agent.cmd(replies);
    }
}

/// The search as a programmer would write it without the framework.
fn hand_written_tot(k: u32, beam: usize, depth: u32) -> usize {
    struct Node {
        parent: usize,
        thought: String,
        score: f64,
    }
    let mut nodes = vec![Node {
        parent: 0,
        thought: QUESTION.to_string(),
        score: 0.0,
    }];
    let mut frontier = vec![0usize];
    let mut calls = 0;
    let path = |nodes: &[Node], mut at: usize| {
        let mut steps = Vec::new();
        while at != 0 {
            steps.push(nodes[at].thought.clone());
            at = nodes[at].parent;
        }
        steps.reverse();
        let mut text = String::from("Steps so far:");
        for (i, s) in steps.iter().enumerate() {
            text.push_str(&format!("\n{}. {s}", i + 1));
        }
        text
    };
    let ask = |system: &str, prompt: String| {
        let request = LlmRequest::new(
            "fast",
            vec![ChatMessage::system(system), ChatMessage::user(prompt)],
        );
        reply_text(request.last_user_message().unwrap_or(""))
    };
    for d in 1..=depth {
        let mut children = Vec::new();
        for &parent in &frontier {
            let steps = path(&nodes, parent);
            for i in 1..=k {
                let thought = ask(
                    TOT_GENERATION_PROMPT,
                    format!(
                        "Problem: {QUESTION}\n{steps}\nPropose candidate {i} of {k} for step {d}."
                    ),
                );
                let judged = ask(
                    TOT_EVALUATION_PROMPT,
                    format!(
                        "Problem: {QUESTION}\n{steps}\nProposed step {d}: {thought}\nScore it."
                    ),
                );
                calls += 2;
                let score = judged
                    .rsplit(':')
                    .next()
                    .and_then(|s| s.trim().parse::<f64>().ok())
                    .unwrap_or(0.0)
                    / 10.0;
                nodes.push(Node {
                    parent,
                    thought,
                    score,
                });
                children.push(nodes.len() - 1);
            }
        }
        children.sort_by(|a, b| nodes[*b].score.total_cmp(&nodes[*a].score));
        children.truncate(beam);
        frontier = children;
    }
    black_box(&nodes);
    calls
}

fn runner() -> AiRunner {
    // Rules only: every prompt gets the synthetic reply's shape without a per-call script.
    let model = ScriptedModel::new()
        .when("Proposed step", "Score: 6")
        .when("Propose candidate", "an idea")
        .looping();
    AiRunner::new(ModelTable::new().alias("fast", Arc::new(model), "scripted"))
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("reasoning");
    let sizes: [(&str, usize, u32); 3] = [("25", 25, 2), ("45", 45, 3), ("105", 105, 6)];
    for (name, nodes, depth) in sizes {
        let calls = match depth {
            2 => drive(Agent::new(Tot2)),
            3 => drive(Agent::new(Tot3)),
            _ => drive(Agent::new(Tot6)),
        };
        assert_eq!(calls, nodes * 2, "every node generated and scored");
        assert_eq!(hand_written_tot(5, 4, depth), calls, "the same search");
        group.throughput(Throughput::Elements(calls as u64));
        group.bench_function(format!("tot_{name}/machine"), |b| {
            b.iter(|| match depth {
                2 => drive(black_box(Agent::new(Tot2))),
                3 => drive(black_box(Agent::new(Tot3))),
                _ => drive(black_box(Agent::new(Tot6))),
            })
        });
        let runner = runner();
        group.bench_function(format!("tot_{name}/runner"), |b| {
            b.iter(|| {
                rt.block_on(async {
                    let answer = match depth {
                        2 => Agent::new(Tot2).ask(&runner, QUESTION).await,
                        3 => Agent::new(Tot3).ask(&runner, QUESTION).await,
                        _ => Agent::new(Tot6).ask(&runner, QUESTION).await,
                    };
                    black_box(answer.unwrap().result.llm_calls)
                })
            })
        });
        group.bench_function(format!("tot_{name}/hand_written"), |b| {
            b.iter(|| hand_written_tot(5, 4, black_box(depth)))
        });
    }
    for (name, k) in [("31", 16u32), ("63", 32), ("127", 64)] {
        let calls = match k {
            16 => drive(Agent::new(Got16)),
            32 => drive(Agent::new(Got32)),
            _ => drive(Agent::new(Got64)),
        };
        group.throughput(Throughput::Elements(calls as u64));
        group.bench_function(format!("got_{name}/machine"), |b| {
            b.iter(|| match k {
                16 => drive(black_box(Agent::new(Got16))),
                32 => drive(black_box(Agent::new(Got32))),
                _ => drive(black_box(Agent::new(Got64))),
            })
        });
        println!("got_{name}: {calls} calls");
    }
    group.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
