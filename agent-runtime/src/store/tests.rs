//! Store tests: the embedded store under torn writes, checkpoint decoding, the memory store.

use std::io;
use std::sync::{Arc, Mutex};

use redb::{Database, StorageBackend};
use serde_json::json;

use super::{Checkpoint, CheckpointError, MemoryStore, RedbStore, Store};
use crate::signal::Signal;
use crate::testing::Counter;
use crate::{Agent, AgentSpec};

/// A disk image. Writes land in `live`; a sync copies `live` to `durable`. When armed, the
/// n-th write from then on writes only the first half of its bytes and fails, and the "disk"
/// dies: every later write and sync fails too, as after a power cut.
#[derive(Debug, Default)]
struct Image {
    live: Vec<u8>,
    durable: Vec<u8>,
    writes: u64,
    tear_at: Option<u64>,
    dead: bool,
}

#[derive(Debug, Clone, Default)]
struct TornDisk(Arc<Mutex<Image>>);

impl TornDisk {
    fn from_bytes(bytes: Vec<u8>) -> Self {
        TornDisk(Arc::new(Mutex::new(Image {
            durable: bytes.clone(),
            live: bytes,
            ..Image::default()
        })))
    }

    fn image(&self) -> std::sync::MutexGuard<'_, Image> {
        self.0.lock().unwrap()
    }

    /// Tear the `n`-th write (0-based) from now on.
    fn tear_at(&self, n: u64) {
        let mut image = self.image();
        image.tear_at = Some(image.writes + n);
    }
}

fn dead() -> io::Error {
    io::Error::other("the disk is gone (simulated power cut)")
}

impl StorageBackend for TornDisk {
    fn len(&self) -> Result<u64, io::Error> {
        Ok(self.image().live.len() as u64)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), io::Error> {
        let image = self.image();
        let start = offset as usize;
        let bytes = image
            .live
            .get(start..start + out.len())
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        out.copy_from_slice(bytes);
        Ok(())
    }

    fn set_len(&self, len: u64) -> Result<(), io::Error> {
        let mut image = self.image();
        if image.dead {
            return Err(dead());
        }
        image.live.resize(len as usize, 0);
        Ok(())
    }

    fn sync_data(&self) -> Result<(), io::Error> {
        let mut image = self.image();
        if image.dead {
            return Err(dead());
        }
        image.durable = image.live.clone();
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<(), io::Error> {
        let mut image = self.image();
        if image.dead {
            return Err(dead());
        }
        let torn = image.tear_at == Some(image.writes);
        image.writes += 1;
        let data = if torn { &data[..data.len() / 2] } else { data };
        let start = offset as usize;
        if image.live.len() < start + data.len() {
            image.live.resize(start + data.len(), 0);
        }
        image.live[start..start + data.len()].copy_from_slice(data);
        if torn {
            image.dead = true;
            return Err(dead());
        }
        Ok(())
    }
}

fn open(disk: TornDisk) -> RedbStore {
    RedbStore::from_database(
        Database::builder()
            .create_with_backend(disk)
            .expect("the image opens"),
    )
}

fn checkpoint_of(value: i64) -> Vec<u8> {
    let mut agent = Counter::new().with_id("c");
    agent.state_mut().value = value;
    Checkpoint {
        agent: serde_json::to_value(&agent).unwrap(),
        timers: vec![super::PendingTimer {
            due_at: "2030-01-01T00:00:00Z".parse().unwrap(),
            // Big enough to span several pages, so a commit makes many writes.
            signal: Signal::with_id(
                "t",
                "counter.add",
                json!({"by": 1, "pad": "x".repeat(20_000)}),
            ),
        }],
        cron: Vec::new(),
        llm_calls: Vec::new(),
        in_flight: Vec::new(),
        saved_at: "2026-01-01T00:00:00Z".parse().unwrap(),
    }
    .encode()
    .unwrap()
}

fn value_in(store: &RedbStore) -> i64 {
    let bytes = futures::executor::block_on(store.load("c"))
        .expect("the store reads")
        .expect("a checkpoint is there");
    let agent: Agent<Counter> = Checkpoint::decode(&bytes)
        .expect("the checkpoint is intact")
        .restore()
        .expect("and restores");
    agent.state().value
}

/// A checkpoint write torn at any point, on any image of what reached the disk, leaves a
/// readable checkpoint: the previous one, or (when the tear came after the commit point) the
/// new one, whole.
#[test]
fn a_torn_checkpoint_write_leaves_the_previous_checkpoint_readable() {
    // How many writes a save makes, measured on an intact disk.
    let disk = TornDisk::default();
    let store = open(disk.clone());
    futures::executor::block_on(store.save("c", &checkpoint_of(1))).unwrap();
    let before = disk.image().writes;
    futures::executor::block_on(store.save("c", &checkpoint_of(2))).unwrap();
    let writes_per_save = disk.image().writes - before;
    assert!(
        writes_per_save >= 3,
        "a save makes several writes ({writes_per_save})"
    );
    drop(store);

    let mut kept_old = 0;
    for tear in 0..writes_per_save {
        let disk = TornDisk::default();
        let store = open(disk.clone());
        futures::executor::block_on(store.save("c", &checkpoint_of(1))).unwrap();
        disk.tear_at(tear);
        let failed = futures::executor::block_on(store.save("c", &checkpoint_of(2)));
        assert!(failed.is_err(), "tear {tear}: the save reports the failure");
        drop(store);
        let (live, durable) = {
            let image = disk.image();
            (image.live.clone(), image.durable.clone())
        };
        for (which, bytes) in [("live", live), ("durable", durable)] {
            let value = value_in(&open(TornDisk::from_bytes(bytes)));
            assert!(
                value == 1 || value == 2,
                "tear {tear}, {which} image: {value}"
            );
            if tear == 0 {
                assert_eq!(
                    value, 1,
                    "{which} image: torn at its first write, nothing new is visible"
                );
            }
            if value == 1 {
                kept_old += 1;
            }
        }
    }
    assert!(
        kept_old > 0,
        "tears before the commit point keep the previous checkpoint"
    );
}

#[test]
fn the_memory_store_keeps_keys_in_order() {
    let store = MemoryStore::new();
    futures::executor::block_on(async {
        store.save("b", b"2").await.unwrap();
        store.save("a", b"1").await.unwrap();
        store.save("a", b"3").await.unwrap();
        assert_eq!(store.keys().await.unwrap(), ["a", "b"]);
        assert_eq!(store.load("a").await.unwrap().as_deref(), Some(&b"3"[..]));
        assert!(store.delete("a").await.unwrap());
        assert_eq!(store.load("a").await.unwrap(), None);
    });
}

#[test]
fn the_embedded_store_works_without_a_runtime_and_reports_open_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.redb");
    let store = RedbStore::open(&path).unwrap();
    assert_eq!(store.path(), Some(path.as_path()));
    futures::executor::block_on(async {
        assert_eq!(store.load("none").await.unwrap(), None);
        assert!(store.keys().await.unwrap().is_empty());
        store.save("k", b"v").await.unwrap();
    });
    // A second handle on the same file in the same process is refused, with a hint.
    let err = RedbStore::open(&path).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "cannot open the checkpoint store at `{}`",
            path.display()
        )),
        "{err}"
    );
    assert!(
        err.ends_with("only one process (and one `RedbStore`) may open a database file at a time"),
        "{err}"
    );
    // A file that is not a database.
    let bogus = dir.path().join("bogus.redb");
    std::fs::write(&bogus, b"definitely not a redb file, just some text").unwrap();
    assert!(RedbStore::open(&bogus).is_err());
}

#[test]
fn checkpoints_round_trip_and_name_their_agent() {
    let bytes = checkpoint_of(7);
    let checkpoint = Checkpoint::decode(&bytes).unwrap();
    assert_eq!(checkpoint.agent_name(), Some("Counter"));
    assert_eq!(checkpoint.agent_id(), Some("c"));
    assert_eq!(
        Checkpoint::decode(&checkpoint.encode().unwrap()).unwrap(),
        checkpoint
    );
    let wire: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(wire["format"], "stratagem.checkpoint");
    assert_eq!(wire["version"], 2);
    assert!(
        wire["checksum"].as_str().unwrap().starts_with("crc32:"),
        "{wire}"
    );
}

#[test]
fn every_single_byte_change_is_corrupt_and_version_2_needs_its_checksum() {
    // Without `checkpoint_of`'s padding, so every byte can be tried.
    let agent = Counter::new().with_id("c");
    let bytes = Checkpoint {
        agent: serde_json::to_value(&agent).unwrap(),
        timers: Vec::new(),
        cron: Vec::new(),
        llm_calls: Vec::new(),
        in_flight: Vec::new(),
        saved_at: "2026-01-01T00:00:00Z".parse().unwrap(),
    }
    .encode()
    .unwrap();
    // Every position with several patterns: one bit, a case bit, the whole byte.
    for at in 0..bytes.len() {
        for mask in [0x01, 0x20, 0x80, 0xFF] {
            let mut damaged = bytes.clone();
            damaged[at] ^= mask;
            assert!(
                matches!(
                    Checkpoint::decode(&damaged),
                    Err(CheckpointError::Corrupt { .. })
                ),
                "byte {at} ^ {mask:#x} was not reported as corrupt"
            );
        }
    }
    let mut wire: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    wire.as_object_mut().unwrap().remove("checksum");
    let err = Checkpoint::decode(&serde_json::to_vec(&wire).unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the checkpoint is corrupt: its checksum is missing or damaged (it does not end with `\"checksum\":\"crc32:...\"}`)"
    );
}

#[test]
fn malformed_checkpoints_are_errors_never_panics() {
    let cases: &[&[u8]] = &[
        b"",
        b"[]",
        b"null",
        b"{\"format\": 3}",
        b"{\"format\": \"stratagem.checkpoint\"}",
        b"{\"format\": \"stratagem.checkpoint\", \"version\": \"1\"}",
        b"{\"format\": \"stratagem.checkpoint\", \"version\": 1}",
        b"{\"format\": \"stratagem.checkpoint\", \"version\": 1, \"agent\": 5, \"saved_at\": \"x\"}",
    ];
    for bytes in cases {
        let err = Checkpoint::decode(bytes).unwrap_err();
        assert!(
            err.to_string().starts_with("the checkpoint is corrupt: "),
            "{}: {err}",
            String::from_utf8_lossy(bytes)
        );
    }
    // Well-formed, but the agent part is not an agent.
    let checkpoint = Checkpoint::decode(
        br#"{"format": "stratagem.checkpoint", "version": 1, "agent": 5, "saved_at": "2026-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    assert!(checkpoint.restore::<Counter>().is_err());
}

proptest::proptest! {
    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..256)) {
        let _ = Checkpoint::decode(&bytes);
    }
}

/// Appends (one record at a time and as a batch), a record written again, reads from a
/// position, the end, compaction and appends after it: the same answers from both stores.
#[test]
fn both_stores_keep_journals_apart_in_order_and_compact_them() {
    use super::JournalBatch;
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let redb = RedbStore::open(dir.path().join("journal.redb")).unwrap();
    let stores: [&dyn Store; 2] = [&MemoryStore::new(), &redb];
    let record = |n: u64| {
        format!("record {n}")
            .repeat(n as usize % 3 + 1)
            .into_bytes()
    };
    for store in stores {
        rt.block_on(async {
            assert_eq!(store.journal_end("a").await.unwrap(), None);
            store
                .append_journal("a", &[(0, record(0)), (1, record(1))])
                .await
                .unwrap();
            let owned: Vec<(u64, Vec<u8>)> = (2..6).map(|n| (n, record(n))).collect();
            let batch: JournalBatch = owned.iter().map(|(n, b)| (*n, b.as_slice())).collect();
            store.append_journal_batch("a", &batch).await.unwrap();
            store
                .append_journal("b", &[(9, b"other".to_vec())])
                .await
                .unwrap();
            // Written again at its position: replaced.
            store
                .append_journal("a", &[(3, b"again".to_vec())])
                .await
                .unwrap();
            let mut expected: Vec<(u64, Vec<u8>)> = (0..6).map(|n| (n, record(n))).collect();
            expected[3].1 = b"again".to_vec();
            assert_eq!(
                store.read_journal("a", 0).await.unwrap(),
                expected,
                "{store:?}"
            );
            assert_eq!(store.read_journal("a", 4).await.unwrap(), expected[4..]);
            assert_eq!(store.journal_end("a").await.unwrap(), Some(5));
            assert_eq!(store.compact_journal("a", 3).await.unwrap(), 3);
            assert_eq!(store.read_journal("a", 0).await.unwrap(), expected[3..]);
            store.append_journal("a", &[(6, record(6))]).await.unwrap();
            expected.push((6, record(6)));
            assert_eq!(store.compact_journal("a", 6).await.unwrap(), 3);
            assert_eq!(store.read_journal("a", 0).await.unwrap(), expected[6..]);
            // Out of order: read back in order.
            store
                .append_journal("a", &[(9, record(9)), (8, record(8))])
                .await
                .unwrap();
            assert_eq!(
                store.read_journal("a", 7).await.unwrap(),
                [(8, record(8)), (9, record(9))]
            );
            assert_eq!(
                store.read_journal("b", 0).await.unwrap(),
                [(9, b"other".to_vec())]
            );
            assert!(
                store.keys().await.unwrap().is_empty(),
                "journals are not checkpoints"
            );
        });
    }
}

/// Writes `rows` straight into the redb table `table` of a new database at `path`, as an
/// earlier version (`journal`, one row per record) or a damaged disk would have left them.
fn write_raw_rows(path: &std::path::Path, table: &str, rows: &[(&str, u64, Vec<u8>)]) {
    let db = Database::create(path).unwrap();
    let txn = db.begin_write().unwrap();
    {
        let definition: redb::TableDefinition<'_, (&str, u64), &[u8]> =
            redb::TableDefinition::new(table);
        let mut table = txn.open_table(definition).unwrap();
        for (key, position, bytes) in rows {
            table.insert((*key, *position), bytes.as_slice()).unwrap();
        }
    }
    txn.commit().unwrap();
}

fn numbered(positions: std::ops::Range<u64>) -> Vec<(u64, Vec<u8>)> {
    positions
        .map(|n| (n, format!("record {n}").into_bytes()))
        .collect()
}

/// One row per batch: a read starting inside a row, a compaction cutting through one (kept
/// from the cut on, the count exact), appends after it and a write reaching into two rows.
#[test]
fn the_embedded_store_reads_and_compacts_inside_a_batch_row() {
    let dir = tempfile::tempdir().unwrap();
    let store = RedbStore::open(dir.path().join("rows.redb")).unwrap();
    futures::executor::block_on(async {
        let all = numbered(0..30);
        store.append_journal("a", &all[..10]).await.unwrap();
        store.append_journal("a", &all[10..20]).await.unwrap();
        store.append_journal("a", &all[20..]).await.unwrap();
        assert_eq!(store.read_journal("a", 13).await.unwrap(), all[13..]);
        assert_eq!(store.read_journal("a", 30).await.unwrap(), []);
        assert_eq!(store.compact_journal("a", 15).await.unwrap(), 15);
        assert_eq!(store.read_journal("a", 0).await.unwrap(), all[15..]);
        assert_eq!(store.read_journal("a", 17).await.unwrap(), all[17..]);
        assert_eq!(store.compact_journal("a", 15).await.unwrap(), 0);
        assert_eq!(store.journal_end("a").await.unwrap(), Some(29));
        // Reaching from the second row into the third: both merged, the new bytes kept.
        let mut expected = all[15..].to_vec();
        let rewrite: Vec<(u64, Vec<u8>)> = [18, 21, 23]
            .map(|n| (n, format!("again {n}").into_bytes()))
            .to_vec();
        store.append_journal("a", &rewrite).await.unwrap();
        for (n, bytes) in &rewrite {
            expected[(*n - 15) as usize].1 = bytes.clone();
        }
        assert_eq!(store.read_journal("a", 0).await.unwrap(), expected);
        assert_eq!(store.read_journal("a", 22).await.unwrap(), expected[7..]);
        assert_eq!(store.compact_journal("a", 22).await.unwrap(), 7);
        assert_eq!(store.read_journal("a", 0).await.unwrap(), expected[7..]);
    });
}

/// A database an earlier version wrote (one row per record in `journal`) goes on with batch
/// rows: both read as one journal in position order, compaction and the end cover both.
#[test]
fn per_record_rows_of_an_earlier_version_and_batch_rows_read_as_one_journal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.redb");
    let all = numbered(0..12);
    let old: Vec<(&str, u64, Vec<u8>)> = all[..6]
        .iter()
        .map(|(n, bytes)| ("a", *n, bytes.clone()))
        .chain([("b", 3, b"other".to_vec())])
        .collect();
    write_raw_rows(&path, "journal", &old);
    let store = RedbStore::open(&path).unwrap();
    futures::executor::block_on(async {
        assert_eq!(store.journal_end("a").await.unwrap(), Some(5));
        store.append_journal("a", &all[6..]).await.unwrap();
        assert_eq!(store.read_journal("a", 0).await.unwrap(), all);
        assert_eq!(store.read_journal("a", 4).await.unwrap(), all[4..]);
        assert_eq!(store.journal_end("a").await.unwrap(), Some(11));
        // Written again: the batch row's record is the later write.
        store
            .append_journal("a", &[(5, b"again".to_vec())])
            .await
            .unwrap();
        let mut expected = all.clone();
        expected[5].1 = b"again".to_vec();
        assert_eq!(store.read_journal("a", 5).await.unwrap(), expected[5..]);
        // Four old rows (0-3), and 4, 5 old and 5 rewritten: 7 stored records went.
        assert_eq!(store.compact_journal("a", 6).await.unwrap(), 7);
        assert_eq!(store.read_journal("a", 0).await.unwrap(), expected[6..]);
        assert_eq!(
            store.read_journal("b", 0).await.unwrap(),
            [(3, b"other".to_vec())]
        );
    });
}

/// Damaged bytes in a batch row: every journal operation that reads it is a typed error naming
/// the journal and the row's position, never a panic; other journals still read.
#[test]
fn a_damaged_batch_row_is_a_typed_error_naming_the_journal_and_position() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.redb");
    let mut cut = vec![1u8];
    cut.extend_from_slice(&9u64.to_le_bytes());
    cut.extend_from_slice(&2u32.to_le_bytes());
    cut.extend_from_slice(&7u64.to_le_bytes());
    cut.extend_from_slice(&100u32.to_le_bytes());
    cut.extend_from_slice(b"short");
    write_raw_rows(
        &path,
        "journal_batches",
        &[("a", 7, cut), ("b", 2, b"not a row".to_vec())],
    );
    let store = RedbStore::open(&path).unwrap();
    futures::executor::block_on(async {
        let err = store.read_journal("a", 0).await.unwrap_err();
        assert!(
            matches!(&err, super::StoreError::CorruptJournal { key, position: 7, .. } if key == "a"),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "the journal `a` is corrupt at position 7: the record at position 7 claims 100 bytes, past the row's end"
        );
        assert!(
            store.read_journal("a", 8).await.is_err(),
            "a read inside the row"
        );
        let err = store.journal_end("b").await.unwrap_err();
        assert!(
            err.to_string().starts_with(
                "the journal `b` is corrupt at position 2: the batch row has layout tag 110"
            ),
            "{err}"
        );
        assert!(store.compact_journal("b", 5).await.is_err());
        assert!(store.append_journal("b", &[(3, vec![])]).await.is_err());
        store.append_journal("c", &numbered(0..2)).await.unwrap();
        assert_eq!(store.read_journal("c", 1).await.unwrap(), numbered(1..2));
    });
}

/// A deferred append is readable at once but, until a sync, not on disk: a crash (a process
/// kill leaves what was written, a power cut what was synced) comes back without it and with
/// everything durable before it; after `sync_journal`, or once the store is dropped, both
/// images hold it.
#[test]
fn deferred_journal_appends_read_at_once_and_are_durable_after_a_sync() {
    use super::JournalBatch;
    let all = numbered(0..12);
    let batch = |range: std::ops::Range<usize>| -> JournalBatch {
        all[range]
            .iter()
            .map(|(n, bytes)| (*n, bytes.as_slice()))
            .collect()
    };
    // The journal "a" as a store reopened on the disk image `bytes` holds it.
    let after_crash = |bytes: Vec<u8>| {
        futures::executor::block_on(open(TornDisk::from_bytes(bytes)).read_journal("a", 0)).unwrap()
    };
    let disk = TornDisk::default();
    let store = open(disk.clone());
    futures::executor::block_on(async {
        store.append_journal("a", &all[..4]).await.unwrap();
        store
            .append_journal_batch_deferred("a", &batch(4..8))
            .await
            .unwrap();
        assert_eq!(store.read_journal("a", 0).await.unwrap(), all[..8]);
        assert_eq!(store.journal_end("a").await.unwrap(), Some(7));
    });
    let (live, durable) = {
        let image = disk.image();
        (image.live.clone(), image.durable.clone())
    };
    assert_eq!(after_crash(live), all[..4], "killed before the sync");
    assert_eq!(after_crash(durable), all[..4], "power cut before the sync");

    futures::executor::block_on(store.sync_journal()).unwrap();
    assert_eq!(after_crash(disk.image().durable.clone()), all[..8]);

    // Deferred again, then the store dropped without a sync: closing the database syncs.
    futures::executor::block_on(store.append_journal_batch_deferred("a", &batch(8..12))).unwrap();
    drop(store);
    assert_eq!(after_crash(disk.image().durable.clone()), all);
}

/// A store that keeps no journal of its own appends durably when asked to defer, and its sync
/// is a no-op.
#[test]
fn the_memory_store_appends_deferred_records_like_any_other() {
    let store = MemoryStore::new();
    let batch: super::JournalBatch = [(2, &b"two"[..]), (4, &b"four"[..])].into_iter().collect();
    futures::executor::block_on(async {
        store
            .append_journal_batch_deferred("a", &batch)
            .await
            .unwrap();
        store.sync_journal().await.unwrap();
        assert_eq!(
            store.read_journal("a", 0).await.unwrap(),
            batch.to_records()
        );
    });
}
