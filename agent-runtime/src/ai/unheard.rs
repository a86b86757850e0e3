//! The agent server's word that nobody can hear an agent's informational AI events
//! (`ai.usage`, `ai.tool.started`, `ai.tool.result`) during one step: no subscriber, watcher,
//! parent, transport or journal, no caller waiting for the step's directives, no debug trace.
//! The AI machine then leaves those events out instead of building, checking and dropping
//! them (7 of a 3-step ReAct request's 9 signals). The strategy stays a function of its
//! inputs plus this word, which the host gives only when no journal records the step, so
//! replay never depends on it. Events the server itself reads (`ai.request.*`) always go out.

use std::cell::RefCell;

thread_local! {
    /// The id of the agent whose step nobody hears, while the server runs that step.
    static UNHEARD: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Marks the step of agent `id` as unheard until the guard drops (also on a panic).
pub(crate) fn step(id: &str) -> Guard {
    UNHEARD.with(|u| *u.borrow_mut() = Some(id.to_string()));
    Guard
}

/// Whether the step running is agent `id`'s unheard step; the first machine of the step
/// takes the word, so another agent run inside it (by a tool) is heard as usual.
pub(crate) fn claim(id: &str) -> bool {
    UNHEARD.with(|u| {
        let mut unheard = u.borrow_mut();
        if unheard.as_deref() == Some(id) {
            *unheard = None;
            true
        } else {
            false
        }
    })
}

/// Ends the unheard step.
pub(crate) struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        UNHEARD.with(|u| *u.borrow_mut() = None);
    }
}
