//! The diagnostic collector, after serde_derive's `Ctxt`: checks push diagnostics and keep
//! going, so a user sees every mistake at once.

use std::cell::{Cell, RefCell};

use super::diagnostic::Diagnostic;
use crate::limits::DIAGNOSTICS;

/// Collects diagnostics across all checks of one item.
#[derive(Default)]
pub struct Ctxt {
    diagnostics: RefCell<Vec<Diagnostic>>,
    errors: Cell<usize>,
}

impl Ctxt {
    /// An empty collector.
    pub fn new() -> Self {
        Ctxt::default()
    }

    /// Records a diagnostic.
    pub fn push(&self, diagnostic: Diagnostic) {
        if diagnostic.is_error() {
            self.errors.set(self.errors.get() + 1);
        }
        self.diagnostics.borrow_mut().push(diagnostic);
    }

    /// Whether an error has been recorded so far.
    pub fn has_errors(&self) -> bool {
        self.errors.get() > 0
    }

    /// Runs `suggest` (a did-you-mean search) unless more errors than are shown
    /// ([`DIAGNOSTICS`]) were already found: past that, a suggestion would be computed for a
    /// diagnostic nobody reads, and 100,000 of them would cost 100,000 searches.
    pub fn suggest<T>(&self, suggest: impl FnOnce() -> Option<T>) -> Option<T> {
        if self.errors.get() >= DIAGNOSTICS {
            None
        } else {
            suggest()
        }
    }

    /// Ends collection: `Ok(warnings)` when there is no error, `Err(everything)` otherwise.
    /// Diagnostics are ordered by where they were found, which follows the source.
    pub fn finish(self) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
        let all = self.diagnostics.into_inner();
        if all.iter().any(Diagnostic::is_error) {
            Err(all)
        } else {
            Ok(all)
        }
    }
}
