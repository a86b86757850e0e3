//! Options given more than once.

use crate::model::Setting;

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;

/// Reports every repeat of a once-only option.
pub fn check_once<T>(cx: &Ctxt, setting: &Setting<T>, option: &str) {
    let Some(first) = setting.spanned() else {
        return;
    };
    for repeat in setting.repeats() {
        cx.push(
            Diagnostic::error(
                codes::DUPLICATE_SETTING,
                *repeat,
                format!("`{option}` is given more than once"),
            )
            .label(format!("second `{option}`"))
            .secondary(first.span, format!("first `{option}`"))
            .help(format!("keep one `{option}`")),
        );
    }
}
