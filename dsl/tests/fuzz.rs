//! Parse + check never panic, on random text, on mutations of valid files, on characters of every
//! Unicode general category, and on 1 MB inputs (10 MB in a long run); messages never echo a control or invisible
//! character raw, nor a token whole when it is long.
//!
//! CI runs a few hundred cases. For a long run set `AGENT_FUZZ_CASES`, for example
//! `AGENT_FUZZ_CASES=1000000 cargo test --release -p agent-dsl --test fuzz`.

use agent_dsl::build::compile_source;
use agent_dsl::model::FileId;
use agent_dsl::report::{Sources, json_line, render};
use agent_dsl::syntax::format::format;
use proptest::prelude::*;

const SEEDS: &[&str] = &[
    include_str!("../../examples/order-service/agents/order.agent"),
    "agent A { state { n: u8 = 3 xs: Vec<String> = [\"a\"] o: Option<u8> = none } tick every 100ms }",
    "agent Order { strategy fsm { initial Cart terminal Paid as success enter Paid do r Cart -> Paid on pay if ok do charge Cart -> Cart after 30m } }",
    "behavior P { reactive_sequence { condition ok selector { retry(3) { action a(x = 1, y = \"s\") } wait(5ms) } parallel(success = 1, failure = 1) { subtree Q } } }",
    "agent H { strategy react { model \"m\" system \"s\" tools a, b max_iterations 8 temperature 0.5 max_tokens 10 } }",
    "/* c */ agent R { actions a routes { \"a.*\" => a priority -5 \"**\" => tick } } // end",
];

fn cases() -> u32 {
    std::env::var("AGENT_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(256)
}

/// One character of each Unicode general category (and of the invisible ones messages must
/// escape): letters, marks, numbers, punctuation, symbols, separators, controls, format
/// characters (bidi overrides, zero-width joiners, the BOM), private use and unassigned.
const EVERY_CATEGORY: &[char] = &[
    'A',
    'z',
    'ǅ',
    'ʰ',
    'א',
    '中', // Lu Ll Lt Lm Lo
    '\u{301}',
    '\u{903}',
    '\u{20dd}', // Mn Mc Me
    '٣',
    'Ⅻ',
    '½', // Nd Nl No
    '‿',
    '—',
    '⟨',
    '⟩',
    '«',
    '»',
    '¿', // Pc Pd Ps Pe Pi Pf Po
    '∑',
    '€',
    '^',
    '©',
    '😀', // Sm Sc Sk So
    '\u{a0}',
    '\u{3000}',
    '\u{2028}',
    '\u{2029}', // Zs Zl Zp
    '\u{0}',
    '\u{7}',
    '\u{1b}',
    '\u{7f}',
    '\u{85}', // Cc
    '\u{ad}',
    '\u{200b}',
    '\u{200d}',
    '\u{202e}',
    '\u{2066}',
    '\u{feff}', // Cf
    '\u{e000}',
    '\u{10ffff}',
    '\u{378}', // Co, Cn
];

/// Whether `text` shows a character a reader would not see, or that reorders what follows.
fn has_raw_invisible(text: &str) -> bool {
    text.chars().any(|c| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}' | '\u{ad}')
    })
}

/// Runs everything a file goes through, including rendering and formatting.
fn run(source: &str) {
    let mut sources = Sources::new();
    let file = sources.add("fuzz.agent", source.to_string());
    let diagnostics = match compile_source(file, sources.source(file), None) {
        Ok(compiled) => compiled.warnings,
        Err(diagnostics) => diagnostics,
    };
    for d in &diagnostics {
        // An expected-list names each token once.
        if let Some(list) = d.message.strip_prefix("expected ")
            && let Some((list, _)) = list.rsplit_once(", found ")
        {
            let named: Vec<&str> = list.split('`').skip(1).step_by(2).collect();
            let unique: std::collections::HashSet<&&str> = named.iter().collect();
            assert_eq!(unique.len(), named.len(), "{}", d.message);
        }
        let texts = std::iter::once(&d.message)
            .chain(&d.label)
            .chain(&d.help)
            .chain(d.secondary.iter().map(|l| &l.message));
        for text in texts {
            assert!(
                !has_raw_invisible(text),
                "raw invisible character in {text:?}"
            );
            assert!(
                text.len() < 4096,
                "a message of {} bytes: {}",
                text.len(),
                text.chars().take(200).collect::<String>()
            );
        }
    }
    let _ = render(&sources, &diagnostics);
    for d in &diagnostics {
        let _ = json_line(&sources, d);
    }
    if let Ok(formatted) = format(FileId(0), source) {
        // Formatting is idempotent and keeps the file parseable.
        let again = format(FileId(0), &formatted).expect("formatted output parses");
        assert_eq!(again, formatted);
    }
}

/// Small edits of a valid file: delete, duplicate or replace a byte range with a token.
fn mutated() -> impl Strategy<Value = String> {
    let tokens = prop::sample::select(vec![
        "{",
        "}",
        "(",
        ")",
        "\"",
        "/*",
        "//",
        "->",
        "=>",
        "::",
        ",",
        "=",
        "0",
        "-1",
        "999999999999999999999999",
        "0ms",
        "1.5",
        "agent",
        "state",
        "fsm",
        "behavior",
        "type",
        "é",
        "\n",
        " ",
    ]);
    let characters = prop::sample::select(EVERY_CATEGORY.to_vec()).prop_map(|c| c.to_string());
    let tokens = prop_oneof![3 => tokens.prop_map(str::to_string), 1 => characters];
    (
        prop::sample::select(SEEDS.to_vec()),
        any::<prop::sample::Index>(),
        0usize..12,
        tokens,
        0u8..3,
    )
        .prop_map(|(seed, at, len, token, op)| {
            let mut at = at.index(seed.len() + 1);
            while !seed.is_char_boundary(at) {
                at -= 1;
            }
            let mut end = (at + len).min(seed.len());
            while !seed.is_char_boundary(end) {
                end -= 1;
            }
            match op {
                0 => format!("{}{}", &seed[..at], &seed[end..]),
                1 => format!("{}{}{}", &seed[..end], &seed[at..end], &seed[end..]),
                _ => format!("{}{}{}", &seed[..at], token, &seed[end..]),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(source in "[a-z{}()\\[\\]\"/*:;,.=<>&' 0-9\\-\n]{0,120}") {
        run(&source);
    }

    #[test]
    fn mutated_files_never_panic(source in mutated()) {
        run(&source);
    }

    #[test]
    fn every_unicode_category_never_panics(
        source in prop::collection::vec(
            prop_oneof![
                prop::sample::select(EVERY_CATEGORY.to_vec()),
                prop::sample::select(vec!['a', '{', '}', ' ', '"', '-', '>', '\n', '_', '1']),
            ],
            0..80,
        )
    ) {
        run(&source.into_iter().collect::<String>());
    }
}

/// Huge inputs: one huge token of each kind, and ten million invisible characters. Each is
/// rejected or accepted with bounded messages (no megabyte echo). 1 MB in CI (a debug build
/// parses it in seconds), 10 MB in a long run (`AGENT_FUZZ_CASES` set).
#[test]
fn huge_inputs_give_bounded_messages() {
    let size = if std::env::var_os("AGENT_FUZZ_CASES").is_some() {
        10 << 20
    } else {
        1 << 20
    };
    let name = "a".repeat(size);
    let inputs = [
        // A huge name where a keyword is expected, and where a name is expected.
        format!("{name} {{ }}"),
        format!("agent {name} {{ }}"),
        // A huge string, a huge unterminated string, a huge comment never closed.
        format!("agent A {{ description \"{name}\" routes {{ \"{name}\" => x }} }}"),
        format!("agent A {{ description \"{name}"),
        format!("/* {name}"),
        // Invisible characters, a third as many as bytes.
        format!("agent A {{ {} }}", "\u{202e}".repeat(size / 3)),
        // A huge number and a huge duration.
        format!("agent A {{ tick every {}ms }}", "9".repeat(size)),
    ];
    for input in &inputs {
        run(input);
    }
}

#[test]
fn seeds_go_through() {
    for seed in SEEDS {
        run(seed);
    }
}
