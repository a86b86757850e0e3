//! What `#[derive(Params)]` generates: a parameter struct's fields as trees' arguments see them
//! (`impl bt::Params`), so `action move_to(sped = 2)` is a compile error.
//!
//! Names are the ones serde reads (`rename`, `rename_all`, `alias`), fields serde never reads
//! (`skip`, `skip_deserializing`) are left out, and a field is optional when serde fills it in
//! (`Option`, `default`). Types are classified by how they are written: the derive runs before
//! types are resolved, so a type it does not know (an alias, a nested struct) accepts anything
//! and its `Deserialize` judges the value at run time.

use proc_macro2::TokenStream;
use quote::quote;

/// `impl Params for Type`.
pub fn derive(input: TokenStream) -> TokenStream {
    let input: syn::DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    let mut krate = quote!(::stratagem);
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("params")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let path: syn::Path = meta.value()?.parse()?;
                krate = quote!(#path);
                Ok(())
            } else {
                Err(meta.error("unknown `params` option: the one option is `crate = path`"))
            }
        });
        if let Err(e) = parsed {
            let message = format!("error[E0105]: {e}");
            return syn::Error::new(e.span(), message).to_compile_error();
        }
    }
    let container = SerdeAttrs::read(&input.attrs);
    let (fields, open) = match &input.data {
        syn::Data::Struct(syn::DataStruct {
            fields: syn::Fields::Named(named),
            ..
        }) => {
            let mut open = false;
            let mut fields = Vec::new();
            for field in &named.named {
                let attrs = SerdeAttrs::read(&field.attrs);
                if attrs.flatten {
                    open = true;
                    continue;
                }
                if attrs.skip {
                    continue;
                }
                let written = field
                    .ident
                    .as_ref()
                    .map(|i| syn::ext::IdentExt::unraw(i).to_string())
                    .unwrap_or_default();
                let name = attrs
                    .rename
                    .clone()
                    .unwrap_or_else(|| rename_field(&written, container.rename_all.as_deref()));
                let ty = if attrs.custom {
                    quote!(#krate::bt::ArgType::Any)
                } else {
                    arg_type(&field.ty, &krate)
                };
                let required = !attrs.default && !container.default && !is_option(&field.ty);
                let aliases = &attrs.aliases;
                fields.push(quote! {
                    #krate::bt::ParamField {
                        name: #name,
                        aliases: &[#(#aliases),*],
                        ty: #ty,
                        required: #required,
                    }
                });
            }
            (fields, open)
        }
        // Tuple and unit structs, enums: what names they take is serde's business.
        _ => (Vec::new(), true),
    };
    let name = &input.ident;
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        impl #impl_generics #krate::bt::Params for #name #type_generics #where_clause {
            const FIELDS: &'static [#krate::bt::ParamField] = &[#(#fields),*];
            const OPEN: bool = #open;
        }
    }
}

/// The serde attributes that change which names and values a struct reads.
#[derive(Default)]
struct SerdeAttrs {
    rename: Option<String>,
    rename_all: Option<String>,
    aliases: Vec<String>,
    default: bool,
    skip: bool,
    flatten: bool,
    /// `with`/`deserialize_with`: the value is read by the user's function.
    custom: bool,
}

impl SerdeAttrs {
    fn read(attrs: &[syn::Attribute]) -> Self {
        let mut out = SerdeAttrs::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
            // A malformed attribute is serde's to report.
            let _ = attr.parse_nested_meta(|meta| {
                let key = meta
                    .path
                    .get_ident()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                match key.as_str() {
                    "rename" => out.rename = deserialize_name(&meta)?.or(out.rename.take()),
                    "rename_all" => {
                        out.rename_all = deserialize_name(&meta)?.or(out.rename_all.take())
                    }
                    "alias" => out.aliases.extend(deserialize_name(&meta)?),
                    "default" => {
                        out.default = true;
                        skip_value(&meta)?;
                    }
                    "skip" | "skip_deserializing" => out.skip = true,
                    "flatten" => out.flatten = true,
                    "with" | "deserialize_with" => {
                        out.custom = true;
                        skip_value(&meta)?;
                    }
                    _ => skip_value(&meta)?,
                }
                Ok(())
            });
        }
        out
    }
}

/// `key = "name"` or `key(deserialize = "name", serialize = "...")`: the name deserializing reads.
fn deserialize_name(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<Option<String>> {
    if meta.input.peek(syn::Token![=]) {
        let lit: syn::LitStr = meta.value()?.parse()?;
        return Ok(Some(lit.value()));
    }
    let mut name = None;
    if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| {
            let lit: syn::LitStr = inner.value()?.parse()?;
            if inner.path.is_ident("deserialize") {
                name = Some(lit.value());
            }
            Ok(())
        })?;
    }
    Ok(name)
}

fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        let _: TokenStream = content.parse()?;
    }
    Ok(())
}

/// serde's `rename_all` rules, applied to a field written in snake case.
fn rename_field(field: &str, rule: Option<&str>) -> String {
    let pascal = || {
        field
            .split('_')
            .map(|part| {
                let mut chars = part.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_ascii_uppercase().to_string() + chars.as_str()
                })
            })
            .collect::<String>()
    };
    match rule {
        Some("UPPERCASE" | "SCREAMING_SNAKE_CASE") => field.to_ascii_uppercase(),
        Some("PascalCase") => pascal(),
        Some("camelCase") => {
            let pascal = pascal();
            let mut chars = pascal.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_lowercase().to_string() + chars.as_str()
            })
        }
        Some("kebab-case") => field.replace('_', "-"),
        Some("SCREAMING-KEBAB-CASE") => field.to_ascii_uppercase().replace('_', "-"),
        _ => field.to_string(),
    }
}

fn is_option(ty: &syn::Type) -> bool {
    last_segment(ty).is_some_and(|s| s.ident == "Option")
}

fn last_segment(ty: &syn::Type) -> Option<&syn::PathSegment> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        syn::Type::Group(g) => last_segment(&g.elem),
        syn::Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

fn first_type_arg(segment: &syn::PathSegment) -> Option<&syn::Type> {
    match &segment.arguments {
        syn::PathArguments::AngleBracketed(args) => args.args.iter().find_map(|a| match a {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        }),
        _ => None,
    }
}

/// The `ArgType` a field of type `ty` gets. Types nest no deeper than the macro nesting limit
/// the front-ends apply to every item.
fn arg_type(ty: &syn::Type, krate: &TokenStream) -> TokenStream {
    let rt = quote!(#krate::bt::ArgType);
    let any = quote!(#rt::Any);
    let inner = |t: Option<&syn::Type>| t.map_or_else(|| any.clone(), |t| arg_type(t, krate));
    match ty {
        syn::Type::Reference(r) => arg_type(&r.elem, krate),
        syn::Type::Group(g) => arg_type(&g.elem, krate),
        syn::Type::Paren(p) => arg_type(&p.elem, krate),
        syn::Type::Array(a) => {
            let e = arg_type(&a.elem, krate);
            quote!(#rt::List(&#e))
        }
        syn::Type::Slice(s) => {
            let e = arg_type(&s.elem, krate);
            quote!(#rt::List(&#e))
        }
        syn::Type::Path(_) => {
            let Some(segment) = last_segment(ty) else {
                return any;
            };
            let word = segment.ident.to_string();
            match word.as_str() {
                "String" | "str" | "char" => quote!(#rt::Str),
                "bool" => quote!(#rt::Bool),
                "f32" | "f64" => quote!(#rt::Float),
                "u128" => quote!(#rt::Int { min: 0, max: i128::MAX }),
                "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64"
                | "usize" => {
                    let int = syn::Ident::new(&word, segment.ident.span());
                    quote!(#rt::Int { min: #int::MIN as i128, max: #int::MAX as i128 })
                }
                "Option" => {
                    let t = inner(first_type_arg(segment));
                    quote!(#rt::Optional(&#t))
                }
                "Vec" | "VecDeque" | "LinkedList" | "HashSet" | "BTreeSet" | "BinaryHeap" => {
                    let t = inner(first_type_arg(segment));
                    quote!(#rt::List(&#t))
                }
                // Read as what they hold.
                "Box" | "Rc" | "Arc" | "Cow" => inner(first_type_arg(segment)),
                _ => any,
            }
        }
        _ => any,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(source: &str) -> String {
        derive(source.parse().unwrap()).to_string()
    }

    #[test]
    fn serde_names_and_defaults_are_read() {
        let out = fields(
            r#"#[serde(rename_all = "camelCase")]
            struct Move {
                max_speed: u8,
                #[serde(rename = "how")] mode: Option<String>,
                #[serde(default, alias = "p")] path: Vec<f64>,
                #[serde(skip)] cache: u32,
                r#type: bool,
            }"#,
        );
        assert!(out.contains("name : \"maxSpeed\""), "{out}");
        assert!(out.contains("name : \"how\""), "{out}");
        assert!(out.contains("aliases : & [\"p\"]"), "{out}");
        assert!(out.contains("name : \"type\""), "{out}");
        assert!(!out.contains("cache"), "{out}");
        assert!(out.contains("const OPEN : bool = false"), "{out}");
        assert_eq!(out.matches("required : true").count(), 2, "{out}");
    }

    #[test]
    fn flattened_structs_and_enums_are_open() {
        assert!(fields("struct A { #[serde(flatten)] rest: B }").contains("OPEN : bool = true"));
        assert!(fields("enum E { A, B }").contains("OPEN : bool = true"));
    }

    #[test]
    fn rename_rules_follow_serde() {
        let rules = [
            ("PascalCase", "MaxSpeed"),
            ("camelCase", "maxSpeed"),
            ("SCREAMING_SNAKE_CASE", "MAX_SPEED"),
            ("kebab-case", "max-speed"),
            ("SCREAMING-KEBAB-CASE", "MAX-SPEED"),
            ("snake_case", "max_speed"),
        ];
        for (rule, expected) in rules {
            assert_eq!(rename_field("max_speed", Some(rule)), expected);
        }
    }
}
