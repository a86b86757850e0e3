//! Checks over a whole `.agent` file: each agent's checks, duplicate items, the names a file
//! writes as paths (which the macros get from Rust itself), and field defaults against types.

use crate::model::{AgentDef, BehaviorDef, Field, Literal, Spanned, StateDef};

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;
use super::names::check_identifier;

/// Runs every check on the agents and behaviours of one file.
pub fn check_file(cx: &Ctxt, agents: &[AgentDef], behaviors: &[BehaviorDef]) {
    super::tree::check_behaviors(cx, behaviors);
    for (agent, first) in super::repeats::repeats(agents, |a| a.name.value.as_str()) {
        cx.push(
            Diagnostic::error(
                codes::DUPLICATE_ITEM,
                agent.name.span,
                format!("agent `{}` is defined twice", agent.name.value),
            )
            .label("defined again here")
            .secondary(first.name.span, "first defined")
            .help("rename or remove one of the two agents"),
        );
    }
    let indexed = super::tree::Behaviors::new(behaviors);
    for agent in agents {
        for action in &agent.actions {
            check_identifier(cx, &action.name, "action");
        }
        if let StateDef::Fields(fields) = &agent.state {
            for field in fields {
                check_default(cx, field);
            }
        }
        super::agent::check_agent_with(cx, agent, &indexed);
    }
}

/// What a default literal can be, by the field's type. Types the checker does not know are left
/// to rustc, which reports them against the generated code.
fn check_default(cx: &Ctxt, field: &Field) {
    let Some(default) = &field.default else {
        return;
    };
    if let Err(why) = fits(&field.ty.value, default) {
        let ty = type_text(&field.ty.value);
        cx.push(
            Diagnostic::error(
                codes::DEFAULT_TYPE,
                why.span,
                format!(
                    "default of `{}` cannot be a `{ty}`: {}",
                    field.name.value, why.value
                ),
            )
            .label(format!("not a `{}`", type_text(why.ty)))
            .secondary(field.ty.span, "declared type")
            .help(
                "change the default or the type; leave the default out to use `Default::default()`",
            ),
        );
    }
}

struct Mismatch<'a> {
    value: String,
    span: crate::model::Span,
    ty: &'a syn::Type,
}

/// The type's text as a user writes it (`Vec<String>`, not `Vec < String >`).
pub fn type_text(ty: &syn::Type) -> String {
    let text = quote::quote!(#ty).to_string();
    let mut out = String::with_capacity(text.len());
    for (i, part) in text.split(' ').enumerate() {
        let prev = out.chars().last();
        let word =
            |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '\'');
        if i > 0
            && (word(prev) && word(part.chars().next()) || prev == Some(',') || prev == Some(';'))
        {
            out.push(' ');
        }
        out.push_str(part);
    }
    out
}

/// The last segment of a path type and its generic arguments.
fn segment(ty: &syn::Type) -> Option<(String, Vec<&syn::Type>)> {
    let syn::Type::Path(p) = ty else {
        return None;
    };
    let last = p.path.segments.last()?;
    let args = match &last.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    Some((last.ident.to_string(), args))
}

fn fits<'a>(ty: &'a syn::Type, lit: &Spanned<Literal>) -> Result<(), Mismatch<'a>> {
    let fail = |value: String| {
        Err(Mismatch {
            value,
            span: lit.span,
            ty,
        })
    };
    let kind = match &lit.value {
        Literal::Str(_) => "a string",
        Literal::Int(_) => "an integer",
        Literal::Float(_) => "a decimal number",
        Literal::Bool(_) => "a boolean",
        Literal::None => "`none`",
        Literal::List(_) => "a list",
    };
    if let syn::Type::Array(array) = ty {
        return match &lit.value {
            Literal::List(items) => items.iter().try_for_each(|i| fits(&array.elem, i)),
            _ => fail(format!("{kind} is not an array")),
        };
    }
    let Some((name, args)) = segment(ty) else {
        return Ok(());
    };
    let int_range: Option<(i128, i128)> = match name.as_str() {
        "u8" => Some((0, u8::MAX.into())),
        "u16" => Some((0, u16::MAX.into())),
        "u32" => Some((0, u32::MAX.into())),
        "u64" => Some((0, u64::MAX.into())),
        "u128" => Some((0, i128::MAX)),
        "usize" => Some((0, u64::MAX.into())),
        "i8" => Some((i8::MIN.into(), i8::MAX.into())),
        "i16" => Some((i16::MIN.into(), i16::MAX.into())),
        "i32" => Some((i32::MIN.into(), i32::MAX.into())),
        "i64" | "isize" => Some((i64::MIN.into(), i64::MAX.into())),
        "i128" => Some((i128::MIN, i128::MAX)),
        _ => None,
    };
    if let Some((lo, hi)) = int_range {
        return match lit.value {
            Literal::Int(i) if (lo..=hi).contains(&i) => Ok(()),
            Literal::Int(i) => fail(format!("{i} is outside {lo}..={hi}")),
            _ => fail(format!("{kind} is not an integer")),
        };
    }
    match (name.as_str(), &lit.value) {
        ("f32" | "f64", Literal::Float(_) | Literal::Int(_)) => Ok(()),
        ("f32" | "f64", _) => fail(format!("{kind} is not a number")),
        ("bool", Literal::Bool(_)) => Ok(()),
        ("bool", _) => fail(format!("{kind} is not `true` or `false`")),
        ("String" | "str", Literal::Str(_)) => Ok(()),
        ("String" | "str", _) => fail(format!("{kind} is not a string")),
        ("char", Literal::Str(s)) if s.chars().count() == 1 => Ok(()),
        ("char", _) => fail(format!("{kind} is not a one-character string")),
        ("Option", Literal::None) => Ok(()),
        ("Option", _) => match args.first() {
            Some(inner) => fits(inner, lit),
            None => Ok(()),
        },
        ("Vec" | "VecDeque" | "HashSet" | "BTreeSet", Literal::List(items)) => match args.first() {
            Some(inner) => items.iter().try_for_each(|i| fits(inner, i)),
            None => Ok(()),
        },
        ("Vec" | "VecDeque" | "HashSet" | "BTreeSet", _) => fail(format!("{kind} is not a list")),
        (_, Literal::None) => fail("`none` needs an `Option` type".to_string()),
        _ => Ok(()),
    }
}
