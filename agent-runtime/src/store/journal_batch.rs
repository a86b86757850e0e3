//! Journal records encoded back to back in one buffer: what a journal's writer hands a store in
//! one append, so a step costs no allocation of its own and a store can keep or write the
//! records without copying them one by one.

use super::JournalRecords;

/// Journal records in one buffer, each with its position, in the order appended.
///
/// ```
/// use agent_runtime::store::JournalBatch;
/// let mut batch = JournalBatch::new();
/// batch.push(2, b"first");
/// batch.push(4, b"second");
/// let records: Vec<(u64, &[u8])> = batch.iter().collect();
/// assert_eq!(records, [(2, &b"first"[..]), (4, &b"second"[..])]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalBatch {
    bytes: Vec<u8>,
    /// Each record's position and the end of its bytes in `bytes`.
    records: Vec<(u64, usize)>,
}

impl JournalBatch {
    /// An empty batch.
    pub fn new() -> Self {
        JournalBatch::default()
    }

    /// An empty batch with room for `records` records of `bytes` bytes in all.
    pub fn with_capacity(records: usize, bytes: usize) -> Self {
        JournalBatch {
            bytes: Vec::with_capacity(bytes),
            records: Vec::with_capacity(records),
        }
    }

    /// Appends the record at `position`.
    pub fn push(&mut self, position: u64, record: &[u8]) {
        self.bytes.extend_from_slice(record);
        self.records.push((position, self.bytes.len()));
    }

    /// Appends the record at `position` that `write` writes straight into the buffer; when
    /// `write` fails, nothing of it stays.
    pub(crate) fn write<E>(
        &mut self,
        position: u64,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let start = self.bytes.len();
        match write(&mut self.bytes) {
            Ok(()) => {
                self.records.push((position, self.bytes.len()));
                Ok(())
            }
            Err(error) => {
                self.bytes.truncate(start);
                Err(error)
            }
        }
    }

    /// Appends every record of `other`, after this batch's.
    pub fn append(&mut self, other: &JournalBatch) {
        let offset = self.bytes.len();
        self.bytes.extend_from_slice(&other.bytes);
        self.records.extend(
            other
                .records
                .iter()
                .map(|&(position, end)| (position, offset + end)),
        );
    }

    /// Removes every record, keeping the buffers' capacity.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.records.clear();
    }

    /// How many records it holds.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The bytes of all its records.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// The record at `index` (in the order appended): its position and bytes.
    pub fn get(&self, index: usize) -> Option<(u64, &[u8])> {
        let &(position, end) = self.records.get(index)?;
        let start = match index {
            0 => 0,
            _ => self.records[index - 1].1,
        };
        Some((position, &self.bytes[start..end]))
    }

    /// Its records, in the order appended: position and bytes.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (u64, &[u8])> + Clone + '_ {
        let mut start = 0;
        self.records.iter().map(move |&(position, end)| {
            let bytes = &self.bytes[start..end];
            start = end;
            (position, bytes)
        })
    }

    /// Its records, each in a buffer of its own.
    pub fn to_records(&self) -> JournalRecords {
        self.iter()
            .map(|(position, bytes)| (position, bytes.to_vec()))
            .collect()
    }
}

impl<'a> FromIterator<(u64, &'a [u8])> for JournalBatch {
    fn from_iter<I: IntoIterator<Item = (u64, &'a [u8])>>(records: I) -> Self {
        let mut batch = JournalBatch::new();
        for (position, bytes) in records {
            batch.push(position, bytes);
        }
        batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_keep_their_positions_and_bytes_through_append_and_a_failed_write() {
        let mut a = JournalBatch::new();
        a.push(2, b"ab");
        a.push(4, b"");
        let failed: Result<(), ()> = a.write(5, |out| {
            out.extend_from_slice(b"half");
            Err(())
        });
        assert!(failed.is_err());
        let mut b = JournalBatch::with_capacity(1, 3);
        b.write::<()>(6, |out| {
            out.extend_from_slice(b"cde");
            Ok(())
        })
        .unwrap();
        a.append(&b);
        let expected: [(u64, &[u8]); 3] = [(2, b"ab"), (4, b""), (6, b"cde")];
        assert_eq!(a.iter().collect::<Vec<_>>(), expected);
        assert_eq!((a.len(), a.byte_len()), (3, 5));
        assert_eq!(a.get(2), Some((6, &b"cde"[..])));
        assert_eq!(a.get(3), None);
        assert_eq!(
            a.to_records(),
            [(2, b"ab".to_vec()), (4, vec![]), (6, b"cde".to_vec())]
        );
        assert_eq!(a.iter().collect::<JournalBatch>(), a);
        a.clear();
        assert!(a.is_empty() && a.byte_len() == 0 && a.iter().next().is_none());
    }
}
