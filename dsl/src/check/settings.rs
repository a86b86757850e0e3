//! Options given more than once.

use crate::model::{Setting, Span};

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;

/// Reports every repeat of a once-only option.
pub fn check_once<T>(cx: &Ctxt, setting: &Setting<T>, option: &str) {
    let Some(first) = setting.spanned() else {
        return;
    };
    for repeat in setting.repeats() {
        repeated(cx, option, *repeat, first.span);
    }
}

/// Reports `option` given again at `repeat` after `first`.
pub fn repeated(cx: &Ctxt, option: &str, repeat: Span, first: Span) {
    cx.push(
        Diagnostic::error(
            codes::DUPLICATE_SETTING,
            repeat,
            format!("`{option}` is given more than once"),
        )
        .label(format!("second `{option}`"))
        .secondary(first, format!("first `{option}`"))
        .help(format!("keep one `{option}`")),
    );
}
