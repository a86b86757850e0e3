//! Migration checks (E0111, E0112): `migrate` names a well-formed fingerprint, and renames
//! and defaults name states and fields this definition has.

use std::collections::HashSet;

use crate::model::{AgentDef, StrategyDef};

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;
use super::suggest::did_you_mean;

/// Runs the migration checks of one agent.
pub(crate) fn check_migrations(cx: &Ctxt, agent: &AgentDef) {
    if agent.migrations.is_empty() {
        return;
    }
    let states: HashSet<&str> = match agent.strategy.get() {
        Some(StrategyDef::Fsm(fsm)) => fsm.states().into_iter().map(|s| s.value.as_str()).collect(),
        _ => HashSet::new(),
    };
    let fields: HashSet<&str> = agent.schema.iter().map(|(n, _)| n.value.as_str()).collect();
    for migration in &agent.migrations {
        let from = &migration.from;
        if from.value.len() != 16 || !from.value.bytes().all(|b| b.is_ascii_hexdigit()) {
            cx.push(
                Diagnostic::error(
                    codes::MIGRATION_FROM,
                    from.span,
                    format!("`{}` is not a definition fingerprint", from.value),
                )
                .label("expected 16 hexadecimal digits")
                .help("copy the fingerprint the refused checkpoint's error (or the lock file) names, such as `migrate \"9f86d081884c7d65\" { ... }`"),
            );
        }
        for rename in &migration.states {
            if !states.contains(rename.new.value.as_str()) {
                let mut d = Diagnostic::error(
                    codes::MIGRATION_UNKNOWN,
                    rename.new.span,
                    format!(
                        "`state {} was {}` names no state of agent `{}`",
                        rename.new.value, rename.old.value, agent.name.value
                    ),
                )
                .label("not a state of this machine");
                d = match did_you_mean(&rename.new.value, states.iter().copied()) {
                    Some(hint) => d.help(hint),
                    None => d.help(
                        "a rename names the state as this definition calls it, then its old name",
                    ),
                };
                cx.push(d);
            }
        }
        // A macro agent on a unit struct, or a file agent without `state`, has no fields to
        // check against: everything is then unknown.
        let named = migration
            .fields
            .iter()
            .map(|r| &r.new)
            .chain(migration.defaults.iter().map(|(n, _)| n));
        for name in named {
            if !fields.contains(name.value.as_str()) {
                let mut d = Diagnostic::error(
                    codes::MIGRATION_UNKNOWN,
                    name.span,
                    format!(
                        "`field {}` names no state field of agent `{}`",
                        name.value, agent.name.value
                    ),
                )
                .label("not a field of the state");
                d = match did_you_mean(&name.value, fields.iter().copied()) {
                    Some(hint) => d.help(hint),
                    None => d.help("a migration names fields as this definition declares them"),
                };
                cx.push(d);
            }
        }
    }
}
