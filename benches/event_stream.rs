//! Event-stream parsing throughput by line length: one `data:` line of 1 KB, 1 MB and (printed,
//! timed once per run) 100 MB, fed in 16 KiB reads as a socket would deliver it. Ours is
//! `EventStreamParser`; the baseline is the reader it replaced (append the read, search the
//! whole buffer for `\n` again), which is quadratic in the line length.
//! `cargo bench --bench event_stream`; results are in BENCHMARKS.md.

use std::hint::black_box;
use std::time::Instant;

use criterion::{BenchmarkId, Criterion, Throughput};
use stratagem::ai::{EventStreamLimits, EventStreamParser};

const READ: usize = 16 * 1024;

fn stream(line_bytes: usize) -> Vec<u8> {
    let mut bytes = b"data: ".to_vec();
    bytes.extend(std::iter::repeat_n(b'x', line_bytes));
    bytes.extend_from_slice(b"\n\n");
    bytes
}

fn ours(bytes: &[u8]) -> usize {
    let mut parser = EventStreamParser::new(EventStreamLimits {
        max_line_bytes: 256 << 20,
        max_event_bytes: 256 << 20,
    });
    let mut events = Vec::new();
    for read in bytes.chunks(READ) {
        parser.feed(read, &mut events).unwrap();
    }
    events[0].data.len()
}

/// The previous reader: the buffer is searched from its start after every read.
fn previous(bytes: &[u8]) -> usize {
    let mut buffer = Vec::new();
    let mut total = 0;
    for read in bytes.chunks(READ) {
        buffer.extend_from_slice(read);
        while let Some(end) = buffer.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buffer.drain(..=end).collect();
            total += line.len();
        }
    }
    total
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("event_stream/line");
    for (label, size) in [("1KB", 1_000), ("1MB", 1_000_000)] {
        let bytes = stream(size);
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(BenchmarkId::new("stratagem", label), &bytes, |b, bytes| {
            b.iter(|| ours(black_box(bytes)))
        });
        group.bench_with_input(BenchmarkId::new("previous", label), &bytes, |b, bytes| {
            b.iter(|| previous(black_box(bytes)))
        });
    }
    group.finish();
    c.final_summary();
    // 100 MB is too long for criterion's sampling: timed directly, best of 3.
    let bytes = stream(100_000_000);
    let best = (0..3)
        .map(|_| {
            let started = Instant::now();
            black_box(ours(black_box(&bytes)));
            started.elapsed()
        })
        .min()
        .unwrap();
    println!(
        "event_stream/line/stratagem/100MB: {best:?}, {:.0} MB/s",
        bytes.len() as f64 / best.as_secs_f64() / 1e6
    );
}
