//! Server-sent events (`text/event-stream`) read by the WHATWG HTML rules ("Interpreting an
//! event stream"), in linear time and bounded memory.
//!
//! - Lines end with CRLF, LF or a bare CR, even when a CRLF pair is split between two reads.
//! - A leading byte order mark is dropped; bytes are decoded as UTF-8 with replacement.
//! - `data` lines are joined with `\n`; `event` names the event (`message` when absent); `id`
//!   sets the last event id (ignored if it contains NUL); `retry` sets the reconnection time
//!   (digits only); lines starting with `:` are comments; unknown fields are ignored.
//! - A blank line dispatches the event; an event with no data is not dispatched. An event that
//!   is not finished when the stream ends is discarded.
//! - Every byte is looked at once however the stream is split into reads, and the unfinished
//!   line and event are capped ([`EventStreamLimits`]): past a cap the parser reports an
//!   [`EventStreamError`] and stays closed.
//!
//! ```
//! use agent_runtime::ai::{EventStreamParser, ServerSentEvent};
//! let mut parser = EventStreamParser::default();
//! let mut events = Vec::new();
//! parser.feed(b"\xEF\xBB\xBFevent: delta\r\ndata: {\"a\":\rdata: 1}\n", &mut events).unwrap();
//! assert!(events.is_empty(), "the event is not finished until a blank line");
//! parser.feed(b"\n: keep-alive\n\ndata: [DONE]\n\n", &mut events).unwrap();
//! assert_eq!(events[0].event, "delta");
//! assert_eq!(events[0].data, "{\"a\":\n1}");
//! assert_eq!(events[1], ServerSentEvent { event: "message".into(), data: "[DONE]".into(), id: String::new() });
//! ```

use std::time::Duration;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSentEvent {
    /// The `event` field, `message` when the event had none.
    pub event: String,
    /// The `data` lines joined with `\n`.
    pub data: String,
    /// The last event id seen on the stream so far (empty if none).
    pub id: String,
}

/// Caps on what the parser holds while it waits for a line or an event to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventStreamLimits {
    /// The longest line, in bytes, without its line end.
    pub max_line_bytes: usize,
    /// The largest event: its `data` lines (with their `\n`s) and its `event` name, in bytes.
    pub max_event_bytes: usize,
}

impl EventStreamLimits {
    /// 1 MiB lines, 4 MiB events: far above what model providers send per chunk, far below
    /// what would hurt a server running many streams.
    pub const DEFAULT: EventStreamLimits = EventStreamLimits {
        max_line_bytes: 1 << 20,
        max_event_bytes: 4 << 20,
    };
}

impl Default for EventStreamLimits {
    fn default() -> Self {
        EventStreamLimits::DEFAULT
    }
}

/// Why a stream was closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventStreamError {
    /// A line grew past [`EventStreamLimits::max_line_bytes`] without ending.
    #[error("an event-stream line is longer than {limit} bytes")]
    LineTooLong {
        /// The cap that was passed.
        limit: usize,
    },
    /// An event grew past [`EventStreamLimits::max_event_bytes`] without a blank line.
    #[error("an event-stream event is larger than {limit} bytes")]
    EventTooLarge {
        /// The cap that was passed.
        limit: usize,
    },
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// An incremental `text/event-stream` parser: feed it the bytes as they arrive.
#[derive(Debug)]
pub struct EventStreamParser {
    limits: EventStreamLimits,
    /// The unfinished line (only when a read ended inside it).
    line: Vec<u8>,
    /// The last read ended with CR: an LF opening the next read belongs to it.
    after_cr: bool,
    /// No line has ended yet, so a BOM may still open the stream.
    at_start: bool,
    event: String,
    data: String,
    last_id: String,
    retry: Option<Duration>,
    failed: Option<EventStreamError>,
}

impl Default for EventStreamParser {
    /// A parser with [`EventStreamLimits::DEFAULT`].
    fn default() -> Self {
        EventStreamParser::new(EventStreamLimits::DEFAULT)
    }
}

impl EventStreamParser {
    /// A parser with these caps.
    pub fn new(limits: EventStreamLimits) -> Self {
        EventStreamParser {
            limits,
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            event: String::new(),
            data: String::new(),
            last_id: String::new(),
            retry: None,
            failed: None,
        }
    }

    /// The reconnection time the stream asked for with `retry`, if it did.
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// The last event id the stream set.
    pub fn last_event_id(&self) -> &str {
        &self.last_id
    }

    /// Reads `bytes`, appending the events they complete to `out`. After an error the parser
    /// stays closed: every later call returns the same error.
    pub fn feed(
        &mut self,
        bytes: &[u8],
        out: &mut Vec<ServerSentEvent>,
    ) -> Result<(), EventStreamError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        let result = self.read(bytes, out);
        if let Err(error) = &result {
            self.failed = Some(error.clone());
            self.line = Vec::new();
            self.data = String::new();
        }
        result
    }

    fn read(
        &mut self,
        mut bytes: &[u8],
        out: &mut Vec<ServerSentEvent>,
    ) -> Result<(), EventStreamError> {
        if self.after_cr && !bytes.is_empty() {
            self.after_cr = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        while let Some(end) = bytes.iter().position(|b| *b == b'\n' || *b == b'\r') {
            if self.line.is_empty() {
                self.check_line(end)?;
                self.line_ended(&bytes[..end], out)?;
            } else {
                self.check_line(self.line.len() + end)?;
                self.line.extend_from_slice(&bytes[..end]);
                let line = std::mem::take(&mut self.line);
                let ended = self.line_ended(&line, out);
                self.line = line;
                self.line.clear();
                ended?;
            }
            let crlf = bytes[end] == b'\r';
            bytes = &bytes[end + 1..];
            if crlf {
                match bytes.first() {
                    Some(b'\n') => bytes = &bytes[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        self.check_line(self.line.len() + bytes.len())?;
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn check_line(&self, len: usize) -> Result<(), EventStreamError> {
        if len > self.limits.max_line_bytes {
            return Err(EventStreamError::LineTooLong {
                limit: self.limits.max_line_bytes,
            });
        }
        Ok(())
    }

    fn line_ended(
        &mut self,
        mut line: &[u8],
        out: &mut Vec<ServerSentEvent>,
    ) -> Result<(), EventStreamError> {
        if self.at_start {
            self.at_start = false;
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match field {
            b"event" => {
                self.event.clear();
                self.event.push_str(&String::from_utf8_lossy(value));
                self.check_event()?;
            }
            b"data" => {
                self.data.push_str(&String::from_utf8_lossy(value));
                self.data.push('\n');
                self.check_event()?;
            }
            b"id" if !value.contains(&0) => {
                self.last_id.clear();
                self.last_id.push_str(&String::from_utf8_lossy(value));
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                // All digits: the only failure is overflow, which saturates.
                let ms = std::str::from_utf8(value)
                    .ok()
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(u64::MAX);
                self.retry = Some(Duration::from_millis(ms));
            }
            _ => {}
        }
        Ok(())
    }

    fn check_event(&self) -> Result<(), EventStreamError> {
        if self.data.len() + self.event.len() > self.limits.max_event_bytes {
            return Err(EventStreamError::EventTooLarge {
                limit: self.limits.max_event_bytes,
            });
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<ServerSentEvent>) {
        if self.data.is_empty() {
            self.event.clear();
            return;
        }
        self.data.pop(); // the `\n` after the last data line
        let event = if self.event.is_empty() {
            "message".to_string()
        } else {
            std::mem::take(&mut self.event)
        };
        out.push(ServerSentEvent {
            event,
            data: std::mem::take(&mut self.data),
            id: self.last_id.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn events_of(bytes: &[u8]) -> Vec<ServerSentEvent> {
        let mut parser = EventStreamParser::default();
        let mut out = Vec::new();
        parser.feed(bytes, &mut out).unwrap();
        out
    }

    fn message(data: &str) -> ServerSentEvent {
        ServerSentEvent {
            event: "message".into(),
            data: data.into(),
            id: String::new(),
        }
    }

    #[test]
    fn every_line_end_ends_a_line() {
        for stream in [
            &b"data: a\n\ndata: b\n\n"[..],
            b"data: a\r\rdata: b\r\r",
            b"data: a\r\n\r\ndata: b\r\n\r\n",
            b"data: a\r\n\rdata: b\n\r\n",
        ] {
            assert_eq!(
                events_of(stream),
                [message("a"), message("b")],
                "{stream:?}"
            );
        }
    }

    #[test]
    fn a_crlf_split_between_reads_is_one_line_end() {
        let mut parser = EventStreamParser::default();
        let mut out = Vec::new();
        parser.feed(b"data: a\r", &mut out).unwrap();
        parser.feed(b"\ndata: b\r", &mut out).unwrap();
        parser.feed(b"", &mut out).unwrap();
        parser.feed(b"\n\r\n", &mut out).unwrap();
        assert_eq!(out, [message("a\nb")]);
    }

    #[test]
    fn data_lines_join_with_newlines() {
        assert_eq!(
            events_of(b"data: {\"a\":\ndata:1,\ndata\ndata:  \"b\"}\n\n"),
            [message("{\"a\":\n1,\n\n \"b\"}")]
        );
        assert_eq!(events_of(b"data\n\n"), [message("")], "one empty data line");
    }

    #[test]
    fn fields_comments_and_unknown_lines() {
        let mut parser = EventStreamParser::default();
        let mut out = Vec::new();
        parser
            .feed(
                b": comment\nevent: delta\nid: 7\nretry: 1500\nfoo: bar\nDATA: no\ndata: x\n\n",
                &mut out,
            )
            .unwrap();
        assert_eq!(
            out,
            [ServerSentEvent {
                event: "delta".into(),
                data: "x".into(),
                id: "7".into()
            }]
        );
        assert_eq!(parser.retry(), Some(Duration::from_millis(1500)));
        parser
            .feed(b"retry: 1.5\nretry:\nid: a\0b\ndata: y\n\n", &mut out)
            .unwrap();
        assert_eq!(
            parser.retry(),
            Some(Duration::from_millis(1500)),
            "not digits"
        );
        assert_eq!(
            out[1].id, "7",
            "an id with NUL is ignored, the last one stays"
        );
        assert_eq!(
            out[1].event, "message",
            "the event name does not carry over"
        );
        parser.feed(b"id\ndata: z\n\n", &mut out).unwrap();
        assert_eq!(out[2].id, "", "an empty `id` resets it");
    }

    #[test]
    fn an_event_without_data_is_not_dispatched_and_its_name_is_dropped() {
        assert_eq!(events_of(b"event: ping\n\ndata: a\n\n"), [message("a")]);
    }

    #[test]
    fn a_leading_bom_is_dropped_once() {
        assert_eq!(events_of(b"\xEF\xBB\xBFdata: a\n\n"), [message("a")]);
        assert_eq!(
            events_of(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n"),
            [],
            "a second BOM makes the field name unknown"
        );
        let mut parser = EventStreamParser::default();
        let mut out = Vec::new();
        for byte in b"\xEF\xBB\xBFdata: a\n\n" {
            parser.feed(&[*byte], &mut out).unwrap();
        }
        assert_eq!(out, [message("a")], "a BOM split over reads");
    }

    #[test]
    fn an_unfinished_event_is_discarded_at_the_end() {
        assert_eq!(events_of(b"data: a\n\ndata: b\n"), [message("a")]);
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(
            events_of(b"data: \xFF\xE2\x82\n\n"),
            [message("\u{FFFD}\u{FFFD}")]
        );
    }

    #[test]
    fn a_line_past_the_cap_closes_the_stream() {
        let limits = EventStreamLimits {
            max_line_bytes: 16,
            max_event_bytes: 64,
        };
        let mut parser = EventStreamParser::new(limits);
        let mut out = Vec::new();
        parser.feed(b"data: 0123456789", &mut out).unwrap();
        let err = parser.feed(b"x", &mut out).unwrap_err();
        assert_eq!(err, EventStreamError::LineTooLong { limit: 16 });
        assert_eq!(
            err.to_string(),
            "an event-stream line is longer than 16 bytes"
        );
        assert_eq!(parser.feed(b"\n\n", &mut out), Err(err), "closed for good");
        assert!(out.is_empty());
        // Exactly at the cap is fine, also within one read.
        let mut parser = EventStreamParser::new(limits);
        parser.feed(b"data: 0123456789\n\n", &mut out).unwrap();
        assert_eq!(out, [message("0123456789")]);
        assert!(
            EventStreamParser::new(limits)
                .feed(b"data: 01234567890\n", &mut out)
                .is_err()
        );
    }

    #[test]
    fn an_event_past_the_cap_closes_the_stream() {
        let mut parser = EventStreamParser::new(EventStreamLimits {
            max_line_bytes: 16,
            max_event_bytes: 8,
        });
        let mut out = Vec::new();
        parser.feed(b"data: abc\ndata: def\n", &mut out).unwrap();
        let err = parser.feed(b"data: g\n", &mut out).unwrap_err();
        assert_eq!(err, EventStreamError::EventTooLarge { limit: 8 });
        assert!(out.is_empty());
    }

    /// Streams made of the bytes the rules care about, split anywhere.
    fn stream_bytes() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(&b"data"[..]),
            Just(&b"event"[..]),
            Just(&b"id"[..]),
            Just(&b"retry"[..]),
            Just(&b":"[..]),
            Just(&b" "[..]),
            Just(&b"\r"[..]),
            Just(&b"\n"[..]),
            Just(&b"\r\n"[..]),
            Just(&b"\xEF\xBB\xBF"[..]),
            Just(&b"\xC3\xA9"[..]),
            Just(&b"\0"[..]),
            Just(&b"12"[..]),
            Just(&b"x"[..]),
        ];
        proptest::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #[test]
        fn any_split_into_reads_yields_the_same_events(
            bytes in stream_bytes(),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
        ) {
            let mut whole = EventStreamParser::default();
            let mut expected = Vec::new();
            whole.feed(&bytes, &mut expected).unwrap();
            let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
            cuts.sort_unstable();
            let mut split = EventStreamParser::default();
            let mut got = Vec::new();
            let mut from = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                split.feed(&bytes[from..cut], &mut got).unwrap();
                from = cut;
            }
            prop_assert_eq!(&got, &expected);
            prop_assert_eq!(split.retry(), whole.retry());
            prop_assert_eq!(split.last_event_id(), whole.last_event_id());
        }
    }
}
