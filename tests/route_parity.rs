//! The build-time route check (agent-dsl) and the runtime parser (agent-runtime) accept exactly
//! the same patterns: a pattern the compiler lets through can never fail at run time.

use agent_dsl::check::{Ctxt, check_pattern};
use agent_dsl::model::Span;
use proptest::prelude::*;
use stratagem::RoutePattern;

fn compiler_accepts(pattern: &str) -> bool {
    let cx = Ctxt::new();
    check_pattern(&cx, pattern, Span::Synthetic);
    cx.finish().is_ok()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn compiler_and_runtime_agree(pattern in "[ab.*_ é-]{0,10}") {
        prop_assert_eq!(
            compiler_accepts(&pattern),
            RoutePattern::parse(&pattern).is_ok(),
            "pattern {:?}", pattern
        );
    }
}

#[test]
fn known_cases_agree() {
    for pattern in [
        "", "a", "a.b", "a..b", ".a", "a.", "*", "**", "***", "a.*.b", "a.**", "a b", "a-b_c", "é",
    ] {
        assert_eq!(
            compiler_accepts(pattern),
            RoutePattern::parse(pattern).is_ok(),
            "{pattern:?}"
        );
    }
}
