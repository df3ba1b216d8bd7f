//! A strict hyper-mcp v2 plugin, written as a plugin author targeting
//! hyper-mcp (hyper-mcp-rs/hyper-mcp v0.8.3) would: serde types without
//! defaults, the Extism kernel imported by hand. Its input types mirror, field
//! for field, what hyper-mcp's host sends (src/plugin.rs: PluginRequestContext
//! and PluginNotificationContext, rmcp's request params with their `_meta`
//! moved into the context), and deny unknown fields where the host's shape
//! is exact. Any export whose input differs fails, naming the difference, so
//! a host that is not wire-exact cannot list or call it.
//!
//! It offers a tool per host function of hyper-mcp, each decoding the
//! function's answer strictly, plus a prompt, a resource, a resource
//! template, completions and on_roots_list_changed.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Map, Value};

// ---- The Extism kernel and hyper-mcp's host functions, by hand. ----

#[link(wasm_import_module = "extism:host/env")]
extern "C" {
    fn input_length() -> u64;
    fn input_load_u8(offset: u64) -> u32;
    fn alloc(length: u64) -> u64;
    fn free(offset: u64);
    fn length(offset: u64) -> u64;
    fn load_u8(offset: u64) -> u32;
    fn store_u8(offset: u64, v: u32);
    fn output_set(offset: u64, length: u64);
    fn error_set(offset: u64);
}

// Every host function hyper-mcp links into a plugin (src/service.rs,
// host_fns), with its wasm signature.
#[link(wasm_import_module = "extism:host/user")]
extern "C" {
    fn create_elicitation(input: u64) -> u64;
    fn create_message(input: u64) -> u64;
    fn get_access_token(input: u64) -> u64;
    fn get_keyring_secret(input: u64) -> u64;
    fn list_roots() -> u64;
    fn notify_logging_message(input: u64);
    fn notify_progress(input: u64);
    fn notify_prompt_list_changed();
    fn notify_resource_list_changed();
    fn notify_resource_updated(input: u64);
    fn notify_tool_list_changed();
    fn notify_url_elicitation_completed(input: u64);
}

fn read_input() -> Vec<u8> {
    unsafe { (0..input_length()).map(|i| input_load_u8(i) as u8).collect() }
}

fn to_block(data: &[u8]) -> u64 {
    unsafe {
        let offset = alloc(data.len() as u64);
        for (i, b) in data.iter().enumerate() {
            store_u8(offset + i as u64, *b as u32);
        }
        offset
    }
}

fn from_block(offset: u64) -> Vec<u8> {
    if offset == 0 {
        return Vec::new();
    }
    unsafe {
        let data = (0..length(offset)).map(|i| load_u8(offset + i) as u8).collect();
        free(offset);
        data
    }
}

fn set_output(data: &[u8]) {
    unsafe { output_set(to_block(data), data.len() as u64) }
}

fn set_error(msg: &str) {
    unsafe { error_set(to_block(msg.as_bytes())) }
}

/// Calls a host function with an input and an output, and decodes the
/// output as T.
fn call_host<T: DeserializeOwned>(name: &str, f: unsafe extern "C" fn(u64) -> u64, input: &Value) -> Result<T, String> {
    let out = from_block(unsafe { f(to_block(input.to_string().as_bytes())) });
    serde_json::from_slice(&out)
        .map_err(|e| format!("{}: unexpected answer {}: {}", name, String::from_utf8_lossy(&out), e))
}

/// Calls a host function with an input and no output.
fn notify(f: unsafe extern "C" fn(u64), input: &Value) {
    unsafe { f(to_block(input.to_string().as_bytes())) }
}

// ---- What hyper-mcp's host sends (src/plugin.rs). ----

/// rmcp's NumberOrString: the JSON-RPC id.
#[derive(Deserialize, Debug)]
#[serde(untagged)]
enum NumberOrString {
    Number(i64),
    String(String),
}

impl NumberOrString {
    fn to_json(&self) -> Value {
        match self {
            NumberOrString::Number(n) => json!(n),
            NumberOrString::String(s) => json!(s),
        }
    }
}

/// PluginRequestContext: both fields always present.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PluginRequestContext {
    id: NumberOrString,
    #[serde(rename = "_meta")]
    meta: Map<String, Value>,
}

/// PluginNotificationContext (the host's field is `_meta`, whatever
/// hyper-mcp's template calls it).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PluginNotificationContext {
    #[serde(rename = "_meta")]
    meta: Map<String, Value>,
}

/// The input of the list exports: the context alone.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListInput {
    context: PluginRequestContext,
}

/// The input of the request exports.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestInput<R> {
    request: R,
    context: PluginRequestContext,
}

/// The input of on_roots_list_changed.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NotificationInput {
    context: PluginNotificationContext,
}

/// rmcp's CallToolRequestParams, its `_meta` moved to the context.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallToolRequestParams {
    name: String,
    arguments: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GetPromptRequestParams {
    name: String,
    arguments: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadResourceRequestParams {
    uri: String,
}

/// rmcp's CompleteRequestParams, with hyper-mcp's "ref/" prefix removed
/// from ref.type.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompleteRequestParams {
    #[serde(rename = "ref")]
    reference: Reference,
    argument: ArgumentInfo,
    context: Option<CompletionContext>,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Reference {
    #[serde(rename = "prompt")]
    Prompt { name: String },
    #[serde(rename = "resource")]
    Resource { uri: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ArgumentInfo {
    name: String,
    value: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompletionContext {
    arguments: Option<Map<String, Value>>,
}

// ---- What hyper-mcp's host functions answer. ----

#[derive(Deserialize)]
struct CreateMessageResult {
    role: String,
    content: SamplingContent,
    model: String,
    #[serde(rename = "stopReason")]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct SamplingContent {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
}

#[derive(Deserialize)]
struct ElicitResult {
    action: String,
    content: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
struct ListRootsResult {
    roots: Vec<Root>,
}

#[derive(Deserialize)]
struct Root {
    uri: String,
    name: Option<String>,
}

/// hyper-mcp's AccessToken (src/oauth2.rs), as serde writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AccessToken {
    access_token: String,
    expires_at: Option<SystemTime>,
    scopes: Option<Vec<String>>,
}

/// std::time::SystemTime as serde writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SystemTime {
    secs_since_epoch: u64,
    nanos_since_epoch: u32,
}

// ---- Exports. ----

/// Runs an export: decodes its input as I, or fails naming why.
fn run<I: DeserializeOwned>(f: impl FnOnce(I) -> Result<Option<Value>, String>) -> i32 {
    let raw = read_input();
    let input: I = match serde_json::from_slice(&raw) {
        Ok(v) => v,
        Err(e) => {
            set_error(&format!(
                "strictv2: the host's envelope is not hyper-mcp's: {} in {}",
                e,
                String::from_utf8_lossy(&raw)
            ));
            return 1;
        }
    };
    match f(input) {
        Ok(Some(out)) => {
            set_output(out.to_string().as_bytes());
            0
        }
        Ok(None) => 0,
        Err(msg) => {
            set_error(&msg);
            1
        }
    }
}

fn id_text(context: &PluginRequestContext) -> String {
    context.id.to_json().to_string()
}

const TOOLS: &[(&str, &str)] = &[
    ("context", "returns the request context it received"),
    ("sample", "asks the client's model (create_message)"),
    ("elicit", "asks the user with a form (create_elicitation)"),
    ("url_elicit", "asks the user to visit a URL, then says it is done (create_elicitation, notify_url_elicitation_completed)"),
    ("roots", "lists the client's roots (list_roots)"),
    ("log", "logs (notify_logging_message)"),
    ("progress", "reports progress (notify_progress)"),
    ("changed", "announces list changes and a resource update"),
    ("token", "gets an OAuth2 access token (get_access_token)"),
    ("secret", "reads a keyring secret (get_keyring_secret)"),
];

#[no_mangle]
pub extern "C" fn list_tools() -> i32 {
    run(|input: ListInput| {
        let tools: Vec<Value> = TOOLS
            .iter()
            .map(|(name, description)| {
                json!({
                    "name": name,
                    "description": format!("{}; listed with id {}", description, id_text(&input.context)),
                    "inputSchema": {"type": "object"},
                })
            })
            .collect();
        Ok(Some(json!({ "tools": tools })))
    })
}

fn text(s: String) -> Value {
    json!({"content": [{"type": "text", "text": s}]})
}

fn arg(args: &Map<String, Value>, name: &str) -> String {
    args.get(name).and_then(Value::as_str).unwrap_or_default().to_string()
}

#[no_mangle]
pub extern "C" fn call_tool() -> i32 {
    run(|input: RequestInput<CallToolRequestParams>| {
        let args = input.request.arguments.unwrap_or_default();
        let ctx = input.context;
        let out = match input.request.name.as_str() {
            "context" => json!({"id": ctx.id.to_json(), "_meta": ctx.meta}).to_string(),
            "sample" => {
                let r: CreateMessageResult = call_host(
                    "create_message",
                    create_message,
                    &json!({
                        "messages": [{"role": "user", "content": {"type": "text", "text": arg(&args, "text")}}],
                        "maxTokens": 16,
                    }),
                )?;
                format!(
                    "{} {} {}: {} ({})",
                    r.role,
                    r.content.kind,
                    r.model,
                    r.content.text.unwrap_or_default(),
                    r.stop_reason.unwrap_or_default()
                )
            }
            "elicit" => {
                let r: ElicitResult = call_host(
                    "create_elicitation",
                    create_elicitation,
                    &json!({
                        "mode": "form",
                        "message": "Proceed?",
                        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
                        "timeout": 30.0,
                    }),
                )?;
                json!({"action": r.action, "content": r.content}).to_string()
            }
            "url_elicit" => {
                let r: ElicitResult = call_host(
                    "create_elicitation",
                    create_elicitation,
                    &json!({
                        "mode": "url",
                        "message": "Approve in your browser",
                        "url": "https://auth.example.com/approve",
                        "elicitationId": "strict-1",
                    }),
                )?;
                if r.action == "accept" {
                    notify(notify_url_elicitation_completed, &json!({"elicitationId": "strict-1"}));
                }
                r.action
            }
            "roots" => {
                let r: ListRootsResult = unsafe {
                    let out = from_block(list_roots());
                    serde_json::from_slice(&out).map_err(|e| format!("list_roots: {}", e))?
                };
                r.roots
                    .iter()
                    .map(|root| format!("{} {}", root.uri, root.name.clone().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join("\n")
            }
            "log" => {
                notify(
                    notify_logging_message,
                    &json!({"level": "info", "logger": "strictv2", "data": {"event": "strict", "id": ctx.id.to_json()}}),
                );
                "logged".to_string()
            }
            "progress" => {
                let token = ctx.meta.get("progressToken").cloned().unwrap_or(Value::Null);
                notify(notify_progress, &json!({"progressToken": token, "progress": 1, "total": 2, "message": "half"}));
                notify(notify_progress, &json!({"progressToken": token, "progress": 2, "total": 2}));
                "progressed".to_string()
            }
            "changed" => {
                unsafe {
                    notify_tool_list_changed();
                    notify_prompt_list_changed();
                    notify_resource_list_changed();
                }
                notify(notify_resource_updated, &json!({"uri": "strict://memo"}));
                "announced".to_string()
            }
            "token" => {
                // hyper-mcp's OauthCredentials, every optional field null.
                let token: Option<AccessToken> = call_host(
                    "get_access_token",
                    get_access_token,
                    &json!({
                        "auth_type": null,
                        "client_id": arg(&args, "client_id"),
                        "client_secret": null,
                        "device_authorization_url": null,
                        "device_auth_timeout_secs": null,
                        "extra_params": null,
                        "scopes": args.get("scopes").cloned().unwrap_or(Value::Null),
                        "token_endpoint_url": arg(&args, "token_url"),
                    }),
                )?;
                match token {
                    None => "no token".to_string(),
                    // Reversed: mcphost redacts the tokens it hands a
                    // plugin from what reaches the client.
                    Some(t) => json!({
                        "access_token_reversed": t.access_token.chars().rev().collect::<String>(),
                        "expires_in_future": t.expires_at.map(|e| e.secs_since_epoch > 1_600_000_000 && e.nanos_since_epoch < 1_000_000_000),
                        "scopes": t.scopes,
                    })
                    .to_string(),
                }
            }
            "secret" => {
                let input = json!({"service": arg(&args, "service"), "user": arg(&args, "user")});
                let secret = from_block(unsafe { get_keyring_secret(to_block(input.to_string().as_bytes())) });
                // Reversed: mcphost redacts a plugin's secret values
                // from what reaches the client.
                format!("secret reversed: {}", String::from_utf8_lossy(&secret).chars().rev().collect::<String>())
            }
            other => return Err(format!("unknown tool {}", other)),
        };
        Ok(Some(text(out)))
    })
}

#[no_mangle]
pub extern "C" fn list_prompts() -> i32 {
    run(|input: ListInput| {
        Ok(Some(json!({"prompts": [{
            "name": "strict_prompt",
            "description": format!("greets someone; listed with id {}", id_text(&input.context)),
            "arguments": [{"name": "who", "description": "whom to greet", "required": true}],
        }]})))
    })
}

#[no_mangle]
pub extern "C" fn get_prompt() -> i32 {
    run(|input: RequestInput<GetPromptRequestParams>| {
        if input.request.name != "strict_prompt" {
            return Err(format!("unknown prompt {}", input.request.name));
        }
        let who = arg(&input.request.arguments.unwrap_or_default(), "who");
        Ok(Some(json!({
            "description": format!("a greeting, request id {}", id_text(&input.context)),
            "messages": [{"role": "user", "content": {"type": "text", "text": format!("Greet {}.", who)}}],
        })))
    })
}

#[no_mangle]
pub extern "C" fn list_resources() -> i32 {
    run(|input: ListInput| {
        Ok(Some(json!({"resources": [{
            "uri": "strict://memo",
            "name": "memo",
            "description": format!("a memo; listed with id {}", id_text(&input.context)),
            "mimeType": "text/plain",
        }]})))
    })
}

#[no_mangle]
pub extern "C" fn list_resource_templates() -> i32 {
    run(|input: ListInput| {
        Ok(Some(json!({"resourceTemplates": [{
            "uriTemplate": "strict://notes/{id}",
            "name": "note",
            "description": format!("a note; listed with id {}", id_text(&input.context)),
            "mimeType": "text/plain",
        }]})))
    })
}

#[no_mangle]
pub extern "C" fn read_resource() -> i32 {
    run(|input: RequestInput<ReadResourceRequestParams>| {
        let uri = input.request.uri;
        let body = if uri == "strict://memo" {
            "memo".to_string()
        } else if let Some(id) = uri.strip_prefix("strict://notes/") {
            format!("note {}", id)
        } else {
            return Err(format!("no resource {}", uri));
        };
        Ok(Some(json!({"contents": [{
            "uri": uri,
            "mimeType": "text/plain",
            "text": format!("{} (request id {})", body, id_text(&input.context)),
        }]})))
    })
}

#[no_mangle]
pub extern "C" fn complete() -> i32 {
    run(|input: RequestInput<CompleteRequestParams>| {
        let req = input.request;
        let known = req.context.and_then(|c| c.arguments).map(|a| a.len()).unwrap_or(0);
        let candidates: Vec<String> = match req.reference {
            Reference::Prompt { name } if name == "strict_prompt" && req.argument.name == "who" => {
                vec!["Ada".into(), "Alan".into(), "Grace".into()]
            }
            Reference::Resource { uri } if uri == "strict://notes/{id}" && req.argument.name == "id" => {
                vec!["1".into(), "12".into(), format!("known{}", known)]
            }
            _ => Vec::new(),
        };
        let values: Vec<String> = candidates.into_iter().filter(|c| c.starts_with(&req.argument.value)).collect();
        Ok(Some(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}})))
    })
}

#[no_mangle]
pub extern "C" fn on_roots_list_changed() -> i32 {
    run(|input: NotificationInput| {
        let roots: ListRootsResult = unsafe {
            let out = from_block(list_roots());
            serde_json::from_slice(&out).map_err(|e| format!("list_roots: {}", e))?
        };
        let uris: Vec<String> = roots.roots.into_iter().map(|r| r.uri).collect();
        notify(
            notify_logging_message,
            &json!({"level": "info", "logger": "strictv2", "data": {"event": "roots", "roots": uris, "_meta": input.context.meta}}),
        );
        Ok(None)
    })
}
