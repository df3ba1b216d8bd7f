//! The ABI exports: each decodes its input envelope, serves the request
//! from what the plugin registered and encodes the result.

use std::cell::Cell;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::error_result;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::kernel;
use crate::registry::{with_registry, Args, REF_PROMPT, REF_RESOURCE};
use crate::schema::validate;
use crate::types::*;

/// The most completion values a `complete` result carries.
pub const MAX_COMPLETION_VALUES: usize = 100;

#[derive(Deserialize, Default)]
struct Envelope {
    #[serde(default)]
    request: Option<Value>,
    #[serde(default)]
    context: ContextIn,
}

#[derive(Deserialize, Default)]
struct ContextIn {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default, rename = "_meta")]
    meta: Option<Map<String, Value>>,
    #[serde(default, rename = "protocolVersion")]
    protocol_version: String,
    #[serde(default, rename = "clientCapabilities")]
    client_capabilities: Value,
    #[serde(default)]
    subject: String,
    #[serde(default)]
    scopes: Vec<String>,
    /// The host validated a tool call's arguments against the listed
    /// inputSchema (mcphost's `context.argumentsValidated`).
    #[serde(default, rename = "argumentsValidated")]
    arguments_validated: bool,
}

impl ContextIn {
    /// The handler's context, with `meta` as its `_meta`.
    fn into_context(self, meta: Map<String, Value>) -> Context {
        Context {
            id: self.id,
            meta,
            protocol_version: self.protocol_version,
            client_capabilities: self.client_capabilities,
            subject: self.subject,
            scopes: self.scopes,
        }
    }
}

fn decode_envelope(input: &[u8]) -> Result<Envelope> {
    if input.iter().all(|b| b.is_ascii_whitespace()) {
        return Ok(Envelope::default());
    }
    serde_json::from_slice(input).map_err(|e| Error::invalid_params(format!("invalid input: {}", e)))
}

/// Decodes the envelope of a request export and its request.
fn decode_input<T: DeserializeOwned>(input: &[u8]) -> Result<(Context, T)> {
    decode_request(decode_envelope(input)?)
}

/// Decodes the request of a request export's envelope.
fn decode_request<T: DeserializeOwned>(mut env: Envelope) -> Result<(Context, T)> {
    let request = match env.request {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v) => v,
    };
    // The request params' _meta when the host did not put one in the context.
    let meta = match env.context.meta.take() {
        Some(m) => m,
        None => match request.get("_meta") {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        },
    };
    let params =
        serde_json::from_value(request).map_err(|e| Error::invalid_params(format!("invalid request: {}", e)))?;
    Ok((env.context.into_context(meta), params))
}

/// Decodes the envelope of a list export.
fn decode_list_input(input: &[u8]) -> Result<Context> {
    let mut env = decode_envelope(input)?;
    let meta = env.context.meta.take().unwrap_or_default();
    Ok(env.context.into_context(meta))
}

fn encode<T: Serialize>(v: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(v).map_err(|e| Error::internal(format!("encoding the result: {}", e)))
}

pub(crate) fn list_tools(input: &[u8]) -> Result<Vec<u8>> {
    decode_list_input(input)?;
    with_registry(|r| encode(&ListToolsResult { tools: r.tools.iter().map(|t| &t.tool).collect() }))
}

pub(crate) fn call_tool(input: &[u8]) -> Result<Vec<u8>> {
    let env = decode_envelope(input)?;
    let validated = env.context.arguments_validated;
    let (ctx, p): (Context, CallToolParams) = decode_request(env)?;
    let found =
        with_registry(|r| r.tools.iter().find(|t| t.tool.name == p.name).map(|t| (t.input.clone(), t.call.clone())));
    let (schema, call) = match found {
        Some(f) => f,
        None => return Err(Error::invalid_params(format!("unknown tool: {:?}", p.name))),
    };
    let args = match p.arguments {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v) => v,
    };
    // Arguments the host validated are not checked twice.
    if let (Some(s), false) = (schema, validated) {
        if let Err(e) = validate(&s, &args, "") {
            return encode(&error_result(format!("invalid arguments: {}", e)));
        }
    }
    encode(&call(&ctx, args)?)
}

pub(crate) fn list_prompts(input: &[u8]) -> Result<Vec<u8>> {
    decode_list_input(input)?;
    with_registry(|r| encode(&ListPromptsResult { prompts: r.prompts.iter().map(|p| &p.prompt).collect() }))
}

pub(crate) fn get_prompt(input: &[u8]) -> Result<Vec<u8>> {
    let (ctx, p): (Context, GetPromptParams) = decode_input(input)?;
    let found = with_registry(|r| {
        r.prompts.iter().find(|d| d.prompt.name == p.name).map(|d| (d.prompt.clone(), d.call.clone()))
    });
    let (prompt, call) = match found {
        Some(f) => f,
        None => return Err(Error::invalid_params(format!("unknown prompt: {:?}", p.name))),
    };
    let args: Args = p.arguments.unwrap_or_default();
    for a in &prompt.arguments {
        if a.required && args.get(&a.name).map_or(true, |v| v.trim().is_empty()) {
            return Err(Error::invalid_params(format!("prompt {:?}: missing required argument {:?}", p.name, a.name)));
        }
    }
    let mut r = call(&ctx, &args)?;
    if r.description.is_empty() {
        r.description = prompt.description;
    }
    encode(&r)
}

pub(crate) fn list_resources(input: &[u8]) -> Result<Vec<u8>> {
    let ctx = decode_list_input(input)?;
    let (mut resources, listers) =
        with_registry(|r| (r.resources.iter().map(|d| d.resource.clone()).collect::<Vec<_>>(), r.listers.clone()));
    for list in listers {
        for mut res in list(&ctx)? {
            if res.uri.is_empty() || resources.iter().any(|r| r.uri == res.uri) {
                continue;
            }
            if res.name.is_empty() {
                res.name = res.uri.clone();
            }
            resources.push(res);
        }
    }
    encode(&ListResourcesResult { resources })
}

pub(crate) fn list_resource_templates(input: &[u8]) -> Result<Vec<u8>> {
    decode_list_input(input)?;
    with_registry(|r| {
        encode(&ListResourceTemplatesResult { resource_templates: r.templates.iter().map(|t| &t.template).collect() })
    })
}

pub(crate) fn read_resource(input: &[u8]) -> Result<Vec<u8>> {
    let (ctx, p): (Context, ReadResourceParams) = decode_input(input)?;
    if p.uri.is_empty() {
        return Err(Error::invalid_params("read_resource: missing uri"));
    }
    let stat = with_registry(|r| {
        r.resources.iter().find(|d| d.resource.uri == p.uri).map(|d| (d.resource.mime_type.clone(), d.call.clone()))
    });
    let (outcome, mime) = match stat {
        Some((mime, call)) => (call(&ctx, &p.uri), mime),
        None => {
            let tmpl = with_registry(|r| {
                r.templates.iter().find_map(|d| {
                    d.uri.matches(&p.uri).map(|vars| (vars, d.template.mime_type.clone(), d.call.clone()))
                })
            });
            match tmpl {
                Some((vars, mime, call)) => (call(&ctx, &p.uri, &vars), mime),
                None => return Err(Error::resource_not_found(&p.uri)),
            }
        }
    };
    let mut r = match outcome {
        Ok(r) => r,
        Err(e) if !e.is_protocol() && e.is_not_found() => return Err(Error::resource_not_found(&p.uri)),
        Err(e) => return Err(e),
    };
    for c in &mut r.contents {
        if c.uri.is_empty() {
            c.uri = p.uri.clone();
        }
        if c.mime_type.is_none() {
            c.mime_type = mime.clone();
        }
        if c.text.is_none() && c.blob.is_none() {
            c.text = Some(String::new());
        }
    }
    encode(&r)
}

pub(crate) fn complete(input: &[u8]) -> Result<Vec<u8>> {
    let (ctx, p): (Context, CompleteParams) = decode_input(input)?;
    let kind = p.reference.kind.trim_start_matches("ref/");
    let reference = match kind {
        REF_PROMPT => {
            let known = with_registry(|r| r.prompts.iter().any(|d| d.prompt.name == p.reference.name));
            if !known {
                return Err(Error::invalid_params(format!("unknown prompt: {:?}", p.reference.name)));
            }
            p.reference.name.clone()
        }
        REF_RESOURCE => p.reference.uri.clone(),
        _ => {
            return Err(Error::invalid_params(format!("unsupported completion reference type {:?}", p.reference.kind)))
        }
    };
    let call = with_registry(|r| {
        r.completions
            .iter()
            .find(|c| c.kind == kind && c.reference == reference && c.arg == p.argument.name)
            .map(|c| c.call.clone())
    });
    let values = match call {
        Some(f) => {
            let args: Args = p.context.and_then(|c| c.arguments).unwrap_or_default();
            f(&ctx, &p.argument.value, &args)
        }
        None => Vec::new(),
    };
    encode(&CompleteResult { completion: cap_completion(values) })
}

/// Limits values to MAX_COMPLETION_VALUES, reporting the total.
fn cap_completion(mut values: Vec<String>) -> Completion {
    let total = values.len();
    let has_more = total > MAX_COMPLETION_VALUES;
    values.truncate(MAX_COMPLETION_VALUES);
    Completion { values, total: Some(total), has_more }
}

thread_local! {
    static REGISTERED: Cell<bool> = const { Cell::new(false) };
}

/// Runs an export: registers the plugin's items on the first call, reads
/// the input, and writes the output or the error (an ABI error as JSON).
/// Returns the export's status.
pub(crate) fn run(register: fn(), handler: fn(&[u8]) -> Result<Vec<u8>>) -> i32 {
    if !REGISTERED.with(|r| r.replace(true)) {
        register();
    }
    let input = kernel::read_input();
    match handler(&input) {
        Ok(out) => {
            kernel::set_output(&out);
            0
        }
        Err(e) => {
            kernel::set_error(&e.abi_text());
            1
        }
    }
}
