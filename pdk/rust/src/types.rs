//! The MCP (2025-11-25) data types that cross the plugin boundary, as in the
//! Go package `abi` (`abi/mcp.go`). Plugins produce them; the host validates
//! them and downgrades them to the protocol version each client negotiated.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::schema::Schema;

/// The free-form `_meta` object MCP allows on most types.
pub type Meta = Map<String, Value>;

fn is_false(b: &bool) -> bool {
    !*b
}

/// Builder methods on `$ty`, each setting one `Option` field to
/// `Some(value.into())` and returning the value.
macro_rules! setters {
    ($ty:ident { $( $(#[$attr:meta])* $method:ident => $field:ident: $arg:ty ),* $(,)? }) => {
        impl $ty {
            $(
                $(#[$attr])*
                pub fn $method(mut self, $field: $arg) -> $ty {
                    self.$field = Some($field.into());
                    self
                }
            )*
        }
    };
}

/// An icon a client may show for a tool, prompt or resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    pub src: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
    /// `"light"` or `"dark"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

impl Icon {
    /// An icon at `src` (a URL or a `data:` URI) of the given MIME type.
    pub fn new(src: impl Into<String>, mime_type: impl Into<String>) -> Icon {
        Icon { src: src.into(), mime_type: Some(mime_type.into()), ..Icon::default() }
    }
}

/// Hints on content and resources.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// `"user"` and/or `"assistant"`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audience: Vec<String>,
    /// 0 (least important) to 1 (most important).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// An ISO 8601 timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// Hints about a tool's behaviour.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// How a tool may be run (2025-11-25 tasks).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// `"forbidden"`, `"optional"` or `"required"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<String>,
}

/// A tool a plugin offers (as `list_tools` returns it).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub input_schema: Schema,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Schema>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of a tool call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    #[serde(default)]
    pub content: Vec<Content>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_error: bool,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Content block types.
pub const CONTENT_TEXT: &str = "text";
pub const CONTENT_IMAGE: &str = "image";
pub const CONTENT_AUDIO: &str = "audio";
pub const CONTENT_RESOURCE_LINK: &str = "resource_link";
pub const CONTENT_RESOURCE: &str = "resource";

/// One content block. `kind` (JSON `type`) selects which fields are
/// meaningful: `text`: `text`; `image` and `audio`: `data` (base64) and
/// `mime_type`; `resource_link`: `uri`, `name`, `title`, `description`,
/// `mime_type`, `size`, `icons`; `resource`: `resource`. Build blocks with
/// [`text`](crate::text), [`image`](crate::image) and the other helpers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Content {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<ResourceContents>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

setters!(Content {
    /// Sets the block's annotations.
    with_annotations => annotations: Annotations,
    /// Sets the block's title (resource links).
    with_title => title: impl Into<String>,
    /// Sets the block's description (resource links).
    with_description => description: impl Into<String>,
    /// Sets the size in bytes (resource links).
    with_size => size: i64,
    /// Sets the block's `_meta`.
    with_meta => meta: Meta,
});

impl Content {
    /// The block's text, `""` for blocks that are not text.
    pub fn text_str(&self) -> &str {
        if self.kind == CONTENT_TEXT {
            self.text.as_deref().unwrap_or("")
        } else {
            ""
        }
    }
}

/// The contents of a resource: `text`, or `blob` (base64).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    #[serde(default)]
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// An argument a prompt accepts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub required: bool,
}

impl PromptArgument {
    /// A required argument: `get_prompt` fails with -32602 when it is
    /// missing or blank.
    pub fn required(name: impl Into<String>, description: impl Into<String>) -> PromptArgument {
        PromptArgument { name: name.into(), description: description.into(), required: true, title: None }
    }

    /// An optional argument.
    pub fn optional(name: impl Into<String>, description: impl Into<String>) -> PromptArgument {
        PromptArgument { name: name.into(), description: description.into(), required: false, title: None }
    }
}

setters!(PromptArgument {
    /// Sets the argument's display title.
    with_title => title: impl Into<String>,
});

/// A prompt a plugin offers (as `list_prompts` returns it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// One message of a prompt.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// [`ROLE_USER`](crate::ROLE_USER) or [`ROLE_ASSISTANT`](crate::ROLE_ASSISTANT).
    pub role: String,
    pub content: Content,
}

/// The result of `get_prompt`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// Defaults to the prompt's description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub messages: Vec<PromptMessage>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A concrete resource a plugin offers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    pub uri: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Resource {
    /// A resource at `uri` called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Resource {
        Resource { uri: uri.into(), name: name.into(), ..Resource::default() }
    }
}

setters!(Resource {
    /// Sets the MIME type of the resource's contents.
    mime_type => mime_type: impl Into<String>,
    /// Sets the description.
    description => description: impl Into<String>,
    /// Sets the display title.
    title => title: impl Into<String>,
    /// Sets the size in bytes.
    size => size: i64,
});

/// A family of resources described by an RFC 6570 URI template.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    pub uri_template: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ResourceTemplate {
    /// A template (e.g. `"weather://{city}/current"`) called `name`.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> ResourceTemplate {
        ResourceTemplate { uri_template: uri_template.into(), name: name.into(), ..ResourceTemplate::default() }
    }
}

setters!(ResourceTemplate {
    /// Sets the MIME type of the resources' contents.
    mime_type => mime_type: impl Into<String>,
    /// Sets the description.
    description => description: impl Into<String>,
    /// Sets the display title.
    title => title: impl Into<String>,
});

/// The result of `read_resource`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    pub contents: Vec<ResourceContents>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// What is being completed (`complete`): `kind` (JSON `type`) is `"prompt"`
/// (with `name`) or `"resource"` (with `uri`, the template).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompleteRef {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub uri: String,
}

/// The argument being completed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompleteArgument {
    pub name: String,
    #[serde(default)]
    pub value: String,
}

/// A list of completion values (at most 100).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    pub values: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<usize>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub has_more: bool,
}

/// Tool list as `list_tools` writes it.
#[derive(Serialize)]
pub(crate) struct ListToolsResult<'a> {
    pub tools: Vec<&'a Tool>,
}

#[derive(Serialize)]
pub(crate) struct ListPromptsResult<'a> {
    pub prompts: Vec<&'a Prompt>,
}

#[derive(Serialize)]
pub(crate) struct ListResourcesResult {
    pub resources: Vec<Resource>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListResourceTemplatesResult<'a> {
    pub resource_templates: Vec<&'a ResourceTemplate>,
}

#[derive(Serialize)]
pub(crate) struct CompleteResult {
    pub completion: Completion,
}

/// The request of `call_tool`.
#[derive(Deserialize, Default)]
pub(crate) struct CallToolParams {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub arguments: Option<Value>,
}

/// The request of `get_prompt`.
#[derive(Deserialize, Default)]
pub(crate) struct GetPromptParams {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub arguments: Option<std::collections::BTreeMap<String, String>>,
}

/// The request of `read_resource`.
#[derive(Deserialize, Default)]
pub(crate) struct ReadResourceParams {
    #[serde(default)]
    pub uri: String,
}

/// The request of `complete`.
#[derive(Deserialize, Default)]
pub(crate) struct CompleteParams {
    #[serde(rename = "ref")]
    pub reference: CompleteRef,
    pub argument: CompleteArgument,
    #[serde(default)]
    pub context: Option<CompleteContext>,
}

#[derive(Deserialize, Default)]
pub(crate) struct CompleteContext {
    #[serde(default)]
    pub arguments: Option<std::collections::BTreeMap<String, String>>,
}
