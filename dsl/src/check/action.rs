//! `#[action]` signature checks, producing the validated [`ActionShape`] the code generator uses.

use crate::model::{ActionDef, ActionParam, ParamKind};

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;
use super::names::check_identifier;
use super::settings::check_once;

/// How the action reaches the agent's state.
#[derive(Debug, Clone, PartialEq)]
pub enum StateAccess {
    /// It takes no state: it works for any agent.
    None,
    /// `&mut S` (sync actions).
    Mut(syn::Type),
    /// `&S`.
    Shared(syn::Type),
}

/// A supported action signature.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionShape {
    /// How it reaches the state.
    pub state: StateAccess,
    /// Its parameter type; `None` means `NoParams`.
    pub params: Option<syn::Type>,
    /// Whether it is async.
    pub is_async: bool,
}

const SHAPES: &str = "an action is `fn(&mut State)`, `fn(&mut State, Params)`, `fn(&State, Params)`, `fn(Params)` or `fn()`; async actions take `&State` instead of `&mut State`";

/// Checks an action; returns its shape when the signature is supported.
pub fn check_action(cx: &Ctxt, action: &ActionDef) -> Option<ActionShape> {
    check_identifier(cx, &action.name, "action name");
    check_once(cx, &action.description, "description");
    check_once(cx, &action.on_halt, "on_halt");
    check_once(cx, &action.runtime, "crate");
    check_once(cx, &action.exec.timeout, "timeout");
    check_once(cx, &action.exec.max_retries, "max_retries");
    check_once(cx, &action.exec.backoff, "backoff");
    check_once(cx, &action.exec.backoff_cap, "backoff_cap");

    for qualifier in &action.unsupported {
        cx.push(
            Diagnostic::error(
                codes::ACTION_QUALIFIER,
                qualifier.span,
                format!("`#[action]` functions cannot have {}", qualifier.value),
            )
            .label("not supported on actions")
            .help(SHAPES),
        );
    }

    let is_async = action.asyncness.is_some();
    if !is_async && action.exec.any() {
        let span = [
            action.exec.timeout.spanned().map(|s| s.span),
            action.exec.max_retries.spanned().map(|s| s.span),
            action.exec.backoff.spanned().map(|s| s.span),
            action.exec.backoff_cap.spanned().map(|s| s.span),
        ]
        .into_iter()
        .flatten()
        .next()
        .expect("exec.any() holds");
        cx.push(
            Diagnostic::error(
                codes::ACTION_EXEC_SYNC,
                span,
                format!(
                    "execution options apply only to async actions, and `{}` is synchronous",
                    action.name.value
                ),
            )
            .label("has no effect here")
            .help("remove it, or make the action `async fn` if it performs I/O"),
        );
    }

    let shape = signature(cx, action, is_async)?;
    (!cx.has_errors()).then_some(shape)
}

fn signature(cx: &Ctxt, action: &ActionDef, is_async: bool) -> Option<ActionShape> {
    let fail = |param: &ActionParam, message: &str, label: &str| {
        cx.push(
            Diagnostic::error(codes::ACTION_SIGNATURE, param.span, message)
                .label(label)
                .help(SHAPES),
        );
        None
    };
    for param in &action.params {
        match param.kind {
            ParamKind::Receiver => {
                return fail(
                    param,
                    "`#[action]` cannot take `self`",
                    "write a free function whose first parameter is the state",
                );
            }
            ParamKind::ImplTrait => {
                return fail(
                    param,
                    "action parameters cannot be `impl Trait`",
                    "use a concrete type",
                );
            }
            ParamKind::MutRef if is_async => {
                cx.push(
                    Diagnostic::error(
                        codes::ACTION_ASYNC_MUT,
                        param.span,
                        "async actions cannot take `&mut` state",
                    )
                    .label("async actions run outside `cmd`, on a snapshot of the state")
                    .help("take `&State` and return an `Outcome` whose state operations the strategy applies"),
                );
                return None;
            }
            _ => {}
        }
    }
    let state = |param: &ActionParam| match param.kind {
        ParamKind::MutRef => Some(StateAccess::Mut(param.ty.clone())),
        ParamKind::SharedRef => Some(StateAccess::Shared(param.ty.clone())),
        _ => None,
    };
    let (state, params) = match action.params.as_slice() {
        [] => (StateAccess::None, None),
        [only] => match state(only) {
            Some(access) => (access, None),
            None => (StateAccess::None, Some(only.ty.clone())),
        },
        [first, second] => match (state(first), state(second)) {
            (Some(access), None) => (access, Some(second.ty.clone())),
            (None, Some(_)) => {
                return fail(
                    first,
                    "the state must come first, as `&mut State` or `&State`",
                    "expected the state here",
                );
            }
            (Some(_), Some(_)) => {
                return fail(
                    second,
                    "an action's parameters must be taken by value",
                    "a reference here",
                );
            }
            (None, None) => {
                return fail(
                    first,
                    "an action with two parameters takes the state first, as `&mut State` or `&State`",
                    "expected the state here",
                );
            }
        },
        [_, _, extra, ..] => {
            return fail(
                extra,
                "an action takes at most two parameters: the state and the parameters",
                "extra parameter",
            );
        }
    };
    Some(ActionShape {
        state,
        params,
        is_async,
    })
}
