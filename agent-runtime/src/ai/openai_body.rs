//! The JSON body of a chat completion request, written straight into bytes: no `Value` tree
//! of the whole conversation per call, and each tool list's schemas rendered once per
//! provider instead of once per call.

use std::sync::{Arc, Mutex};

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Value, json};

use super::model::{ChatMessage, LlmRequest, Role, ToolCall, ToolChoice, ToolSpec};

/// How many tool lists a provider keeps rendered (agent types sharing one provider each offer
/// their own list); beyond that the oldest is rendered again when it comes back.
const RENDERED_TOOL_LISTS: usize = 16;

/// A tool list, whether it was rendered in strict mode, and its `tools` array.
type Rendered = (Arc<[ToolSpec]>, bool, Arc<str>);

/// Tool lists already rendered as the `tools` array, by the identity of their `Arc` (an
/// agent type's list is built once and shared by all its requests).
#[derive(Default)]
pub(super) struct RenderedTools {
    lists: Mutex<Vec<Rendered>>,
}

impl RenderedTools {
    /// The `tools` array for `tools` (not empty), rendered with or without strict mode.
    fn get(&self, tools: &Arc<[ToolSpec]>, strict: bool) -> Arc<str> {
        let mut lists = self.lists.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, json)) = lists
            .iter()
            .find(|(list, s, _)| *s == strict && Arc::ptr_eq(list, tools))
        {
            return json.clone();
        }
        let json: Arc<str> = render_tools(tools, strict).into();
        if lists.len() == RENDERED_TOOL_LISTS {
            lists.remove(0);
        }
        lists.push((tools.clone(), strict, json.clone()));
        json
    }
}

fn render_tools(tools: &[ToolSpec], strict: bool) -> String {
    let list: Vec<Value> = tools
        .iter()
        .map(|t| {
            let parameters = super::provider_schema(&t.parameters, strict);
            let mut function = json!({
                "name": t.name, "description": t.description, "parameters": parameters,
            });
            if strict {
                function["strict"] = Value::Bool(true);
            }
            json!({"type": "function", "function": function})
        })
        .collect();
    Value::Array(list).to_string()
}

/// The body of `request`: `stream` asks for server-sent events, `strict` marks tools strict,
/// `structured` sends a `response_format` as a JSON schema (else as JSON mode).
pub(super) fn chat_body(
    request: &LlmRequest,
    stream: bool,
    strict: bool,
    structured: bool,
    rendered: &RenderedTools,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + 128 * request.messages.len());
    // Writing into a `Vec` cannot fail, and every part below serializes.
    let mut write = |key: &str, value: &dyn erased::Json| {
        out.push(if out.is_empty() { b'{' } else { b',' });
        let _ = serde_json::to_writer(&mut out, key);
        out.push(b':');
        value.write(&mut out);
    };
    write("model", &request.model);
    write("messages", &Messages(&request.messages));
    if !request.tools.is_empty() {
        let tools = rendered.get(&request.tools, strict);
        write("tools", &erased::Raw(&tools));
        let choice = match &request.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
        };
        write("tool_choice", &choice);
    }
    if let Some(t) = request.temperature {
        write("temperature", &t);
    }
    if let Some(n) = request.max_tokens {
        write("max_tokens", &n);
    }
    if let Some(format) = &request.response_format {
        let format = if structured {
            json!({
                "type": "json_schema",
                "json_schema": {
                    "name": format.name,
                    "schema": super::provider_schema(&format.schema, strict),
                    "strict": strict,
                },
            })
        } else {
            json!({"type": "json_object"})
        };
        write("response_format", &format);
    }
    if stream {
        write("stream", &true);
        write("stream_options", &json!({"include_usage": true}));
    }
    out.push(b'}');
    out
}

/// The conversation as the API wants it.
struct Messages<'a>(&'a [ChatMessage]);

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for message in self.0 {
            seq.serialize_element(&Message(message))?;
        }
        seq.end()
    }
}

struct Message<'a>(&'a ChatMessage);

impl Serialize for Message<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let m = self.0;
        let role = match m.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        };
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("role", role)?;
        // An assistant turn that only calls tools has no content.
        if !m.tool_calls.is_empty() && m.content.is_empty() {
            map.serialize_entry("content", &())?;
        } else {
            map.serialize_entry("content", &m.content)?;
        }
        if !m.tool_calls.is_empty() {
            map.serialize_entry("tool_calls", &Calls(&m.tool_calls))?;
        }
        if let Some(id) = &m.tool_call_id {
            map.serialize_entry("tool_call_id", id)?;
        }
        map.end()
    }
}

struct Calls<'a>(&'a [ToolCall]);

impl Serialize for Calls<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for call in self.0 {
            seq.serialize_element(&Call(call))?;
        }
        seq.end()
    }
}

struct Call<'a>(&'a ToolCall);

impl Serialize for Call<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let call = self.0;
        // The API carries arguments as a string of JSON.
        let arguments = match &call.arguments {
            Value::String(raw) => raw.clone(),
            other => other.to_string(),
        };
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("id", &call.id)?;
        map.serialize_entry("type", "function")?;
        map.serialize_entry(
            "function",
            &json!({"name": call.name, "arguments": arguments}),
        )?;
        map.end()
    }
}

/// Values written into the body: serializable ones, and JSON already rendered.
mod erased {
    use serde::Serialize;

    pub(super) trait Json {
        fn write(&self, out: &mut Vec<u8>);
    }

    impl<T: Serialize + ?Sized> Json for T {
        fn write(&self, out: &mut Vec<u8>) {
            let _ = serde_json::to_writer(out, self);
        }
    }

    /// Rendered JSON, written as it is.
    pub(super) struct Raw<'a>(pub(super) &'a str);

    impl Json for Raw<'_> {
        fn write(&self, out: &mut Vec<u8>) {
            out.extend_from_slice(self.0.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> LlmRequest {
        let mut request = LlmRequest::new(
            "m",
            vec![
                ChatMessage::user("where is order 1?"),
                ChatMessage::assistant(
                    "",
                    vec![ToolCall {
                        id: "c0".into(),
                        name: "lookup_order".into(),
                        arguments: json!({"id": 1}),
                    }],
                ),
                ChatMessage::tool("c0", "{\"status\":\"lost\"}"),
            ],
        );
        request.tools = Arc::from(vec![ToolSpec {
            name: "lookup_order".into(),
            description: "Looks up an order".into(),
            parameters: json!({"$schema": "x", "type": "object", "properties": {"id": {"type": "integer"}}}),
        }]);
        request.tool_choice = ToolChoice::Auto;
        request.max_tokens = Some(64);
        request
    }

    #[test]
    fn the_body_is_the_api_shape() {
        let rendered = RenderedTools::default();
        let body: Value =
            serde_json::from_slice(&chat_body(&request(), true, false, true, &rendered)).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "m",
                "messages": [
                    {"role": "user", "content": "where is order 1?"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "c0", "type": "function", "function": {"name": "lookup_order", "arguments": "{\"id\":1}"}}
                    ]},
                    {"role": "tool", "content": "{\"status\":\"lost\"}", "tool_call_id": "c0"},
                ],
                "tools": [{"type": "function", "function": {
                    "name": "lookup_order", "description": "Looks up an order",
                    "parameters": {"type": "object", "properties": {"id": {"type": "integer"}}},
                }}],
                "tool_choice": "auto",
                "max_tokens": 64,
                "stream": true,
                "stream_options": {"include_usage": true},
            })
        );
    }

    #[test]
    fn a_tool_list_is_rendered_once_per_mode() {
        let rendered = RenderedTools::default();
        let tools = request().tools;
        let first = rendered.get(&tools, false);
        assert!(Arc::ptr_eq(&first, &rendered.get(&tools, false)));
        let strict = rendered.get(&tools, true);
        assert!(!Arc::ptr_eq(&first, &strict));
        assert!(strict.contains("\"strict\":true"), "{strict}");
        // Another list with the same content is its own entry.
        let copy: Arc<[ToolSpec]> = tools.to_vec().into();
        assert!(!Arc::ptr_eq(&first, &rendered.get(&copy, false)));
    }

    #[test]
    fn old_lists_make_room_for_new_ones() {
        let rendered = RenderedTools::default();
        let lists: Vec<Arc<[ToolSpec]>> = (0..=RENDERED_TOOL_LISTS)
            .map(|_| request().tools.to_vec().into())
            .collect();
        for list in &lists {
            rendered.get(list, false);
        }
        assert_eq!(rendered.lists.lock().unwrap().len(), RENDERED_TOOL_LISTS);
    }
}
