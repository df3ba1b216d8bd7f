//! Content blocks, results and messages.

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::schema::{JsonSchema, Schema};
use crate::types::*;

/// Roles of prompt and sampling messages.
pub const ROLE_USER: &str = "user";
/// The assistant role.
pub const ROLE_ASSISTANT: &str = "assistant";

/// A text content block.
pub fn text(s: impl Into<String>) -> Content {
    Content { kind: CONTENT_TEXT.into(), text: Some(s.into()), ..Content::default() }
}

/// An image content block holding `data` (encoded as base64) of the given
/// MIME type (`"image/png"`).
pub fn image(data: &[u8], mime_type: &str) -> Content {
    Content {
        kind: CONTENT_IMAGE.into(),
        data: Some(base64(data)),
        mime_type: Some(mime_type.into()),
        ..Content::default()
    }
}

/// An audio content block holding `data` (encoded as base64) of the given
/// MIME type (`"audio/wav"`).
pub fn audio(data: &[u8], mime_type: &str) -> Content {
    Content {
        kind: CONTENT_AUDIO.into(),
        data: Some(base64(data)),
        mime_type: Some(mime_type.into()),
        ..Content::default()
    }
}

/// A `resource_link` content block pointing at `uri`. Add a title,
/// description or size with the `with_*` methods of [`Content`].
pub fn resource_link(uri: &str, name: &str, mime_type: &str) -> Content {
    Content {
        kind: CONTENT_RESOURCE_LINK.into(),
        uri: Some(uri.into()),
        name: Some(name.into()),
        mime_type: non_empty(mime_type),
        ..Content::default()
    }
}

/// An embedded resource content block with text.
pub fn embedded_text(uri: &str, mime_type: &str, text: &str) -> Content {
    Content {
        kind: CONTENT_RESOURCE.into(),
        resource: Some(ResourceContents {
            uri: uri.into(),
            mime_type: non_empty(mime_type),
            text: Some(text.into()),
            ..ResourceContents::default()
        }),
        ..Content::default()
    }
}

/// An embedded resource content block with binary data (encoded as base64).
pub fn embedded_blob(uri: &str, mime_type: &str, data: &[u8]) -> Content {
    Content {
        kind: CONTENT_RESOURCE.into(),
        resource: Some(ResourceContents {
            uri: uri.into(),
            mime_type: non_empty(mime_type),
            blob: Some(base64(data)),
            ..ResourceContents::default()
        }),
        ..Content::default()
    }
}

fn non_empty(s: &str) -> Option<String> {
    if s.is_empty() {
        None
    } else {
        Some(s.to_string())
    }
}

/// A tool result made of `content`.
pub fn result(content: Vec<Content>) -> CallToolResult {
    CallToolResult { content, ..CallToolResult::default() }
}

/// A tool result reporting a tool execution error (`isError`) with `msg` as
/// its text. Returning a plain [`Error`] from a tool handler has the same
/// effect.
pub fn error_result(msg: impl Into<String>) -> CallToolResult {
    CallToolResult { content: vec![text(msg)], is_error: true, ..CallToolResult::default() }
}

/// A tool result whose `structuredContent` is `v` and whose content is `v`'s
/// JSON as text, as MCP recommends for compatibility. A `v` that is not a
/// JSON object is wrapped as `{"result": v}`. If `v` cannot be encoded the
/// result is an [`error_result`].
pub fn structured_result<T: Serialize + ?Sized>(v: &T) -> CallToolResult {
    match try_structured(v) {
        Ok(r) => r,
        Err(e) => error_result(e.to_string()),
    }
}

fn try_structured<T: Serialize + ?Sized>(v: &T) -> Result<CallToolResult> {
    // The text keeps the type's field order; structuredContent is a value.
    let json = serde_json::to_string(v)?;
    let value = serde_json::to_value(v)?;
    let structured = if value.is_object() {
        value
    } else {
        let mut m = serde_json::Map::new();
        m.insert("result".into(), value);
        Value::Object(m)
    };
    Ok(CallToolResult { content: vec![text(json)], structured_content: Some(structured), ..CallToolResult::default() })
}

/// A `read_resource` result with one text content.
pub fn text_resource(uri: &str, mime_type: &str, text: &str) -> ReadResourceResult {
    ReadResourceResult {
        contents: vec![ResourceContents {
            uri: uri.into(),
            mime_type: non_empty(mime_type),
            text: Some(text.into()),
            ..ResourceContents::default()
        }],
        meta: None,
    }
}

/// A `read_resource` result with one binary content (encoded as base64).
pub fn blob_resource(uri: &str, mime_type: &str, data: &[u8]) -> ReadResourceResult {
    ReadResourceResult {
        contents: vec![ResourceContents {
            uri: uri.into(),
            mime_type: non_empty(mime_type),
            blob: Some(base64(data)),
            ..ResourceContents::default()
        }],
        meta: None,
    }
}

/// A prompt message from the user with `text`.
pub fn user_message(text_: impl Into<String>) -> PromptMessage {
    PromptMessage { role: ROLE_USER.into(), content: text(text_) }
}

/// A prompt message from the assistant with `text`.
pub fn assistant_message(text_: impl Into<String>) -> PromptMessage {
    PromptMessage { role: ROLE_ASSISTANT.into(), content: text(text_) }
}

/// A `get_prompt` result made of `msgs`. The prompt's description is filled
/// in when the result has none.
pub fn messages(msgs: Vec<PromptMessage>) -> GetPromptResult {
    GetPromptResult { messages: msgs, ..GetPromptResult::default() }
}

/// Standard base64 (with padding) of `data`.
pub fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity((data.len() + 2) / 3 * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// What a tool handler may return. The PDK turns it into the call's result
/// and, for structured results, declares the tool's `outputSchema`:
///
/// | type | result |
/// |---|---|
/// | [`CallToolResult`] | returned as is |
/// | `String`, `&'static str` | one text block |
/// | [`Content`], `Vec<Content>` | those content blocks |
/// | structs and enums of [`schema!`](crate::schema!) / [`schema_enum!`](crate::schema_enum!) | structured output with an output schema |
/// | [`Json<T>`] (any `Serialize + JsonSchema`) | structured output with an output schema |
/// | `serde_json::Value` | structured output, no output schema |
///
/// Structured output puts the value in `structuredContent` (wrapped as
/// `{"result": ...}` when it is not an object) and its JSON in a text block.
pub trait IntoToolResult {
    /// The output schema the tool declares (`None`: none).
    fn output_schema() -> Option<Schema> {
        None
    }
    /// The call's result.
    fn into_tool_result(self) -> Result<CallToolResult>;
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult> {
        Ok(result(vec![text(self)]))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult> {
        Ok(result(vec![text(self)]))
    }
}

impl IntoToolResult for Content {
    fn into_tool_result(self) -> Result<CallToolResult> {
        Ok(result(vec![self]))
    }
}

impl IntoToolResult for Vec<Content> {
    fn into_tool_result(self) -> Result<CallToolResult> {
        Ok(result(self))
    }
}

impl IntoToolResult for Value {
    fn into_tool_result(self) -> Result<CallToolResult> {
        try_structured(&self)
    }
}

/// Structured output of any `Serialize + JsonSchema` value, e.g.
/// `Json(vec![1, 2, 3])` (sent as `{"result":[1,2,3]}`) or a map.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn output_schema() -> Option<Schema> {
        Some(T::json_schema().for_output())
    }
    fn into_tool_result(self) -> Result<CallToolResult> {
        try_structured(&self.0)
    }
}

#[doc(hidden)]
pub fn __structured<T: Serialize>(v: &T) -> Result<CallToolResult> {
    try_structured(v)
}

#[doc(hidden)]
pub fn __output_schema<T: JsonSchema>() -> Option<Schema> {
    Some(T::json_schema().for_output())
}

impl From<Error> for CallToolResult {
    /// The tool execution error result of `e`.
    fn from(e: Error) -> CallToolResult {
        error_result(e.message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_encoding() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xff, 0xfe, 0x00]), "//4A");
    }

    #[test]
    fn content_json() {
        assert_eq!(serde_json::to_string(&text("")).unwrap(), r#"{"type":"text","text":""}"#);
        assert_eq!(
            serde_json::to_string(&image(b"foo", "image/png")).unwrap(),
            r#"{"type":"image","data":"Zm9v","mimeType":"image/png"}"#
        );
        assert_eq!(
            serde_json::to_string(&embedded_text("a://b", "", "x")).unwrap(),
            r#"{"type":"resource","resource":{"uri":"a://b","text":"x"}}"#
        );
        let r = structured_result(&vec![1, 2]);
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"content":[{"type":"text","text":"[1,2]"}],"structuredContent":{"result":[1,2]}}"#
        );
    }
}
