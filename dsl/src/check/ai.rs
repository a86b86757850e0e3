//! AI strategy checks (E05xx): tools, model, limits, and options a strategy would ignore; the
//! search options are checked in `reasoning.rs`.

use crate::model::AiDef;

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;
use super::settings::check_once;

/// Checks an AI strategy's options, collecting every diagnostic in `cx`.
pub fn check_ai(cx: &Ctxt, ai: &AiDef) {
    check_once(cx, &ai.model, "model");
    check_once(cx, &ai.system, "system");
    check_once(cx, &ai.tools, "tools");
    check_once(cx, &ai.approve, "approve");
    check_once(cx, &ai.max_iterations, "max_iterations");
    check_once(cx, &ai.temperature, "temperature");
    check_once(cx, &ai.max_tokens, "max_tokens");
    check_once(cx, &ai.hooks, "hooks");

    let tools = ai.tool_refs();
    for (tool, first) in super::repeats::repeats(tools, |t| t.name.value.as_str()) {
        cx.push(
            Diagnostic::error(
                codes::DUPLICATE_TOOL,
                tool.path.span,
                format!("tool `{}` is listed twice", tool.name.value),
            )
            .label("listed again here")
            .secondary(first.path.span, "first listed")
            .help("list each tool once; tools are named by their last path segment"),
        );
    }

    check_approvals(cx, ai);

    if let Some(model) = ai.model.spanned()
        && model.value.trim().is_empty()
    {
        cx.push(
            Diagnostic::error(codes::EMPTY_MODEL, model.span, "the model name is empty")
                .label("empty model alias")
                .help("name a model alias from the host's model table, such as `\"fast\"` or `\"capable\"`"),
        );
    }

    if let Some(n) = ai.max_iterations.spanned()
        && !(1..=i64::from(u32::MAX)).contains(&n.value)
    {
        cx.push(
            Diagnostic::error(
                codes::MAX_ITERATIONS,
                n.span,
                format!(
                    "`max_iterations` is {}; a request needs at least one LLM call",
                    n.value
                ),
            )
            .label("out of range")
            .help(format!(
                "use a count from 1 to {} (the default is 10)",
                u32::MAX
            )),
        );
    }

    if let Some(t) = ai.temperature.spanned()
        && !(0.0..=2.0).contains(&t.value)
    {
        cx.push(
            Diagnostic::error(
                codes::TEMPERATURE,
                t.span,
                format!("temperature {} is outside 0.0..=2.0", t.value),
            )
            .label("out of range")
            .help("use a temperature from 0.0 (deterministic) to 2.0 (most random)"),
        );
    }

    if let Some(n) = ai.max_tokens.spanned()
        && !(1..=i64::from(u32::MAX)).contains(&n.value)
    {
        cx.push(
            Diagnostic::error(
                codes::MAX_TOKENS,
                n.span,
                format!(
                    "`max_tokens` is {}; an answer needs at least one token",
                    n.value
                ),
            )
            .label("out of range")
            .help(format!(
                "use a count from 1 to {}, or leave `max_tokens` out",
                u32::MAX
            )),
        );
    }

    if !ai.kind.uses_tools() {
        let unused = [
            ai.tools.spanned().map(|s| ("tools", s.span)),
            ai.approve.spanned().map(|s| ("approve", s.span)),
            ai.max_iterations
                .spanned()
                .map(|s| ("max_iterations", s.span)),
        ];
        for (option, span) in unused.into_iter().flatten() {
            let (why, help) = if ai.kind.is_single_call() {
                (
                    "makes one LLM call and calls no tools".to_string(),
                    format!(
                        "remove `{option}`, or use `React` (`strategy react` in `.agent` files) to let the model call tools"
                    ),
                )
            } else if option == "tools" || option == "approve" {
                (
                    "searches with the model alone and calls no tools".to_string(),
                    format!(
                        "remove `{option}`, or use `React` (`strategy react` in `.agent` files) to let the model call tools"
                    ),
                )
            } else {
                (
                    "limits its LLM calls with `max_llm_calls`".to_string(),
                    "write `max_llm_calls` instead".to_string(),
                )
            };
            cx.push(
                Diagnostic::error(
                    codes::AI_OPTION_UNUSED,
                    span,
                    format!(
                        "`{option}` has no effect on `{}`: {} {why}",
                        ai.kind.keyword(),
                        ai.kind.title()
                    ),
                )
                .label("never used")
                .help(help),
            );
        }
    }
    super::reasoning::check_reasoning(cx, ai);
}

/// Every tool `approve` names is one of the agent's tools (E0511), named once (E0501).
fn check_approvals(cx: &Ctxt, ai: &AiDef) {
    let approved = ai.approved_tools();
    // A strategy without tools reports `approve` as unused (E0506) instead.
    if approved.is_empty() || !ai.kind.uses_tools() {
        return;
    }
    for (tool, first) in super::repeats::repeats(approved, |t| t.value.as_str()) {
        cx.push(
            Diagnostic::error(
                codes::DUPLICATE_TOOL,
                tool.span,
                format!("tool `{}` is listed twice in `approve`", tool.value),
            )
            .label("listed again here")
            .secondary(first.span, "first listed")
            .help("list each tool once"),
        );
    }
    let tools: std::collections::HashSet<&str> = ai
        .tool_refs()
        .iter()
        .map(|t| t.name.value.as_str())
        .collect();
    for tool in approved {
        if tools.contains(tool.value.as_str()) {
            continue;
        }
        let help =
            super::suggest::did_you_mean(&tool.value, tools.iter().copied()).unwrap_or_else(|| {
                format!(
                    "add `{}` to `tools`, or remove it from `approve`",
                    tool.value
                )
            });
        cx.push(
            Diagnostic::error(
                codes::APPROVE_NOT_A_TOOL,
                tool.span,
                format!(
                    "`approve` names `{}`, which is not a tool of this agent",
                    tool.value
                ),
            )
            .label("not in `tools`")
            .help(help),
        );
    }
}
