//! The ids of the signals an agent processed recently, kept with its checkpoint.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

/// The last `window` ids, in arrival order, with a set for lookups.
#[derive(Debug, Default)]
pub(crate) struct SeenIds {
    order: VecDeque<String>,
    set: HashSet<String>,
    window: usize,
}

impl SeenIds {
    pub(crate) fn new(ids: Vec<String>, window: usize) -> Self {
        let mut seen = SeenIds {
            window,
            ..SeenIds::default()
        };
        for id in ids {
            seen.insert(id);
        }
        seen
    }

    pub(crate) fn contains(&self, id: &str) -> bool {
        self.set.contains(id)
    }

    pub(crate) fn insert(&mut self, id: String) {
        if !self.set.insert(id.clone()) {
            return;
        }
        self.order.push_back(id);
        while self.order.len() > self.window {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
    }

    pub(crate) fn last(&self) -> Option<&str> {
        self.order.back().map(String::as_str)
    }

    pub(crate) fn to_shared(&self) -> Arc<[String]> {
        self.order.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_window_ids() {
        let mut seen = SeenIds::new(vec!["a".into(), "b".into()], 2);
        seen.insert("b".into());
        seen.insert("c".into());
        assert!(!seen.contains("a"));
        assert!(seen.contains("b") && seen.contains("c"));
        assert_eq!(&*seen.to_shared(), ["b", "c"]);
        assert_eq!(seen.last(), Some("c"));
    }
}
