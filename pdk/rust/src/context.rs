//! The request context and the mcphost host functions.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{json, Map, Value};

use crate::error::{Error, HostError, CODE_INTERNAL_ERROR};
use crate::kernel::{self, sys};
use crate::schema::JsonSchema;
use crate::types::{Content, Meta, CONTENT_TEXT};

/// The MCP request a handler serves.
///
/// Its methods that call mcphost host functions (`progress`, `log`,
/// `create_message`, `elicit`, `list_roots`) make the plugin import that
/// function from `extism:host/user`; declare it in the manifest's
/// `needs.host_functions` so the operator can grant it. Functions a plugin
/// never calls are not imported.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Context {
    /// The JSON-RPC id of the client request (string or number); `None`
    /// for list requests the host did not attribute.
    pub id: Option<Value>,
    /// The request's `_meta`, including `progressToken` when the client
    /// asked for progress notifications.
    pub meta: Meta,
    /// The MCP version the request is served at; empty with a host that
    /// does not say.
    pub protocol_version: String,
    /// What the request's client declared it can do (an MCP
    /// ClientCapabilities object); `Null` when unknown.
    pub client_capabilities: Value,
    /// The caller's subject when the host authenticates requests; empty
    /// otherwise.
    pub subject: String,
    /// The scopes of the caller's token when the host authenticates
    /// requests.
    pub scopes: Vec<String>,
}

/// Log levels of [`Context::log`] (RFC 5424, as MCP uses them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl Level {
    /// The MCP name of the level (`"info"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Notice => "notice",
            Level::Warning => "warning",
            Level::Error => "error",
            Level::Critical => "critical",
            Level::Alert => "alert",
            Level::Emergency => "emergency",
        }
    }
}

fn alloc_json<T: Serialize + ?Sized>(v: &T) -> u64 {
    match serde_json::to_vec(v) {
        Ok(b) => kernel::alloc_bytes(&b),
        Err(_) => 0,
    }
}

/// Decodes the JSON a host function returned at `offset` (and frees it),
/// or returns the error it reported.
fn host_result<T: DeserializeOwned>(function: &str, offset: u64) -> Result<T, HostError> {
    let b = kernel::take_block(offset);
    let fail = |code: i32, message: String| HostError { function: function.to_string(), code, message };
    if b.is_empty() {
        return Err(fail(CODE_INTERNAL_ERROR, "no result".into()));
    }
    let v: Value =
        serde_json::from_slice(&b).map_err(|e| fail(CODE_INTERNAL_ERROR, format!("invalid result: {}", e)))?;
    if let Some(e) = v.get("error").filter(|e| e.is_object()) {
        let code = e.get("code").and_then(Value::as_i64).unwrap_or(CODE_INTERNAL_ERROR as i64) as i32;
        let message = e.get("message").and_then(Value::as_str).unwrap_or("error").to_string();
        return Err(fail(code, message));
    }
    serde_json::from_value(v).map_err(|e| fail(CODE_INTERNAL_ERROR, format!("invalid result: {}", e)))
}

impl Context {
    /// The request's `_meta.progressToken`, `None` when the client did not
    /// ask for progress.
    pub fn progress_token(&self) -> Option<&Value> {
        self.meta.get("progressToken").filter(|v| !v.is_null())
    }

    /// Reports progress of the request to the client (host function
    /// `notify_progress`). `total <= 0` means the total is unknown;
    /// `message` may be empty. Progress should increase with each call.
    /// Without a progress token in the request it does nothing.
    pub fn progress(&self, progress: f64, total: f64, message: &str) {
        let token = match self.progress_token() {
            Some(t) => t.clone(),
            None => return,
        };
        let mut p = json!({ "progressToken": token, "progress": progress });
        if total > 0.0 {
            p["total"] = json!(total);
        }
        if !message.is_empty() {
            p["message"] = json!(message);
        }
        let input = alloc_json(&p);
        unsafe { sys::notify_progress(input) };
        kernel::free(input);
    }

    /// Sends a log message to the client (host function
    /// `notify_logging_message`). The message's data is `msg` alone when
    /// `data` is `None`, otherwise `{"message": msg, "data": data}`. The host
    /// drops messages below the level the client set (default `info`).
    pub fn log(&self, level: Level, msg: &str, data: Option<Value>) {
        let payload = match data {
            None => json!(msg),
            Some(d) => json!({ "message": msg, "data": d }),
        };
        let input = alloc_json(&json!({ "level": level.as_str(), "data": payload }));
        unsafe { sys::notify_logging_message(input) };
        kernel::free(input);
    }

    /// [`log`](Context::log) at `debug`, without data.
    pub fn debug(&self, msg: &str) {
        self.log(Level::Debug, msg, None)
    }

    /// [`log`](Context::log) at `info`, without data.
    pub fn info(&self, msg: &str) {
        self.log(Level::Info, msg, None)
    }

    /// [`log`](Context::log) at `warning`, without data.
    pub fn warning(&self, msg: &str) {
        self.log(Level::Warning, msg, None)
    }

    /// Asks the client to sample an LLM (MCP sampling; host function
    /// `create_message`).
    pub fn create_message(&self, params: &CreateMessageParams) -> Result<CreateMessageResult, HostError> {
        let input = alloc_json(params);
        let out = unsafe { sys::create_message(input) };
        kernel::free(input);
        host_result("create_message", out)
    }

    /// Asks the user for information through the client (MCP elicitation;
    /// host function `create_elicitation`).
    pub fn elicit(&self, params: &ElicitParams) -> Result<ElicitResult, HostError> {
        let input = alloc_json(params);
        let out = unsafe { sys::create_elicitation(input) };
        kernel::free(input);
        host_result("create_elicitation", out)
    }

    /// Asks the user to fill in a form whose schema is `T`'s (a
    /// [`schema!`](crate::schema!) struct of primitive fields) and decodes
    /// the answer.
    pub fn elicit_as<T: JsonSchema + DeserializeOwned>(&self, message: &str) -> Result<Elicited<T>, Error> {
        let params = ElicitParams {
            message: message.to_string(),
            requested_schema: Some(T::json_schema().to_value()),
            ..ElicitParams::default()
        };
        let r = self.elicit(&params)?;
        match r.action.as_str() {
            ACTION_ACCEPT => {
                let content = Value::Object(r.content.unwrap_or_default());
                let v =
                    serde_json::from_value(content).map_err(|e| Error::new(format!("elicitation answer: {}", e)))?;
                Ok(Elicited::Accepted(v))
            }
            ACTION_DECLINE => Ok(Elicited::Declined),
            _ => Ok(Elicited::Cancelled),
        }
    }

    /// The client's roots (MCP `roots/list`; host function `list_roots`).
    /// Reports whether the client declared the capability at `path`, such
    /// as `["elicitation"]` or `["extensions", "io.modelcontextprotocol/ui"]`.
    pub fn client_can(&self, path: &[&str]) -> bool {
        let mut v = &self.client_capabilities;
        for key in path {
            match v.get(*key) {
                Some(next) if !next.is_null() => v = next,
                _ => return false,
            }
        }
        !path.is_empty()
    }

    /// Reports whether the caller's token has `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// Asks the client several questions at once, each under a key of the
    /// plugin's (host function `request_input`): `questions` maps keys to
    /// `{"method": ..., "params": ...}`. Returns the answers by key. In a
    /// 2026-07-28 request that does not hold every answer yet it fails with
    /// an error whose message starts with "input required": return it, and
    /// the host runs the call again once the client answers.
    pub fn request_input(&self, questions: &Value) -> Result<Map<String, Value>, HostError> {
        #[derive(Deserialize)]
        struct Answers {
            #[serde(default, rename = "inputResponses")]
            input_responses: Map<String, Value>,
        }
        let input = alloc_json(&json!({ "inputRequests": questions }));
        let out = unsafe { sys::request_input(input) };
        kernel::free(input);
        host_result::<Answers>("request_input", out).map(|a| a.input_responses)
    }

    pub fn list_roots(&self) -> Result<Vec<Root>, HostError> {
        #[derive(Deserialize)]
        struct Roots {
            #[serde(default)]
            roots: Vec<Root>,
        }
        let out = unsafe { sys::list_roots() };
        host_result::<Roots>("list_roots", out).map(|r| r.roots)
    }
}

/// Tells clients the plugin's tools changed (host function
/// `notify_tool_list_changed`), e.g. after [`tool`](crate::tool) or
/// [`remove_tool`](crate::remove_tool) during a call.
pub fn notify_tool_list_changed() {
    unsafe { sys::notify_tool_list_changed() }
}

/// Tells clients the plugin's prompts changed (host function
/// `notify_prompt_list_changed`).
pub fn notify_prompt_list_changed() {
    unsafe { sys::notify_prompt_list_changed() }
}

/// Tells clients the plugin's resources changed (host function
/// `notify_resource_list_changed`).
pub fn notify_resource_list_changed() {
    unsafe { sys::notify_resource_list_changed() }
}

/// Tells clients subscribed to `uri` that it changed (host function
/// `notify_resource_updated`).
pub fn notify_resource_updated(uri: &str) {
    let input = alloc_json(&json!({ "uri": uri }));
    unsafe { sys::notify_resource_updated(input) };
    kernel::free(input);
}

/// A message of a sampling request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    pub role: String,
    pub content: Content,
}

impl SamplingMessage {
    /// A user message with `text`.
    pub fn user(text: impl Into<String>) -> SamplingMessage {
        SamplingMessage { role: crate::ROLE_USER.into(), content: crate::text(text) }
    }
    /// An assistant message with `text`.
    pub fn assistant(text: impl Into<String>) -> SamplingMessage {
        SamplingMessage { role: crate::ROLE_ASSISTANT.into(), content: crate::text(text) }
    }
}

/// A model (or model family) the server would like.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelHint {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
}

/// The server's preferences for model selection.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<ModelHint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

/// The params of an MCP `sampling/createMessage` request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageParams {
    pub messages: Vec<SamplingMessage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// `"none"`, `"thisServer"` or `"allServers"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    pub max_tokens: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop_sequences: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// The client's answer to a sampling request.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    pub role: String,
    /// The content block(s) of the reply (MCP sends one block or, since
    /// 2025-11-25, possibly several).
    pub content: Vec<Content>,
    pub model: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl<'de> Deserialize<'de> for CreateMessageResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Raw {
            #[serde(default)]
            role: String,
            #[serde(default)]
            content: Value,
            #[serde(default)]
            model: String,
            #[serde(default)]
            stop_reason: Option<String>,
        }
        let raw = Raw::deserialize(d)?;
        let content = match raw.content {
            Value::Null => Vec::new(),
            Value::Array(_) => serde_json::from_value(raw.content).map_err(serde::de::Error::custom)?,
            one => vec![serde_json::from_value(one).map_err(serde::de::Error::custom)?],
        };
        Ok(CreateMessageResult { role: raw.role, content, model: raw.model, stop_reason: raw.stop_reason })
    }
}

impl CreateMessageResult {
    /// The text of the reply's text blocks.
    pub fn text(&self) -> String {
        self.content.iter().filter(|c| c.kind == CONTENT_TEXT).map(|c| c.text_str()).collect()
    }
}

/// Elicitation actions.
pub const ACTION_ACCEPT: &str = "accept";
/// The user declined.
pub const ACTION_DECLINE: &str = "decline";
/// The user dismissed the request.
pub const ACTION_CANCEL: &str = "cancel";

/// The params of an MCP `elicitation/create` request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitParams {
    /// `"form"` (the default) or `"url"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    pub message: String,
    /// The flat object schema of the form (form mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<Value>,
    /// For url mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// For url mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
}

/// The user's answer to an elicitation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// [`ACTION_ACCEPT`], [`ACTION_DECLINE`] or [`ACTION_CANCEL`].
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
}

/// The outcome of [`Context::elicit_as`].
#[derive(Clone, Debug, PartialEq)]
pub enum Elicited<T> {
    /// The user filled in the form.
    Accepted(T),
    /// The user declined.
    Declined,
    /// The user dismissed the request.
    Cancelled,
}

/// A root (a directory or other URI) the client exposes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Root {
    pub uri: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
}
