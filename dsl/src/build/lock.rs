//! The lock file: the definitions of a crate's agents whose checkpoints it must keep reading.
//!
//! [`Builder::lock_file`](super::Builder::lock_file) reads it before compiling and writes it
//! after a successful build; the user commits it. For each agent it records the definition's
//! fingerprint, its canonical shape (what checkpoints depend on: strategy, state fields and
//! types, FSM states and interrupts, tree nodes), and the older fingerprints whose checkpoints
//! still fit unchanged. A new build whose definition strands the recorded checkpoints (a state
//! removed or renamed, a field's type changed, a field added without a value, a tree node
//! changed) fails with E0113 at the changed token, unless the agent declares a migration from
//! the recorded fingerprint.
//!
//! ```text
//! agent Refund 5d0f0ff7e1a2c3b4
//! accepts 0011223344556677
//!   agent Refund
//!   strategy Fsm 1
//!   field amount: u64
//!   state Requested
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::check::{Diagnostic, codes};
use crate::emit::definition::{fingerprint, shape};
use crate::model::{AgentDef, MigrationDef, Span, StrategyDef};

const HEADER: &str = "# The agent definitions whose checkpoints this crate must keep reading.\n# Written by the build (stratagem's `Builder::lock_file`); commit it.\n";

/// What the lock file records about one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    fingerprint: String,
    accepts: Vec<String>,
    shape: Vec<String>,
}

/// A parsed lock file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lock {
    entries: BTreeMap<String, Entry>,
}

impl Lock {
    /// Reads a lock file's text; a line it cannot read is an error naming it.
    pub fn parse(text: &str) -> Result<Lock, String> {
        let mut lock = Lock::default();
        let mut current: Option<(String, Entry)> = None;
        for (number, line) in text.lines().enumerate() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            if let Some(shape) = line.strip_prefix("  ") {
                let (_, entry) = current.as_mut().ok_or_else(|| {
                    format!("line {}: a shape line before any `agent`", number + 1)
                })?;
                entry.shape.push(shape.to_string());
            } else if let Some(accepts) = line.strip_prefix("accepts ") {
                let (_, entry) = current
                    .as_mut()
                    .ok_or_else(|| format!("line {}: `accepts` before any `agent`", number + 1))?;
                entry
                    .accepts
                    .extend(accepts.split_whitespace().map(str::to_string));
            } else if let Some(rest) = line.strip_prefix("agent ") {
                let mut words = rest.split_whitespace();
                let (Some(name), Some(fingerprint), None) =
                    (words.next(), words.next(), words.next())
                else {
                    return Err(format!(
                        "line {}: expected `agent <Name> <fingerprint>`",
                        number + 1
                    ));
                };
                if let Some((name, entry)) = current.take() {
                    lock.entries.insert(name, entry);
                }
                current = Some((
                    name.to_string(),
                    Entry {
                        fingerprint: fingerprint.to_string(),
                        accepts: Vec::new(),
                        shape: Vec::new(),
                    },
                ));
            } else {
                return Err(format!("line {}: unexpected `{line}`", number + 1));
            }
        }
        if let Some((name, entry)) = current {
            lock.entries.insert(name, entry);
        }
        Ok(lock)
    }

    /// Whether the lock records agent `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// The lock file's text.
    pub fn render(&self) -> String {
        let mut out = HEADER.to_string();
        for (name, entry) in &self.entries {
            out.push('\n');
            out.push_str(&format!("agent {name} {}\n", entry.fingerprint));
            if !entry.accepts.is_empty() {
                out.push_str(&format!("accepts {}\n", entry.accepts.join(" ")));
            }
            for line in &entry.shape {
                out.push_str(&format!("  {line}\n"));
            }
        }
        out
    }

    /// Checks `agent` against what the lock records. On success the agent accepts the older
    /// fingerprints the lock lists, and the lock records its definition; otherwise the
    /// diagnostics say what the change strands, at the changed tokens.
    pub fn check(&mut self, agent: &mut AgentDef) -> Vec<Diagnostic> {
        let shape_text = shape(agent);
        let current = fingerprint(&shape_text);
        let lines: Vec<String> = shape_text.lines().map(str::to_string).collect();
        let name = agent.name.value.clone();
        let Some(locked) = self.entries.get(&name).cloned() else {
            self.entries.insert(
                name,
                Entry {
                    fingerprint: current,
                    accepts: Vec::new(),
                    shape: lines,
                },
            );
            return Vec::new();
        };
        if locked.fingerprint == current {
            agent.accepted_definitions = locked.accepts.clone();
            return Vec::new();
        }
        let migration = agent
            .migrations
            .iter()
            .find(|m| m.from.value == locked.fingerprint);
        // A migration with a `with` function may do anything: the lock cannot judge it.
        if migration.is_none_or(|m| m.with.is_none()) {
            let problems = strands(agent, &locked, migration);
            if !problems.is_empty() {
                return problems;
            }
        }
        let accepts = if migration.is_some() {
            // Checkpoints of the locked definition go through the declared migration; older
            // ones it accepted unchanged would need it too, and the generated code keys
            // migrations by fingerprint, so they are not carried over (documented).
            Vec::new()
        } else {
            let mut accepts = locked.accepts.clone();
            accepts.push(locked.fingerprint.clone());
            accepts
        };
        agent.accepted_definitions = accepts.clone();
        self.entries.insert(
            name,
            Entry {
                fingerprint: current,
                accepts,
                shape: lines,
            },
        );
        Vec::new()
    }
}

/// The first word of a shape line's rest (`Dialing` of `state Dialing in Call`).
fn head(line: &str) -> &str {
    line.split_whitespace().next().unwrap_or_default()
}

/// The locked shape as the declared migration makes it: states and fields renamed, so what
/// it leaves stranded is what remains different.
fn migrated_shape(locked: &Entry, migration: Option<&MigrationDef>) -> Vec<String> {
    let Some(migration) = migration else {
        return locked.shape.clone();
    };
    let states: HashMap<&str, &str> = migration
        .states
        .iter()
        .map(|r| (r.old.value.as_str(), r.new.value.as_str()))
        .collect();
    let fields: HashMap<&str, &str> = migration
        .fields
        .iter()
        .map(|r| (r.old.value.as_str(), r.new.value.as_str()))
        .collect();
    let rename = |word: &str, map: &HashMap<&str, &str>| -> String {
        map.get(word)
            .map_or_else(|| word.to_string(), |new| (*new).to_string())
    };
    locked
        .shape
        .iter()
        .map(|line| {
            if let Some(rest) = line.strip_prefix("state ") {
                // `state X [in P] [compound|parallel]`: both names may be renamed.
                let words: Vec<String> = rest
                    .split_whitespace()
                    .enumerate()
                    .map(|(i, w)| {
                        if i == 0 || rest.split_whitespace().nth(i - 1) == Some("in") {
                            rename(w, &states)
                        } else {
                            w.to_string()
                        }
                    })
                    .collect();
                format!("state {}", words.join(" "))
            } else if let Some((field, ty)) =
                line.strip_prefix("field ").and_then(|r| r.split_once(": "))
            {
                format!("field {}: {ty}", rename(field, &fields))
            } else {
                line.clone()
            }
        })
        .collect()
}

/// What the change from `locked` (through `migration`, when one is declared from it) to
/// `agent` strands, one diagnostic per problem.
fn strands(agent: &AgentDef, locked: &Entry, migration: Option<&MigrationDef>) -> Vec<Diagnostic> {
    let old_shape = migrated_shape(locked, migration);
    let old = |prefix: &str| -> Vec<&str> {
        old_shape
            .iter()
            .filter_map(|l| l.strip_prefix(prefix))
            .collect()
    };
    let new_shape = shape(agent);
    let new = |prefix: &str| -> Vec<&str> {
        new_shape
            .lines()
            .filter_map(|l| l.strip_prefix(prefix))
            .collect()
    };
    let help = match migration {
        None => format!(
            "declare a migration from the locked definition: `migrate \"{}\" {{ ... }}` (`state New was Old`, `field new was old`, `field name = value`, `with path::to_fn`); if no checkpoint of `{}` exists anywhere, delete its block from the lock file",
            locked.fingerprint, agent.name.value
        ),
        Some(_) => format!(
            "the migration from `{}` does not cover it: add `state New was Old`, `field new was old` or `field name = value` to it, or `with path::to_fn` for anything else",
            locked.fingerprint
        ),
    };
    let strategy_span = agent.strategy.spanned().map_or(agent.name.span, |s| s.span);
    let mut problems = Vec::new();
    let mut push = |span: Span, message: String, label: &str| {
        problems.push(
            Diagnostic::error(codes::DEFINITION_STRANDS, span, message)
                .label(label.to_string())
                .help(help.clone()),
        );
    };

    if old("strategy ") != new("strategy ") {
        push(
            strategy_span,
            format!(
                "agent `{}` changed its strategy from `{}`: its checkpoints could no longer be read",
                agent.name.value,
                old("strategy ").join(""),
            ),
            "strategy changed",
        );
    }

    // Fields: a changed type, or a field older checkpoints lack.
    let old_fields: HashMap<&str, &str> = old("field ")
        .into_iter()
        .filter_map(|f| f.split_once(": "))
        .collect();
    let defaulted: HashSet<&str> = agent
        .migrations
        .iter()
        .flat_map(|m| m.defaults.iter().map(|(d, _)| d.value.as_str()))
        .collect();
    let text = |ty: &syn::Type| quote::quote!(#ty).to_string().replace(' ', "");
    for (name, ty) in &agent.schema {
        match old_fields.get(name.value.as_str()) {
            Some(locked_ty) if *locked_ty != text(&ty.value) => push(
                ty.span,
                format!(
                    "field `{}` of agent `{}` changed type from `{locked_ty}` to `{}`: checkpoints hold the old type",
                    name.value,
                    agent.name.value,
                    text(&ty.value)
                ),
                "type changed",
            ),
            Some(_) => {}
            None if !defaulted.contains(name.value.as_str()) => push(
                name.span,
                format!(
                    "field `{}` is new in agent `{}`: checkpoints taken before lack it",
                    name.value, agent.name.value
                ),
                "new field",
            ),
            None => {}
        }
    }

    // FSM states (and, in a statechart, where each is) and interrupts a checkpoint may name.
    if let Some(StrategyDef::Fsm(fsm)) = agent.strategy.get() {
        let states = fsm.states();
        let spans: HashMap<&str, Span> =
            states.iter().map(|s| (s.value.as_str(), s.span)).collect();
        let current: HashMap<&str, &str> = new("state ")
            .into_iter()
            .map(|line| (head(line), line))
            .collect();
        let locked_states: HashSet<&str> = old("state ").into_iter().map(head).collect();
        // The first state the lock does not know is most likely the renamed one.
        let renamed = states
            .iter()
            .find(|s| !locked_states.contains(s.value.as_str()))
            .map_or(fsm.span, |s| s.span);
        for line in old("state ") {
            let name = head(line);
            match current.get(name) {
                None => push(
                    renamed,
                    format!(
                        "state `{name}` of agent `{}` is gone (removed or renamed): checkpoints taken in it could not be read",
                        agent.name.value
                    ),
                    "a state checkpoints may be in is missing",
                ),
                Some(now) if *now != line => push(
                    spans.get(name).copied().unwrap_or(fsm.span),
                    format!(
                        "state `{name}` of agent `{}` moved or changed kind (`{line}` became `{now}`): the configurations checkpoints hold in it would not be valid",
                        agent.name.value
                    ),
                    "moved or changed kind",
                ),
                Some(_) => {}
            }
        }
        let interrupts: HashMap<&str, (&str, Span)> = new("interrupt ")
            .into_iter()
            .filter_map(|line| {
                let declared = fsm.interrupts.iter().find(|i| i.name.value == head(line))?;
                Some((head(line), (line, declared.name.span)))
            })
            .collect();
        for line in old("interrupt ") {
            let name = head(line);
            match interrupts.get(name) {
                None => push(
                    fsm.span,
                    format!(
                        "interrupt `{name}` of agent `{}` is gone: agents parked on it could never be answered",
                        agent.name.value
                    ),
                    "a pending interrupt's declaration is missing",
                ),
                Some((now, span)) if now != &line => push(
                    *span,
                    format!(
                        "interrupt `{name}` of agent `{}` changed its types (`{line}` became `{now}`): agents parked on it wait for the old answer",
                        agent.name.value
                    ),
                    "types changed",
                ),
                Some(_) => {}
            }
        }
    }

    // Tree nodes are stored by position: any change to them strands running trees.
    if old("node ") != new("node ") || old("tree ") != new("tree ") {
        push(
            strategy_span,
            format!(
                "the tree of agent `{}` changed: checkpoints hold the progress of the old tree's nodes",
                agent.name.value
            ),
            "tree changed",
        );
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_file_reads_back_what_it_wrote() {
        let text = "# c\n\nagent A 0011223344556677\naccepts 8899aabbccddeeff\n  agent A\n  state X\n\nagent B ffffffffffffffff\n  agent B\n";
        let lock = Lock::parse(text).unwrap();
        assert_eq!(Lock::parse(&lock.render()).unwrap(), lock);
        assert!(
            lock.render()
                .contains("accepts 8899aabbccddeeff\n  agent A\n  state X\n")
        );
        assert!(Lock::parse("agent A\n").is_err());
        assert!(Lock::parse("  state X\n").is_err());
    }
}
