//! Plugin checks (E0701-E0705): a built-in plugin exists and gets only its options, with
//! values of the right kind and range; no plugin is mounted twice; no built-in plugin route has
//! exactly the pattern of one of the agent's routes. A custom plugin's options are left to
//! rustc, which checks them on the struct literal the generator writes.

use std::collections::HashMap;

use crate::model::{
    AgentDef, BUILTIN_PLUGINS, OptionValue, PluginDef, PluginOptionType, Span, Spanned,
};

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;
use super::suggest::{did_you_mean, list};

/// Checks the agent's `plugins`.
pub fn check_plugins(cx: &Ctxt, agent: &AgentDef) {
    let Some(plugins) = agent.plugins.get() else {
        return;
    };
    let mut seen: HashMap<String, Span> = HashMap::new();
    for plugin in plugins {
        if plugin.custom.is_none() && plugin.builtin().is_none() {
            unknown_plugin(cx, plugin);
            continue;
        }
        let identity = plugin.identity();
        if let Some(first) = seen.get(&identity) {
            let name = plugin.name.value.as_str();
            let shown = if plugin.custom.is_some() {
                &identity
            } else {
                name
            };
            cx.push(
                Diagnostic::error(
                    codes::DUPLICATE_PLUGIN,
                    plugin.span(),
                    format!("plugin `{shown}` is mounted twice"),
                )
                .label("mounted again here")
                .secondary(*first, "first mounted")
                .help("a plugin keeps one state slice per agent; mount it once and put every option in that one"),
            );
            continue;
        }
        seen.insert(identity, plugin.span());
        let Some(builtin) = plugin.builtin() else {
            continue;
        };
        let mut options: HashMap<&str, Span> = HashMap::new();
        for option in &plugin.options {
            let name = option.name.value.as_str();
            let Some(spec) = builtin.option(name) else {
                let names: Vec<&str> = builtin.options.iter().map(|o| o.name).collect();
                let help = did_you_mean(name, names.iter().copied())
                    .unwrap_or_else(|| format!("`{}` takes {}", builtin.name, list(&names)));
                cx.push(
                    Diagnostic::error(
                        codes::UNKNOWN_PLUGIN_OPTION,
                        option.name.span,
                        format!("unknown option `{name}` for plugin `{}`", builtin.name),
                    )
                    .label("not an option")
                    .help(help),
                );
                continue;
            };
            if let Some(first) = options.get(name) {
                super::settings::repeated(cx, name, option.name.span, *first);
                continue;
            }
            options.insert(spec.name, option.name.span);
            check_value(cx, builtin.name, name, spec.ty, &option.value);
        }
        for pattern in builtin.routes {
            if let Some(route) = agent.routes.iter().find(|r| r.pattern.value == *pattern) {
                cx.push(
                    Diagnostic::error(
                        codes::PLUGIN_ROUTE_COLLISION,
                        route.pattern.span,
                        format!(
                            "route `{pattern}` is also a route of plugin `{}`",
                            builtin.name
                        ),
                    )
                    .label("routed by the agent and by the plugin")
                    .secondary(plugin.span(), format!("`{}` routes `{pattern}`", builtin.name))
                    .help(format!(
                        "`{pattern}` is part of `{}`'s signal contract; route another signal type here, or remove the plugin",
                        builtin.name
                    )),
                );
            }
        }
    }
}

fn unknown_plugin(cx: &Ctxt, plugin: &PluginDef) {
    let names: Vec<&str> = BUILTIN_PLUGINS.iter().map(|p| p.name).collect();
    let help = did_you_mean(&plugin.name.value, names.iter().copied()).unwrap_or_else(|| {
        format!(
            "built-in plugins are {}; for your own plugin type write `custom(path::To::Plugin)`",
            list(&names)
        )
    });
    cx.push(
        Diagnostic::error(
            codes::UNKNOWN_PLUGIN,
            plugin.name.span,
            format!("unknown plugin `{}`", plugin.name.value),
        )
        .label("not a plugin")
        .help(help),
    );
}

fn wrong(cx: &Ctxt, plugin: &str, name: &str, value: &Spanned<OptionValue>, expected: &str) {
    cx.push(
        Diagnostic::error(
            codes::PLUGIN_OPTION_VALUE,
            value.span,
            format!(
                "`{name}` of plugin `{plugin}` takes {expected}, found {}",
                describe(&value.value)
            ),
        )
        .label(format!("expected {expected}"))
        .help(format!("write `{name}` as {expected}")),
    );
}

fn describe(value: &OptionValue) -> &'static str {
    match value {
        OptionValue::Word(w) if w == "true" || w == "false" => "`true` or `false`",
        other => other.describe(),
    }
}

fn check_value(
    cx: &Ctxt,
    plugin: &str,
    name: &str,
    ty: PluginOptionType,
    value: &Spanned<OptionValue>,
) {
    match ty {
        PluginOptionType::Count { min, max } => match value.value {
            OptionValue::Int(n) if (min..=max).contains(&n) => {}
            OptionValue::Int(n) => cx.push(
                Diagnostic::error(
                    codes::PLUGIN_OPTION_VALUE,
                    value.span,
                    format!("`{name}` of plugin `{plugin}` is {n}, outside {min}..={max}"),
                )
                .label("out of range")
                .help(format!("use a whole number from {min} to {max}")),
            ),
            _ => wrong(cx, plugin, name, value, "a whole number"),
        },
        PluginOptionType::Decimal { min, max } => {
            let number = match value.value {
                OptionValue::Int(n) => Some(n as f64),
                OptionValue::Float(f) => Some(f),
                _ => None,
            };
            match number {
                Some(n) if (min..=max).contains(&n) => {}
                Some(n) => cx.push(
                    Diagnostic::error(
                        codes::PLUGIN_OPTION_VALUE,
                        value.span,
                        format!("`{name}` of plugin `{plugin}` is {n}, outside {min}..={max}"),
                    )
                    .label("out of range")
                    .help(format!("use a number from {min} to {max}")),
                ),
                None => wrong(cx, plugin, name, value, "a number"),
            }
        }
        PluginOptionType::Bool => {
            if !matches!(&value.value, OptionValue::Word(w) if w == "true" || w == "false") {
                wrong(cx, plugin, name, value, "`true` or `false`");
            }
        }
        PluginOptionType::Text => {
            if !matches!(value.value, OptionValue::Text(_) | OptionValue::Word(_)) {
                wrong(cx, plugin, name, value, "a string");
            }
        }
        PluginOptionType::Choice(choices) => match &value.value {
            OptionValue::Word(w) | OptionValue::Text(w) if choices.contains(&w.as_str()) => {}
            OptionValue::Word(_) | OptionValue::Text(_) => wrong(
                cx,
                plugin,
                name,
                value,
                &format!("one of {}", list(choices)),
            ),
            _ => wrong(
                cx,
                plugin,
                name,
                value,
                &format!("one of {}", list(choices)),
            ),
        },
        PluginOptionType::Texts => {
            for item in items(value) {
                if !matches!(item.value, OptionValue::Text(_)) {
                    wrong(cx, plugin, name, item, "strings");
                }
            }
        }
        PluginOptionType::ModelRoutes => {
            for item in items(value) {
                let ok = match &item.value {
                    OptionValue::Text(t) => model_route(t).is_some(),
                    _ => false,
                };
                if !ok {
                    wrong(cx, plugin, name, item, "strings such as `\"chat.*=fast\"`");
                }
            }
        }
    }
}

/// The items of a list value, or the value itself.
fn items(value: &Spanned<OptionValue>) -> Vec<&Spanned<OptionValue>> {
    match &value.value {
        OptionValue::List(items) => items.iter().collect(),
        _ => vec![value],
    }
}

/// `"pattern=alias"` split and trimmed; `None` unless both halves are there and the pattern
/// is a valid route pattern.
pub fn model_route(text: &str) -> Option<(&str, &str)> {
    let (pattern, alias) = text.split_once('=')?;
    let (pattern, alias) = (pattern.trim(), alias.trim());
    let valid = !alias.is_empty()
        && !pattern.is_empty()
        && pattern.split('.').all(|s| {
            s == "*"
                || (!s.is_empty()
                    && s.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))
        });
    valid.then_some((pattern, alias))
}
