//! The public surface, pinned: what `stratagem`, `agent-dsl`, `agent-runtime` and
//! `agent-macros` show users at their roots (items not `#[doc(hidden)]`). Internals that
//! generated code or `agentc` need stay reachable but hidden. A change here is an API change:
//! review it, then update `tests/public_api.txt` to the list the failure prints (or run the test
//! with `STRATAGEM_BLESS_API=1`, which writes it).

use std::path::Path;

use syn::{Attribute, Item, Visibility};

/// Whether `#[doc(hidden)]` is among the attributes.
fn hidden(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("doc") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "hidden")
    })
}

fn public(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

fn use_tree(prefix: &str, tree: &syn::UseTree, out: &mut Vec<String>) {
    match tree {
        syn::UseTree::Path(p) => use_tree(&format!("{prefix}{}::", p.ident), &p.tree, out),
        syn::UseTree::Name(n) => out.push(format!("use {prefix}{}", n.ident)),
        syn::UseTree::Rename(r) => out.push(format!("use {prefix}{} as {}", r.ident, r.rename)),
        syn::UseTree::Glob(_) => out.push(format!("use {prefix}*")),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_tree(prefix, t, out)),
    }
}

/// The visible items at the root of the crate whose root file is `path`.
fn root_items(krate: &str, path: &Path) -> Vec<String> {
    let file = syn::parse_file(&std::fs::read_to_string(path).unwrap()).unwrap();
    items_of(krate, &file.items)
}

fn items_of(krate: &str, items: &[Item]) -> Vec<String> {
    let mut out = Vec::new();
    for item in items {
        let (attrs, vis, what) = match item {
            // An inline module (the facade's `prelude`, `guide`) is listed with its contents.
            Item::Mod(m) if m.content.is_some() && public(&m.vis) && !hidden(&m.attrs) => {
                out.push(format!("{krate}: mod {}", m.ident));
                let inner = &m.content.as_ref().expect("an inline module").1;
                let prefix = format!("{krate}: {}::", m.ident);
                out.extend(
                    items_of(krate, inner)
                        .into_iter()
                        .map(|item| item.replacen(&format!("{krate}: "), &prefix, 1)),
                );
                continue;
            }
            Item::Mod(m) => (&m.attrs, &m.vis, format!("mod {}", m.ident)),
            Item::Fn(f) => (&f.attrs, &f.vis, format!("fn {}", f.sig.ident)),
            Item::Struct(s) => (&s.attrs, &s.vis, format!("struct {}", s.ident)),
            Item::Enum(e) => (&e.attrs, &e.vis, format!("enum {}", e.ident)),
            Item::Trait(t) => (&t.attrs, &t.vis, format!("trait {}", t.ident)),
            Item::Const(c) => (&c.attrs, &c.vis, format!("const {}", c.ident)),
            Item::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                let exported = m.attrs.iter().any(|a| a.path().is_ident("macro_export"));
                if exported && !hidden(&m.attrs) {
                    let name = m.ident.as_ref().expect("a named macro");
                    out.push(format!("{krate}: macro {name}!"));
                }
                continue;
            }
            Item::Use(u) => {
                if public(&u.vis) && !hidden(&u.attrs) {
                    let mut uses = Vec::new();
                    use_tree("", &u.tree, &mut uses);
                    out.extend(uses.into_iter().map(|u| format!("{krate}: {u}")));
                }
                continue;
            }
            _ => continue,
        };
        if public(vis) && !hidden(attrs) {
            out.push(format!("{krate}: {what}"));
        }
    }
    out
}

/// `#[macro_export]` macros anywhere in a crate land at its root.
fn exported_macros(krate: &str, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            exported_macros(krate, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("lib.rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            if !text.contains("#[macro_export]") {
                continue;
            }
            let file = syn::parse_file(&text).unwrap();
            for item in &file.items {
                if let Item::Macro(m) = item {
                    let exported = m.attrs.iter().any(|a| a.path().is_ident("macro_export"));
                    if exported && !hidden(&m.attrs) {
                        let name = m.ident.as_ref().expect("a named macro");
                        out.push(format!("{krate}: macro {name}!"));
                    }
                }
            }
        }
    }
}

#[test]
fn the_public_surface_is_the_pinned_one() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut items = Vec::new();
    for (krate, dir) in [
        ("stratagem", "src"),
        ("agent-runtime", "agent-runtime/src"),
        ("agent-dsl", "dsl/src"),
        ("agent-macros", "agent-macros/src"),
    ] {
        items.extend(root_items(krate, &root.join(dir).join("lib.rs")));
        exported_macros(krate, &root.join(dir), &mut items);
    }
    // `proc_macro` entry points are `pub fn`s of agent-macros.
    let actual = items.join("\n") + "\n";
    let path = root.join("tests/public_api.txt");
    if std::env::var_os("STRATAGEM_BLESS_API").is_some() {
        std::fs::write(&path, &actual).unwrap();
    }
    let pinned = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        actual == pinned,
        "the public API changed; if that is intended, make tests/public_api.txt:\n{actual}"
    );
}
