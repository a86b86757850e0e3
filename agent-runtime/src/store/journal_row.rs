//! The row a [`RedbStore`](super::RedbStore) keeps one appended journal batch in: one B-tree
//! insertion per batch instead of one per record.
//!
//! Layout (little-endian): a tag byte ([`TAG`]), the last position (8 bytes), the record count
//! (4 bytes), then each record as its position (8 bytes), its length (4 bytes) and its bytes,
//! in strictly ascending positions. The row's key carries the first position. The header lets
//! an append, `journal_end` and a compaction that drops the row whole skip the records.

/// The layout's tag: a row whose first byte differs is refused, not misread.
const TAG: u8 = 1;
const HEADER: usize = 1 + 8 + 4;
const RECORD_HEADER: usize = 8 + 4;

/// What a row's header says: its last position and how many records it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct RowHeader {
    pub last: u64,
    pub count: u32,
}

/// Whether `records` are in strictly ascending positions (a row can hold them as they are).
pub(super) fn strictly_ascending<'a>(mut records: impl Iterator<Item = (u64, &'a [u8])>) -> bool {
    let Some((mut previous, _)) = records.next() else {
        return true;
    };
    records.all(|(position, _)| {
        let ascending = position > previous;
        previous = position;
        ascending
    })
}

/// Encodes `records` (non-empty, strictly ascending positions) as one row.
pub(super) fn encode<'a>(
    records: impl ExactSizeIterator<Item = (u64, &'a [u8])> + Clone,
) -> Vec<u8> {
    let mut row = Vec::new();
    encode_into(&mut row, records);
    row
}

/// Encodes `records` (non-empty, strictly ascending positions) as one row into `row`,
/// replacing what it held (its capacity reused).
pub(super) fn encode_into<'a>(
    row: &mut Vec<u8>,
    records: impl ExactSizeIterator<Item = (u64, &'a [u8])> + Clone,
) {
    let count = records.len();
    let bytes: usize = records.clone().map(|(_, b)| RECORD_HEADER + b.len()).sum();
    row.clear();
    row.reserve(HEADER + bytes);
    row.push(TAG);
    row.extend_from_slice(&[0; 8]);
    row.extend_from_slice(&(count as u32).to_le_bytes());
    let mut last = 0;
    for (position, record) in records {
        row.extend_from_slice(&position.to_le_bytes());
        row.extend_from_slice(&(record.len() as u32).to_le_bytes());
        row.extend_from_slice(record);
        last = position;
    }
    row[1..9].copy_from_slice(&last.to_le_bytes());
}

/// The header of `row`, checked against the row's first position `first`.
pub(super) fn header(row: &[u8], first: u64) -> Result<RowHeader, String> {
    let Some((&tag, rest)) = row.split_first() else {
        return Err("the batch row is empty".into());
    };
    if tag != TAG {
        return Err(format!(
            "the batch row has layout tag {tag}, expected {TAG}; it was written by another version or damaged"
        ));
    }
    if rest.len() < HEADER - 1 {
        return Err(format!(
            "the batch row's header is cut short ({} of {HEADER} bytes)",
            row.len()
        ));
    }
    let last = u64::from_le_bytes(rest[..8].try_into().expect("8 bytes"));
    let count = u32::from_le_bytes(rest[8..12].try_into().expect("4 bytes"));
    if last < first || count == 0 {
        return Err(format!(
            "the batch row's header says {count} records ending at position {last}, which cannot start at {first}"
        ));
    }
    Ok(RowHeader { last, count })
}

/// The records of `row` (its first position `first`), each checked: positions strictly
/// ascending from `first` to the header's last, lengths inside the row.
pub(super) fn records(row: &[u8], first: u64) -> Result<Vec<(u64, &[u8])>, String> {
    let header = header(row, first)?;
    let mut rest = &row[HEADER..];
    let mut records = Vec::with_capacity((header.count as usize).min(rest.len() / RECORD_HEADER));
    let mut previous: Option<u64> = None;
    while !rest.is_empty() {
        if rest.len() < RECORD_HEADER {
            return Err(format!(
                "the batch row ends inside a record header after position {}",
                previous.unwrap_or(first)
            ));
        }
        let position = u64::from_le_bytes(rest[..8].try_into().expect("8 bytes"));
        let len = u32::from_le_bytes(rest[8..12].try_into().expect("4 bytes")) as usize;
        let expected_order = match previous {
            None => position == first,
            Some(previous) => position > previous,
        };
        if !expected_order {
            return Err(format!(
                "the batch row holds position {position} out of order (after {})",
                previous.map_or_else(|| format!("the row's start {first}"), |p| p.to_string())
            ));
        }
        let Some(bytes) = rest.get(RECORD_HEADER..RECORD_HEADER + len) else {
            return Err(format!(
                "the record at position {position} claims {len} bytes, past the row's end"
            ));
        };
        records.push((position, bytes));
        rest = &rest[RECORD_HEADER + len..];
        previous = Some(position);
    }
    if records.len() != header.count as usize || previous != Some(header.last) {
        return Err(format!(
            "the batch row holds {} records ending at position {}, its header says {} ending at {}",
            records.len(),
            previous.unwrap_or(first),
            header.count,
            header.last
        ));
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_round_trips_and_every_cut_or_damaged_header_is_an_error() {
        let input: [(u64, &[u8]); 3] = [(4, b"ab"), (5, b""), (9, b"cde")];
        let row = encode(input.iter().copied());
        assert_eq!(header(&row, 4), Ok(RowHeader { last: 9, count: 3 }));
        assert_eq!(records(&row, 4).unwrap(), input);
        assert!(
            records(&row, 3).is_err(),
            "a key that does not match the row"
        );
        for cut in 0..row.len() {
            assert!(records(&row[..cut], 4).is_err(), "cut at {cut}");
        }
        let mut wrong_tag = row.clone();
        wrong_tag[0] = 7;
        assert!(records(&wrong_tag, 4).unwrap_err().contains("layout tag 7"));
        let mut long_length = row.clone();
        long_length[HEADER + 8] = 200;
        assert!(
            records(&long_length, 4)
                .unwrap_err()
                .contains("past the row's end")
        );
        assert!(strictly_ascending(input.iter().copied()));
        assert!(!strictly_ascending(
            [(2, &b""[..]), (2, &b""[..])].into_iter()
        ));
    }
}
