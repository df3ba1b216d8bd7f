//! What a plugin registers: tools, prompts, resources, templates,
//! resource listers and completions.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::content::{error_result, IntoToolResult};
use crate::context::Context;
use crate::error::Result;
use crate::schema::{JsonSchema, Schema};
use crate::template::{UriTemplate, Vars};
use crate::types::*;

/// Prompt arguments, and the arguments already filled in of a completion.
pub type Args = BTreeMap<String, String>;

pub(crate) type ToolFn = Rc<dyn Fn(&Context, Value) -> Result<CallToolResult>>;
pub(crate) type PromptFn = Rc<dyn Fn(&Context, &Args) -> Result<GetPromptResult>>;
pub(crate) type ResourceFn = Rc<dyn Fn(&Context, &str) -> Result<ReadResourceResult>>;
pub(crate) type TemplateFn = Rc<dyn Fn(&Context, &str, &Vars) -> Result<ReadResourceResult>>;
pub(crate) type ListerFn = Rc<dyn Fn(&Context) -> Result<Vec<Resource>>>;
pub(crate) type CompletionFn = Rc<dyn Fn(&Context, &str, &Args) -> Vec<String>>;

pub(crate) struct ToolDef {
    pub tool: Tool,
    /// The schema arguments are validated against (`None` after
    /// `input_schema` replaced it).
    pub input: Option<Schema>,
    pub call: ToolFn,
}

pub(crate) struct PromptDef {
    pub prompt: Prompt,
    pub call: PromptFn,
}

pub(crate) struct ResourceDef {
    pub resource: Resource,
    pub call: ResourceFn,
}

pub(crate) struct TemplateDef {
    pub template: ResourceTemplate,
    pub uri: UriTemplate,
    pub call: TemplateFn,
}

pub(crate) struct CompletionDef {
    pub kind: &'static str,
    pub reference: String,
    pub arg: String,
    pub call: CompletionFn,
}

#[derive(Default)]
pub(crate) struct Registry {
    pub tools: Vec<ToolDef>,
    pub prompts: Vec<PromptDef>,
    pub resources: Vec<ResourceDef>,
    pub templates: Vec<TemplateDef>,
    pub listers: Vec<ListerFn>,
    pub completions: Vec<CompletionDef>,
}

thread_local! {
    // Plugins are single-threaded; handlers are cloned out (Rc) before they
    // run, so a handler may register or remove items during a call.
    static REGISTRY: RefCell<Registry> = RefCell::new(Registry::default());
}

pub(crate) fn with_registry<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    REGISTRY.with(|r| f(&mut r.borrow_mut()))
}

fn check_tool_name(name: &str) -> std::result::Result<(), String> {
    if name.is_empty() || name.len() > 128 {
        return Err(format!("tool name {:?} must have 1 to 128 characters", name));
    }
    if !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.') {
        return Err(format!("tool name {:?}: only ASCII letters, digits, '_', '-' and '.' are allowed", name));
    }
    Ok(())
}

/// Registers a tool and returns a handle to set its options.
///
/// `A` is the arguments type: a [`schema!`](crate::schema!) struct (or any
/// `DeserializeOwned + JsonSchema` object type, such as
/// `serde_json::Map<String, Value>`); use [`NoArgs`](crate::NoArgs) for a
/// tool without arguments. Its schema is the tool's `inputSchema`; arguments
/// are validated against it (type, required, enum, bounds, lengths, item
/// counts) before `f` runs, and a violation is a tool execution error such
/// as `invalid arguments: "limit": must be <= 50`, so the model can correct
/// itself.
///
/// `R` is what `f` returns (see [`IntoToolResult`]): text, content,
/// a full [`CallToolResult`], or structured output, which also declares the
/// tool's `outputSchema`.
///
/// A plain [`Error`](crate::Error) from `f` becomes a tool execution error
/// (`isError` result with the message); a protocol error fails the request
/// with its code.
///
/// Registering a name again replaces the tool. Panics when the name is not
/// a valid MCP tool name or `A`'s schema is not an object.
pub fn tool<A, R, F>(name: &str, description: &str, f: F) -> ToolHandle
where
    A: DeserializeOwned + JsonSchema + 'static,
    R: IntoToolResult + 'static,
    F: Fn(&Context, A) -> Result<R> + 'static,
{
    if let Err(e) = check_tool_name(name) {
        panic!("mcphost-pdk: {}", e);
    }
    let input = A::json_schema().for_input();
    if !input.is_object() {
        panic!("mcphost-pdk: tool {:?}: the arguments type's schema is not an object: {}", name, input.to_value());
    }
    // The dispatcher normalises the arguments and validates them against
    // the tool's schema before calling this.
    let call: ToolFn = Rc::new(move |ctx: &Context, raw: Value| -> Result<CallToolResult> {
        let args: A = match serde_json::from_value(raw) {
            Ok(a) => a,
            Err(e) => return Ok(error_result(format!("invalid arguments: {}", e))),
        };
        match f(ctx, args) {
            Ok(r) => r.into_tool_result().map(|mut r| {
                if r.is_error && r.content.is_empty() {
                    r.content.push(crate::text("tool error"));
                }
                r
            }),
            Err(e) if e.is_protocol() => Err(e),
            Err(e) => Ok(error_result(e.message())),
        }
    });
    let def = ToolDef {
        tool: Tool {
            name: name.to_string(),
            title: None,
            description: description.to_string(),
            input_schema: input.clone(),
            output_schema: R::output_schema(),
            annotations: None,
            execution: None,
            icons: Vec::new(),
            meta: None,
        },
        input: Some(input),
        call,
    };
    with_registry(|r| match r.tools.iter_mut().find(|t| t.tool.name == name) {
        Some(t) => *t = def,
        None => r.tools.push(def),
    });
    ToolHandle { name: name.to_string() }
}

/// Unregisters a tool. Call [`notify_tool_list_changed`](crate::notify_tool_list_changed)
/// afterwards to tell clients.
pub fn remove_tool(name: &str) {
    with_registry(|r| r.tools.retain(|t| t.tool.name != name));
}

/// The options of a registered tool, set by chaining:
/// `tool(...).title("Slugify").read_only().idempotent();`
#[derive(Clone, Debug)]
pub struct ToolHandle {
    name: String,
}

impl ToolHandle {
    fn update(self, f: impl FnOnce(&mut ToolDef)) -> ToolHandle {
        with_registry(|r| {
            if let Some(t) = r.tools.iter_mut().find(|t| t.tool.name == self.name) {
                f(t)
            }
        });
        self
    }

    fn annotate(self, f: impl FnOnce(&mut ToolAnnotations)) -> ToolHandle {
        self.update(|t| f(t.tool.annotations.get_or_insert_with(ToolAnnotations::default)))
    }

    /// Sets the display title.
    pub fn title(self, title: &str) -> ToolHandle {
        let title = title.to_string();
        self.update(|t| t.tool.title = Some(title))
    }
    /// Sets the icons.
    pub fn icons(self, icons: Vec<Icon>) -> ToolHandle {
        self.update(|t| t.tool.icons = icons)
    }
    /// Sets the tool's `_meta`.
    pub fn meta(self, meta: Meta) -> ToolHandle {
        self.update(|t| t.tool.meta = Some(meta))
    }
    /// Marks the tool as not modifying its environment (`readOnlyHint`).
    pub fn read_only(self) -> ToolHandle {
        self.annotate(|a| a.read_only_hint = Some(true))
    }
    /// Says whether the tool may destroy or overwrite data
    /// (`destructiveHint`; MCP assumes true).
    pub fn destructive(self, destructive: bool) -> ToolHandle {
        self.annotate(|a| a.destructive_hint = Some(destructive))
    }
    /// Marks the tool as idempotent (`idempotentHint`).
    pub fn idempotent(self) -> ToolHandle {
        self.annotate(|a| a.idempotent_hint = Some(true))
    }
    /// Says whether the tool reaches external entities (`openWorldHint`;
    /// MCP assumes true).
    pub fn open_world(self, open: bool) -> ToolHandle {
        self.annotate(|a| a.open_world_hint = Some(open))
    }
    /// Sets all annotations at once.
    pub fn annotations(self, annotations: ToolAnnotations) -> ToolHandle {
        self.update(|t| t.tool.annotations = Some(annotations))
    }
    /// Sets how the tool may be run (tasks).
    pub fn execution(self, execution: ToolExecution) -> ToolHandle {
        self.update(|t| t.tool.execution = Some(execution))
    }
    /// Replaces the input schema derived from the arguments type. The PDK
    /// then only checks that the arguments decode.
    pub fn input_schema(self, schema: Schema) -> ToolHandle {
        self.update(|t| {
            t.tool.input_schema = schema;
            t.input = None;
        })
    }
    /// Replaces the output schema derived from the result type.
    pub fn output_schema(self, schema: Schema) -> ToolHandle {
        self.update(|t| t.tool.output_schema = Some(schema))
    }
    /// Declares no output schema for a tool with structured results.
    pub fn no_output_schema(self) -> ToolHandle {
        self.update(|t| t.tool.output_schema = None)
    }
}

/// Registers a prompt and returns a handle to set its options. `args`
/// describes its arguments; those marked required are checked before `f`
/// runs (a missing or blank one fails the request with -32602 naming it). An
/// error returned by `f` fails the request (a protocol error with its code,
/// others as internal errors). Registering a name again replaces the prompt.
pub fn prompt<F>(name: &str, description: &str, args: Vec<PromptArgument>, f: F) -> PromptHandle
where
    F: Fn(&Context, &Args) -> Result<GetPromptResult> + 'static,
{
    if name.is_empty() {
        panic!("mcphost-pdk: prompt name is empty");
    }
    let def = PromptDef {
        prompt: Prompt {
            name: name.to_string(),
            description: description.to_string(),
            arguments: args,
            ..Prompt::default()
        },
        call: Rc::new(f),
    };
    with_registry(|r| match r.prompts.iter_mut().find(|p| p.prompt.name == name) {
        Some(p) => *p = def,
        None => r.prompts.push(def),
    });
    PromptHandle { name: name.to_string() }
}

/// Unregisters a prompt. Call [`notify_prompt_list_changed`](crate::notify_prompt_list_changed)
/// afterwards to tell clients.
pub fn remove_prompt(name: &str) {
    with_registry(|r| r.prompts.retain(|p| p.prompt.name != name));
}

/// The options of a registered prompt.
#[derive(Clone, Debug)]
pub struct PromptHandle {
    name: String,
}

impl PromptHandle {
    fn update(self, f: impl FnOnce(&mut Prompt)) -> PromptHandle {
        with_registry(|r| {
            if let Some(p) = r.prompts.iter_mut().find(|p| p.prompt.name == self.name) {
                f(&mut p.prompt)
            }
        });
        self
    }
    /// Sets the display title.
    pub fn title(self, title: &str) -> PromptHandle {
        let title = title.to_string();
        self.update(|p| p.title = Some(title))
    }
    /// Sets the icons.
    pub fn icons(self, icons: Vec<Icon>) -> PromptHandle {
        self.update(|p| p.icons = icons)
    }
    /// Sets the prompt's `_meta`.
    pub fn meta(self, meta: Meta) -> PromptHandle {
        self.update(|p| p.meta = Some(meta))
    }
}

/// Registers a concrete resource, listed by `list_resources` and read by
/// `f(ctx, uri)`. The result's contents get the resource's URI and MIME type
/// when they have none. Registering a URI again replaces the resource.
pub fn resource<F>(mut resource: Resource, f: F)
where
    F: Fn(&Context, &str) -> Result<ReadResourceResult> + 'static,
{
    if resource.uri.is_empty() {
        panic!("mcphost-pdk: resource URI is empty");
    }
    if resource.name.is_empty() {
        resource.name = resource.uri.clone();
    }
    let def = ResourceDef { resource, call: Rc::new(f) };
    with_registry(|r| match r.resources.iter_mut().find(|d| d.resource.uri == def.resource.uri) {
        Some(d) => *d = def,
        None => r.resources.push(def),
    });
}

/// Unregisters a resource registered with [`resource`]. Call
/// [`notify_resource_list_changed`](crate::notify_resource_list_changed)
/// afterwards to tell clients.
pub fn remove_resource(uri: &str) {
    with_registry(|r| r.resources.retain(|d| d.resource.uri != uri));
}

/// Registers a resource template (RFC 6570, e.g. `"file:///{+path}"` or
/// `"weather://{city}/current"`): `read_resource` calls `f(ctx, uri, vars)`
/// for URIs matching it. Static resources match before templates, templates
/// in registration order. Registering a template again replaces it. Panics
/// when the template does not parse.
pub fn resource_template<F>(mut template: ResourceTemplate, f: F)
where
    F: Fn(&Context, &str, &Vars) -> Result<ReadResourceResult> + 'static,
{
    let uri = match UriTemplate::parse(&template.uri_template) {
        Ok(u) => u,
        Err(e) => panic!("mcphost-pdk: {}", e),
    };
    if template.name.is_empty() {
        template.name = template.uri_template.clone();
    }
    let def = TemplateDef { template, uri, call: Rc::new(f) };
    with_registry(|r| match r.templates.iter_mut().find(|d| d.template.uri_template == def.template.uri_template) {
        Some(d) => *d = def,
        None => r.templates.push(def),
    });
}

/// Registers `f` to list resources only known at run time (files in a
/// directory, rows of a table). `list_resources` returns the resources
/// registered with [`resource`], then those of each lister. Reading a listed
/// resource needs a [`resource`] or a [`resource_template`] matching its URI.
pub fn resource_lister<F>(f: F)
where
    F: Fn(&Context) -> Result<Vec<Resource>> + 'static,
{
    with_registry(|r| r.listers.push(Rc::new(f)));
}

fn add_completion(kind: &'static str, reference: &str, arg: &str, call: CompletionFn) {
    with_registry(|r| {
        r.completions.retain(|c| !(c.kind == kind && c.reference == reference && c.arg == arg));
        r.completions.push(CompletionDef { kind, reference: reference.to_string(), arg: arg.to_string(), call });
    });
}

/// Registers completion for argument `arg` of `prompt`: `f(ctx, value,
/// args)` gets what the user typed so far and the other arguments already
/// filled in. The PDK sends at most 100 values, with `total` and `hasMore`.
pub fn complete_prompt_arg<F>(prompt: &str, arg: &str, f: F)
where
    F: Fn(&Context, &str, &Args) -> Vec<String> + 'static,
{
    add_completion(REF_PROMPT, prompt, arg, Rc::new(f));
}

/// Registers completion for variable `var` of the resource template
/// `uri_template` (as registered with [`resource_template`]).
pub fn complete_template_var<F>(uri_template: &str, var: &str, f: F)
where
    F: Fn(&Context, &str, &Args) -> Vec<String> + 'static,
{
    add_completion(REF_RESOURCE, uri_template, var, Rc::new(f));
}

/// Completion reference types as plugins see them.
pub(crate) const REF_PROMPT: &str = "prompt";
pub(crate) const REF_RESOURCE: &str = "resource";

/// The values that start with `prefix`, ignoring case, in their order.
pub fn filter_prefix<S: AsRef<str>>(values: &[S], prefix: &str) -> Vec<String> {
    let p = prefix.to_lowercase();
    values.iter().map(|v| v.as_ref()).filter(|v| v.to_lowercase().starts_with(&p)).map(String::from).collect()
}

/// A completer proposing the `values` that start with what the user typed
/// ([`filter_prefix`]).
pub fn complete_from(values: &[&str]) -> impl Fn(&Context, &str, &Args) -> Vec<String> + 'static {
    let values: Vec<String> = values.iter().map(|s| s.to_string()).collect();
    move |_: &Context, value: &str, _: &Args| filter_prefix(&values, value)
}
