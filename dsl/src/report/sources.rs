//! The files a compilation read, so diagnostics can be shown with their source.

use codespan_reporting::files::{Files, SimpleFiles};

use crate::model::FileId;

/// The source files of one compilation, indexed by [`FileId`].
#[derive(Default)]
pub struct Sources {
    files: SimpleFiles<String, String>,
}

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources").finish_non_exhaustive()
    }
}

impl Sources {
    /// No files yet.
    pub fn new() -> Self {
        Sources::default()
    }

    /// Adds a file under the name diagnostics show (usually its path as given).
    pub fn add(&mut self, name: impl Into<String>, source: impl Into<String>) -> FileId {
        let id = self.files.add(name.into(), source.into());
        FileId(u32::try_from(id).expect("fewer than 2^32 files"))
    }

    /// A file's name.
    pub fn name(&self, file: FileId) -> &str {
        self.files
            .get(file.0 as usize)
            .map_or("<unknown>", |f| f.name().as_str())
    }

    /// A file's text.
    pub fn source(&self, file: FileId) -> &str {
        self.files
            .get(file.0 as usize)
            .map_or("", |f| f.source().as_str())
    }

    pub(crate) fn files(&self) -> &SimpleFiles<String, String> {
        &self.files
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_column(&self, file: FileId, byte: usize) -> Option<(usize, usize)> {
        let id = file.0 as usize;
        let source = self.source(file);
        // Clamp into the file and onto a character boundary: spans always are, but a
        // hand-built one must not make rendering fail.
        let mut byte = byte.min(source.len());
        while !source.is_char_boundary(byte) {
            byte -= 1;
        }
        self.files
            .location(id, byte)
            .ok()
            .map(|l| (l.line_number, l.column_number))
    }
}
