//! Tree of Thoughts: a search over candidate thoughts.
//!
//! The root is the question. A step expands nodes (breadth first: the whole beam of the
//! current depth; depth first: the node on top of the stack; best first: the best open node):
//! for each, `branching_factor` generation calls go out at once, and each thought is scored by
//! an evaluation call issued as soon as it arrives, within the same step. When the step's calls
//! have all answered, the new children are pruned to the best `beam_width` (ties: first
//! generated), and the search goes on until a kept node reaches `max_depth` (breadth first: the
//! whole level; depth and best first: the node chosen next), nothing is left open, or the
//! budget is spent. The answer is the best node of the deepest level reached, with its path.

use serde::{Deserialize, Serialize};

use super::options::Traversal;
use super::search::{Concluded, Cx, Purpose, score_in, without_line};
use super::state::Termination;

/// How Tree of Thoughts asks for a thought unless `generation_prompt` says otherwise.
pub const TOT_GENERATION_PROMPT: &str = "You solve problems one step at a time. Given the problem and the steps so far, propose the next step. Reply with that one step only.";
/// How Tree of Thoughts asks for a score unless `evaluation_prompt` says otherwise.
pub const TOT_EVALUATION_PROMPT: &str = "Judge how likely the proposed step leads to a correct solution of the problem. Reply with `Score: N`, N from 0 (hopeless) to 10 (certain).";

/// Where a node stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeStatus {
    /// Its generation or evaluation call is out.
    Pending,
    /// Kept, not expanded yet.
    Open,
    /// Its children were generated.
    Expanded,
    /// Cut by the beam.
    Pruned,
}

/// One thought in the tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThoughtNode {
    /// Its index in [`TreeSearch::nodes`] (0 is the question).
    pub id: u32,
    /// The node it extends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    /// Steps from the question.
    pub depth: u32,
    /// The thought (the question, for the root).
    pub thought: String,
    /// The evaluation, 0.0..=1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Where it stands.
    pub status: NodeStatus,
}

/// Tree of Thoughts' state and trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeSearch {
    /// How it expands.
    pub traversal: Traversal,
    /// Every node, the question first.
    pub nodes: Vec<ThoughtNode>,
    /// Kept nodes waiting to be expanded (depth first: a stack, best on top).
    pub open: Vec<u32>,
    /// The nodes generated in the current step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_nodes: Vec<u32>,
    /// The answer's node, once chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best: Option<u32>,
}

impl TreeSearch {
    pub(crate) fn start(cx: &mut Cx<'_>) -> Self {
        let mut tree = TreeSearch {
            traversal: cx.config.traversal,
            nodes: vec![ThoughtNode {
                id: 0,
                parent: None,
                depth: 0,
                thought: cx.query.to_string(),
                score: None,
                status: NodeStatus::Open,
            }],
            open: vec![0],
            step_nodes: Vec::new(),
            best: None,
        };
        tree.expand(cx);
        tree
    }

    /// The thoughts from the question (excluded) to `node`, in order.
    fn path(&self, node: u32) -> Vec<&str> {
        let mut path = Vec::with_capacity(self.nodes[node as usize].depth as usize);
        let mut at = Some(node);
        while let Some(id) = at.filter(|id| *id != 0) {
            let n = &self.nodes[id as usize];
            path.push(n.thought.as_str());
            at = n.parent;
        }
        path.reverse();
        path
    }

    fn steps_so_far(&self, node: u32) -> String {
        let path = self.path(node);
        if path.is_empty() {
            return "No steps yet.".to_string();
        }
        let mut text = String::from("Steps so far:");
        for (i, step) in path.iter().enumerate() {
            text.push_str(&format!("\n{}. {step}", i + 1));
        }
        text
    }

    /// Takes the nodes this step expands off the open set.
    fn take_next(&mut self) -> Vec<u32> {
        match self.traversal {
            Traversal::Bfs => std::mem::take(&mut self.open),
            Traversal::Dfs => self.open.pop().into_iter().collect(),
            Traversal::BestFirst => self
                .best_open()
                .map(|at| vec![self.open.remove(at)])
                .unwrap_or_default(),
        }
    }

    /// The position in `open` of the best-scored node (the first of equals).
    fn best_open(&self) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for (at, id) in self.open.iter().enumerate() {
            let score = self.nodes[*id as usize].score.unwrap_or(0.0);
            if best.is_none_or(|(_, b)| score > b) {
                best = Some((at, score));
            }
        }
        best.map(|(at, _)| at)
    }

    /// Issues the generation calls of the next nodes to expand, two calls reserved per child
    /// (its generation and its evaluation).
    fn expand(&mut self, cx: &mut Cx<'_>) {
        let k = cx.config.branching_factor.max(1);
        let instructions = cx.config.generation_prompt.unwrap_or(TOT_GENERATION_PROMPT);
        // Each generation issued here still owes its evaluation call.
        let mut owed = 0;
        for parent in self.take_next() {
            if cx.calls_left() < owed + 2 {
                // Out of budget: the node stays open for the best-so-far answer.
                self.open.push(parent);
                continue;
            }
            self.nodes[parent as usize].status = NodeStatus::Expanded;
            let depth = self.nodes[parent as usize].depth + 1;
            let steps = self.steps_so_far(parent);
            for i in 1..=k {
                if cx.calls_left() < owed + 2 {
                    break;
                }
                owed += 1;
                let id = self.nodes.len() as u32;
                self.nodes.push(ThoughtNode {
                    id,
                    parent: Some(parent),
                    depth,
                    thought: String::new(),
                    score: None,
                    status: NodeStatus::Pending,
                });
                self.step_nodes.push(id);
                let prompt = format!(
                    "Problem: {}\n{steps}\nPropose candidate {i} of {k} for step {depth}.",
                    cx.query
                );
                cx.call(Purpose::Generate { node: id }, instructions, prompt);
            }
        }
    }

    pub(crate) fn answered(&mut self, cx: &mut Cx<'_>, purpose: Purpose, text: &str) {
        match purpose {
            Purpose::Generate { node } => {
                let thought = without_line(text, "score:");
                self.nodes[node as usize].thought = thought;
                let parent = self.nodes[node as usize].parent.unwrap_or(0);
                let depth = self.nodes[node as usize].depth;
                let prompt = format!(
                    "Problem: {}\n{}\nProposed step {depth}: {}\nScore it.",
                    cx.query,
                    self.steps_so_far(parent),
                    self.nodes[node as usize].thought
                );
                let instructions = cx.config.evaluation_prompt.unwrap_or(TOT_EVALUATION_PROMPT);
                if cx.calls_left() > 0 {
                    cx.call(Purpose::Evaluate { node }, instructions, prompt);
                } else {
                    self.nodes[node as usize].status = NodeStatus::Open;
                }
            }
            Purpose::Evaluate { node } => {
                let n = &mut self.nodes[node as usize];
                n.score = Some(score_in(text, "score:", true).unwrap_or(0.0));
                n.status = NodeStatus::Open;
            }
            _ => {}
        }
    }

    pub(crate) fn step_ended(&mut self, cx: &mut Cx<'_>) -> Option<Termination> {
        let mut children = std::mem::take(&mut self.step_nodes);
        // Best first, ties by generation order (the sort is stable).
        children.sort_by(|a, b| {
            let score = |id: &u32| self.nodes[*id as usize].score.unwrap_or(0.0);
            score(b).total_cmp(&score(a))
        });
        // Breadth first expands a whole level per step, the others one node: either way the
        // step's children are what the beam prunes.
        let beam = cx.config.beam_width.max(1) as usize;
        for id in children.iter().skip(beam) {
            self.nodes[*id as usize].status = NodeStatus::Pruned;
        }
        children.truncate(beam);
        let kept = children;
        let max_depth = cx.config.max_depth.max(1);
        match self.traversal {
            Traversal::Bfs => self.open = kept,
            // Best on top of the stack.
            Traversal::Dfs => self.open.extend(kept.into_iter().rev()),
            Traversal::BestFirst => self.open.extend(kept),
        }
        let next = match self.traversal {
            Traversal::Bfs => self.open.first().copied(),
            Traversal::Dfs => self.open.last().copied(),
            Traversal::BestFirst => self.best_open().map(|at| self.open[at]),
        };
        match next {
            None => return Some(Termination::FinalAnswer),
            Some(id) if self.nodes[id as usize].depth >= max_depth => {
                self.best = Some(id);
                return Some(Termination::FinalAnswer);
            }
            Some(_) => {}
        }
        self.expand(cx);
        if self.step_nodes.is_empty() {
            return Some(Termination::Budget);
        }
        None
    }

    /// The best node of the deepest level reached (the first of equals), not pruned.
    fn best_leaf(&self) -> Option<u32> {
        let mut best: Option<&ThoughtNode> = None;
        for node in &self.nodes[1..] {
            if matches!(node.status, NodeStatus::Pruned | NodeStatus::Pending)
                || node.thought.is_empty()
            {
                continue;
            }
            let better = best.is_none_or(|b| {
                node.depth > b.depth
                    || (node.depth == b.depth && node.score.unwrap_or(0.0) > b.score.unwrap_or(0.0))
            });
            if better {
                best = Some(node);
            }
        }
        best.map(|n| n.id)
    }
}

pub(crate) fn outcome(tree: &mut TreeSearch) -> Concluded {
    let best = tree.best.or_else(|| tree.best_leaf());
    tree.best = best;
    let Some(best) = best else {
        return Concluded::default();
    };
    let path: Vec<String> = tree.path(best).into_iter().map(str::to_string).collect();
    let leaf = tree.nodes[best as usize].thought.clone();
    Concluded {
        answer: Some(leaf.clone()),
        reasoning: path,
        raw: leaf,
    }
}
