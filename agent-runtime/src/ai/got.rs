//! Graph of Thoughts: thoughts as nodes, edges from generation, connection and aggregation.
//!
//! Step 1 generates `branching_factor` thoughts from the question at once (each may end with
//! `Score: N`). Then rounds, at most `max_depth`: a connection call relates the current level's
//! thoughts (`Group: 1, 3` lines), and every group of two or more is merged by its own
//! aggregation call (all of a round's at once) into a new node; thoughts in no group carry over.
//! When one thought is left it is the answer; when rounds, `max_nodes` or a round without a
//! group stop the merging, a final aggregation merges what is left (if the budget and
//! `max_nodes` allow; otherwise the best-scored thought answers). With `aggregation_strategy =
//! best` nothing is merged by a call: the best-scored thought answers.

use serde::{Deserialize, Serialize};

use super::options::Aggregation;
use super::search::{Concluded, Cx, Purpose, score_in, without_line};
use super::state::Termination;

/// How Graph of Thoughts asks for a thought unless `generation_prompt` says otherwise.
pub const GOT_GENERATION_PROMPT: &str = "Propose one distinct idea or partial solution for the problem. End with a line `Score: N`, N from 0 to 10 for how promising it is.";
/// How Graph of Thoughts asks for connections unless `connection_prompt` says otherwise.
pub const GOT_CONNECTION_PROMPT: &str = "Some of these thoughts belong together: they support, complete or refine each other. Reply with one line per group of related thoughts, as `Group: 1, 3`. Leave unrelated thoughts out.";
/// How Graph of Thoughts asks for a merge unless `aggregation_prompt` says otherwise.
pub const GOT_AGGREGATION_PROMPT: &str = "Merge these thoughts into one better thought that keeps what is right in each. Reply with the merged thought only; you may end with a line `Score: N`, N from 0 to 10.";

/// How a node came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The question (node 0).
    Question,
    /// Generated from the question.
    Generated,
    /// Merged from other nodes.
    Aggregated,
}

/// How an edge came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// The question led to the thought.
    Generated,
    /// The connection call related the two thoughts.
    Connected,
    /// The thought was merged into the other.
    Aggregated,
}

/// A thought in the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphNode {
    /// Its index in [`GraphSearch::nodes`].
    pub id: u32,
    /// The round that made it (0: the question, 1: generated, then one per aggregation round).
    pub depth: u32,
    /// The thought.
    pub thought: String,
    /// Its score, 0.0..=1.0, when the model gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// How it came to be.
    pub origin: Origin,
}

/// An edge of the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    /// From this node.
    pub from: u32,
    /// To this node.
    pub to: u32,
    /// Why.
    pub kind: EdgeKind,
}

/// Where the graph's rounds stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Thoughts are being generated.
    Generate,
    /// The level's thoughts are being related.
    Connect,
    /// Groups are being merged.
    Aggregate,
    /// What is left is being merged into the answer.
    Final,
}

/// Graph of Thoughts' state and trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphSearch {
    /// Every node, the question first.
    pub nodes: Vec<GraphNode>,
    /// Every edge, in the order made.
    pub edges: Vec<Edge>,
    /// The thoughts of the current level.
    pub level: Vec<u32>,
    /// Aggregation rounds done.
    pub rounds: u32,
    /// Where it stands.
    pub stage: Stage,
    /// The groups the last connection call named (node ids).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<Vec<u32>>,
    /// The answer's node, once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<u32>,
}

impl GraphSearch {
    pub(crate) fn start(cx: &mut Cx<'_>) -> Self {
        let mut graph = GraphSearch {
            nodes: vec![GraphNode {
                id: 0,
                depth: 0,
                thought: cx.query.to_string(),
                score: None,
                origin: Origin::Question,
            }],
            edges: Vec::new(),
            level: Vec::new(),
            rounds: 0,
            stage: Stage::Generate,
            groups: Vec::new(),
            answer: None,
        };
        let room = cx.config.max_nodes.saturating_sub(1);
        let k = cx
            .config
            .branching_factor
            .max(1)
            .min(room)
            .min(cx.calls_left());
        let instructions = cx.config.generation_prompt.unwrap_or(GOT_GENERATION_PROMPT);
        for i in 1..=k {
            let id = graph.add(1, Origin::Generated);
            graph.edges.push(Edge {
                from: 0,
                to: id,
                kind: EdgeKind::Generated,
            });
            graph.level.push(id);
            let prompt = format!("Problem: {}\nPropose thought {i} of {k}.", cx.query);
            cx.call(Purpose::Generate { node: id }, instructions, prompt);
        }
        graph
    }

    fn add(&mut self, depth: u32, origin: Origin) -> u32 {
        let id = self.nodes.len() as u32;
        self.nodes.push(GraphNode {
            id,
            depth,
            thought: String::new(),
            score: None,
            origin,
        });
        id
    }

    fn numbered(&self, ids: &[u32], weighted: bool) -> String {
        let mut text = String::new();
        for (i, id) in ids.iter().enumerate() {
            let node = &self.nodes[*id as usize];
            match (weighted, node.score) {
                (true, Some(score)) => text.push_str(&format!(
                    "[{}] (weight {score:.2}) {}\n",
                    i + 1,
                    node.thought
                )),
                _ => text.push_str(&format!("[{}] {}\n", i + 1, node.thought)),
            }
        }
        text
    }

    pub(crate) fn answered(&mut self, _cx: &mut Cx<'_>, purpose: Purpose, text: &str) {
        match purpose {
            Purpose::Generate { node } | Purpose::Aggregate { node } => {
                let n = &mut self.nodes[node as usize];
                n.thought = without_line(text, "score:");
                n.score = text
                    .to_ascii_lowercase()
                    .contains("score:")
                    .then(|| score_in(text, "score:", true))
                    .flatten();
            }
            Purpose::Connect => self.groups = self.parse_groups(text),
            _ => {}
        }
    }

    /// `Group: 1, 3` lines -> groups of the level's node ids (numbers out of range, repeats
    /// and thoughts already grouped are left out).
    fn parse_groups(&self, text: &str) -> Vec<Vec<u32>> {
        let mut taken = vec![false; self.level.len()];
        let mut groups = Vec::new();
        for line in text.lines() {
            let mut group = Vec::new();
            for word in line.split(|c: char| !c.is_ascii_digit()) {
                let Ok(n) = word.parse::<usize>() else {
                    continue;
                };
                if (1..=self.level.len()).contains(&n) && !taken[n - 1] {
                    taken[n - 1] = true;
                    group.push(n - 1);
                }
            }
            if group.len() >= 2 {
                groups.push(group.into_iter().map(|at| self.level[at]).collect());
            } else {
                for at in group {
                    taken[at] = false;
                }
            }
        }
        groups
    }

    fn best_of(&self, ids: &[u32]) -> Option<u32> {
        let mut best: Option<(u32, f64)> = None;
        for id in ids {
            let score = self.nodes[*id as usize].score.unwrap_or(0.0);
            if best.is_none_or(|(_, b)| score > b) {
                best = Some((*id, score));
            }
        }
        best.map(|(id, _)| id)
    }

    /// Issues a merge of `members` into a new node of the next round.
    fn aggregate(&mut self, cx: &mut Cx<'_>, members: &[u32]) -> u32 {
        let id = self.add(self.rounds + 2, Origin::Aggregated);
        for member in members {
            self.edges.push(Edge {
                from: *member,
                to: id,
                kind: EdgeKind::Aggregated,
            });
        }
        let weighted = cx.config.aggregation == Aggregation::Weighted;
        let instructions = cx
            .config
            .aggregation_prompt
            .unwrap_or(GOT_AGGREGATION_PROMPT);
        let prompt = format!(
            "Problem: {}\nThoughts to merge:\n{}",
            cx.query,
            self.numbered(members, weighted)
        );
        cx.call(Purpose::Aggregate { node: id }, instructions, prompt);
        id
    }

    fn room(&self, cx: &Cx<'_>) -> u32 {
        cx.config
            .max_nodes
            .saturating_sub(self.nodes.len() as u32 - 1)
    }

    pub(crate) fn step_ended(&mut self, cx: &mut Cx<'_>) -> Option<Termination> {
        match self.stage {
            Stage::Generate => {
                self.level
                    .retain(|id| !self.nodes[*id as usize].thought.is_empty());
                if cx.config.aggregation == Aggregation::Best {
                    self.answer = self.best_of(&self.level);
                    return Some(Termination::FinalAnswer);
                }
                self.connect_or_finish(cx)
            }
            Stage::Connect => {
                let groups = std::mem::take(&mut self.groups);
                for group in &groups {
                    for pair in group.windows(2) {
                        self.edges.push(Edge {
                            from: pair[0],
                            to: pair[1],
                            kind: EdgeKind::Connected,
                        });
                    }
                }
                let mut next = Vec::new();
                let mut grouped = vec![false; self.nodes.len()];
                for group in &groups {
                    if self.room(cx) == 0 || cx.calls_left() == 0 {
                        break;
                    }
                    for id in group {
                        grouped[*id as usize] = true;
                    }
                    next.push(self.aggregate(cx, group));
                }
                if next.is_empty() {
                    return self.final_merge(cx);
                }
                // Thoughts in no merged group carry over to the next level.
                next.extend(self.level.iter().filter(|id| !grouped[**id as usize]));
                self.level = next;
                self.stage = Stage::Aggregate;
                None
            }
            Stage::Aggregate => {
                self.rounds += 1;
                self.connect_or_finish(cx)
            }
            Stage::Final => Some(Termination::FinalAnswer),
        }
    }

    fn connect_or_finish(&mut self, cx: &mut Cx<'_>) -> Option<Termination> {
        if self.level.len() <= 1 {
            self.answer = self.level.first().copied();
            return Some(Termination::FinalAnswer);
        }
        if self.rounds >= cx.config.max_depth || self.room(cx) == 0 || cx.calls_left() < 2 {
            return self.final_merge(cx);
        }
        let instructions = cx.config.connection_prompt.unwrap_or(GOT_CONNECTION_PROMPT);
        let prompt = format!(
            "Problem: {}\nThoughts:\n{}Which thoughts belong together?",
            cx.query,
            self.numbered(&self.level, false)
        );
        cx.call(Purpose::Connect, instructions, prompt);
        self.stage = Stage::Connect;
        None
    }

    fn final_merge(&mut self, cx: &mut Cx<'_>) -> Option<Termination> {
        if self.level.len() <= 1 {
            self.answer = self.level.first().copied();
            return Some(Termination::FinalAnswer);
        }
        if self.room(cx) == 0 || cx.calls_left() == 0 {
            self.answer = self.best_of(&self.level);
            let reason = if cx.calls_left() == 0 {
                Termination::Budget
            } else {
                Termination::FinalAnswer
            };
            return Some(reason);
        }
        let level = std::mem::take(&mut self.level);
        let id = self.aggregate(cx, &level);
        self.level = vec![id];
        self.answer = Some(id);
        self.stage = Stage::Final;
        None
    }
}

pub(crate) fn outcome(graph: &mut GraphSearch) -> Concluded {
    let answer = graph.answer.or_else(|| graph.best_of(&graph.level));
    graph.answer = answer;
    let Some(id) = answer else {
        return Concluded::default();
    };
    let thought = graph.nodes[id as usize].thought.clone();
    // The reasoning: the thoughts that fed the answer, oldest first.
    let reasoning = graph
        .edges
        .iter()
        .filter(|e| e.to == id && e.kind == EdgeKind::Aggregated)
        .map(|e| graph.nodes[e.from as usize].thought.clone())
        .collect();
    Concluded {
        answer: Some(thought.clone()),
        reasoning,
        raw: thought,
    }
}
