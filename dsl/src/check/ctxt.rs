//! The diagnostic collector, after serde_derive's `Ctxt`: checks push diagnostics and keep
//! going, so a user sees every mistake at once.

use std::cell::RefCell;

use super::diagnostic::Diagnostic;

/// Collects diagnostics across all checks of one item.
#[derive(Default)]
pub struct Ctxt {
    diagnostics: RefCell<Vec<Diagnostic>>,
}

impl Ctxt {
    /// An empty collector.
    pub fn new() -> Self {
        Ctxt::default()
    }

    /// Records a diagnostic.
    pub fn push(&self, diagnostic: Diagnostic) {
        self.diagnostics.borrow_mut().push(diagnostic);
    }

    /// Whether an error has been recorded so far.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.borrow().iter().any(Diagnostic::is_error)
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
