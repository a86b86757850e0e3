//! [`Directives`]: what a typed FSM command (`agent.cmd(OrderEvent::Pay)`) returns on success.
//!
//! Most transitions of a running machine produce no directive at all, and a device loop calls
//! `cmd` once per input. A `Vec` is three words, so `Result<Vec<Directive>, _>` goes back to the
//! caller through memory; this list is one pointer, null when empty, so the whole `Result`
//! comes back in two registers and an accepted event costs what a hand-written `match` arm
//! does. Non-empty lists (a timer armed, an action's signals) keep their `Vec` behind the
//! pointer.

use std::fmt;
use std::ops::{Deref, DerefMut};

use serde::{Serialize, Serializer};

use crate::directive::Directive;

/// The directives of one command, in order: a slice (through `Deref`) that is one pointer wide
/// and allocates nothing when empty.
///
/// ```
/// use agent_runtime::{Directive, Directives, Signal};
///
/// let none = Directives::new();
/// assert!(none.is_empty());
/// let one = Directives::from(vec![Directive::Emit(Signal::new("door.opened", serde_json::json!({})))]);
/// assert_eq!(one.len(), 1);
/// assert!(matches!(one.as_slice(), [Directive::Emit(_)]));
/// let back: Vec<Directive> = one.into_vec();
/// assert_eq!(back.len(), 1);
/// ```
#[derive(Clone, Default)]
// The box is the point: one pointer, null when empty (see the module docs).
#[allow(clippy::box_collection)]
pub struct Directives(Option<Box<Vec<Directive>>>);

impl Directives {
    /// No directives.
    #[inline]
    pub const fn new() -> Self {
        Directives(None)
    }

    /// The directives as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[Directive] {
        match &self.0 {
            Some(list) => list,
            None => &[],
        }
    }

    /// The directives as a `Vec`, in order.
    #[inline]
    pub fn into_vec(mut self) -> Vec<Directive> {
        match self.0.take() {
            Some(list) => *list,
            None => Vec::new(),
        }
    }

    /// Appends a directive.
    pub fn push(&mut self, directive: Directive) {
        self.0.get_or_insert_with(Default::default).push(directive);
    }
}

impl From<Vec<Directive>> for Directives {
    /// The list, boxed only when it is not empty.
    #[inline]
    fn from(list: Vec<Directive>) -> Self {
        if list.is_empty() {
            Directives(None)
        } else {
            Directives(Some(Box::new(list)))
        }
    }
}

impl Drop for Directives {
    /// A null test inline; freeing a list out of line, so that dropping a command's result
    /// (most often empty, or a refusal) stays small enough to inline at the caller, in
    /// registers, rather than be a call with the result written to memory for it.
    #[inline]
    fn drop(&mut self) {
        if let Some(list) = self.0.take() {
            free(list);
        }
    }
}

#[cold]
#[inline(never)]
#[allow(clippy::box_collection)] // the box `Directives` holds, freed with its list
fn free(list: Box<Vec<Directive>>) {
    drop(list);
}

impl From<Directives> for Vec<Directive> {
    #[inline]
    fn from(list: Directives) -> Self {
        list.into_vec()
    }
}

impl Deref for Directives {
    type Target = [Directive];
    #[inline]
    fn deref(&self) -> &[Directive] {
        self.as_slice()
    }
}

impl DerefMut for Directives {
    #[inline]
    fn deref_mut(&mut self) -> &mut [Directive] {
        match &mut self.0 {
            Some(list) => list,
            None => &mut [],
        }
    }
}

impl fmt::Debug for Directives {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl Serialize for Directives {
    fn serialize<Ser: Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
        self.as_slice().serialize(serializer)
    }
}

impl IntoIterator for Directives {
    type Item = Directive;
    type IntoIter = std::vec::IntoIter<Directive>;
    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

impl<'a> IntoIterator for &'a Directives {
    type Item = &'a Directive;
    type IntoIter = std::slice::Iter<'a, Directive>;
    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl Extend<Directive> for Directives {
    fn extend<I: IntoIterator<Item = Directive>>(&mut self, iter: I) {
        let mut iter = iter.into_iter().peekable();
        if iter.peek().is_some() {
            self.0.get_or_insert_with(Default::default).extend(iter);
        }
    }
}

impl FromIterator<Directive> for Directives {
    fn from_iter<I: IntoIterator<Item = Directive>>(iter: I) -> Self {
        Directives::from(iter.into_iter().collect::<Vec<_>>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signal::Signal;

    fn emit(kind: &str) -> Directive {
        Directive::Emit(Signal::new(kind, serde_json::Value::Null))
    }

    #[test]
    fn empty_lists_are_one_null_pointer() {
        assert_eq!(size_of::<Directives>(), size_of::<usize>());
        assert!(Directives::from(Vec::new()).0.is_none());
        let mut list = Directives::new();
        list.extend(Vec::new());
        assert!(list.0.is_none());
    }

    #[test]
    fn lists_keep_their_order_through_every_conversion() {
        let mut list: Directives = vec![emit("a"), emit("b")].into();
        list.push(emit("c"));
        list.extend([emit("d")]);
        let kinds = |l: &[Directive]| -> Vec<String> {
            l.iter()
                .map(|d| match d {
                    Directive::Emit(s) => s.signal_type.clone(),
                    _ => String::new(),
                })
                .collect()
        };
        assert_eq!(kinds(&list), ["a", "b", "c", "d"]);
        assert_eq!(kinds(&list.clone().into_vec()), ["a", "b", "c", "d"]);
        let collected: Directives = list.into_iter().collect();
        assert_eq!(kinds(&collected), ["a", "b", "c", "d"]);
        assert_eq!(
            serde_json::to_value(&collected)
                .unwrap()
                .as_array()
                .map(Vec::len),
            Some(4)
        );
    }
}
