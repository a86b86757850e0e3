//! `Setting<T>`: an option that may be given once. Front-ends record every occurrence; the
//! checker reports repeats, so "given twice" is one check for both front-ends.

use super::span::{Span, Spanned};

/// An agent or strategy option that may be given at most once.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting<T> {
    first: Option<Spanned<T>>,
    repeats: Vec<Span>,
}

impl<T> Default for Setting<T> {
    fn default() -> Self {
        Setting {
            first: None,
            repeats: Vec::new(),
        }
    }
}

impl<T> Setting<T> {
    /// Records an occurrence; only the first one is kept as the value.
    pub fn set(&mut self, value: T, span: impl Into<Span>) {
        if self.first.is_some() {
            self.repeats.push(span.into());
        } else {
            self.first = Some(Spanned::new(value, span));
        }
    }

    /// The value, if given.
    pub fn get(&self) -> Option<&T> {
        self.first.as_ref().map(|s| &s.value)
    }

    /// The value, mutably (a front-end completing what it parsed in several steps).
    pub fn get_mut(&mut self) -> Option<&mut T> {
        self.first.as_mut().map(|s| &mut s.value)
    }

    /// The value with its span, if given.
    pub fn spanned(&self) -> Option<&Spanned<T>> {
        self.first.as_ref()
    }

    /// Where the value was given again.
    pub fn repeats(&self) -> &[Span] {
        &self.repeats
    }

    /// Whether it was given at all.
    pub fn is_set(&self) -> bool {
        self.first.is_some()
    }
}
