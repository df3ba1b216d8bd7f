//! # mcphost-pdk
//!
//! Turns a Rust crate into an [mcphost](../../README.md) plugin: a
//! WebAssembly module, run by the Extism runtime inside mcphost, that
//! serves MCP **tools**, **prompts**, **resources** and **completions**.
//! You write handlers; the PDK gives JSON Schemas for your types, validates
//! arguments, implements the ABI exports and talks to the host. It mirrors
//! the Go PDK (`pdk/go`); see `README.md` beside this crate.
//!
//! ```ignore
//! use mcphost_pdk::*;
//!
//! manifest!(r#"{"abi": 1, "name": "shout", "version": "0.1.0"}"#);
//! plugin!(register);
//!
//! schema! {
//!     pub struct ShoutArgs {
//!         /// What to shout.
//!         pub text: String,
//!         /// How many times.
//!         #[schema(minimum = 1, maximum = 5, default = 1)]
//!         pub times: Option<u32>,
//!     }
//! }
//!
//! fn register() {
//!     tool("shout", "Upper-cases text.", |_ctx: &Context, a: ShoutArgs| {
//!         Ok(format!("{}!", a.text.to_uppercase()).repeat(a.times.unwrap_or(1) as usize))
//!     })
//!     .read_only()
//!     .idempotent();
//! }
//! ```

// Lets the macros' `mcphost_pdk::serde` path work inside this crate too.
extern crate self as mcphost_pdk;

mod content;
mod context;
mod dispatch;
mod error;
mod http;
mod kernel;
mod registry;
mod schema;
mod template;
mod types;

/// The serde version the PDK uses (for `#[serde(...)]` attributes and
/// manual impls); plugins need no serde dependency of their own.
pub use serde;
/// The serde_json version the PDK uses.
pub use serde_json;

pub use serde_json::{json, Map, Value};

pub use content::{
    assistant_message, audio, base64, blob_resource, embedded_blob, embedded_text, error_result, image, messages,
    resource_link, result, structured_result, text, text_resource, user_message, IntoToolResult, Json, ROLE_ASSISTANT,
    ROLE_USER,
};
pub use context::{
    notify_prompt_list_changed, notify_resource_list_changed, notify_resource_updated, notify_tool_list_changed,
    Context, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, Elicited, Level, ModelHint,
    ModelPreferences, Root, SamplingMessage, ACTION_ACCEPT, ACTION_CANCEL, ACTION_DECLINE,
};
pub use dispatch::MAX_COMPLETION_VALUES;
pub use error::{Error, HostError, Result, CODE_INTERNAL_ERROR, CODE_INVALID_PARAMS, CODE_RESOURCE_NOT_FOUND};
pub use http::{fetch, HttpRequest, HttpResponse};
pub use kernel::config;
pub use registry::{
    complete_from, complete_prompt_arg, complete_template_var, filter_prefix, prompt, remove_prompt, remove_resource,
    remove_tool, resource, resource_lister, resource_template, tool, Args, PromptHandle, ToolHandle,
};
pub use schema::{schema_for, JsonSchema, Schema};
pub use template::Vars;
pub use types::*;

schema! {
    /// The arguments of a tool that takes none: `{}` (any property is
    /// refused).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct NoArgs {}
}

/// What the macros expand to. Not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use crate::content::{__output_schema, __structured};

    /// The description of a field from its doc comment lines: trimmed,
    /// joined by spaces, blank lines kept as paragraph breaks.
    pub fn doc_text(lines: &[&str]) -> Option<String> {
        let mut out = String::new();
        for l in lines {
            let l = l.trim();
            if l.is_empty() {
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                continue;
            }
            if !out.is_empty() && !out.ends_with('\n') {
                out.push(' ');
            }
            out.push_str(l);
        }
        let out = out.trim_end().to_string();
        if out.is_empty() {
            None
        } else {
            Some(out)
        }
    }

    /// The JSON name of a field: serde strips the `r#` of raw identifiers.
    pub fn field_name(name: &'static str) -> &'static str {
        name.strip_prefix("r#").unwrap_or(name)
    }

    macro_rules! exports {
        ($($name:ident),*) => {
            $(
                pub fn $name(register: fn()) -> i32 {
                    crate::dispatch::run(register, crate::dispatch::$name)
                }
            )*
        };
    }
    exports!(
        list_tools,
        call_tool,
        list_prompts,
        get_prompt,
        list_resources,
        list_resource_templates,
        read_resource,
        complete
    );
}

/// Defines the plugin's ABI exports (`list_tools`, `call_tool`,
/// `list_prompts`, `get_prompt`, `list_resources`,
/// `list_resource_templates`, `read_resource`, `complete`), each an
/// `#[no_mangle] pub extern "C" fn() -> i32`. `register` (a `fn()`) runs
/// once per instance, before the first export call: register the plugin's
/// tools, prompts and resources there. It also exports
/// `mcphost_http_errors` (`abi.ExportHTTPErrors`), which tells mcphost
/// that [`fetch`] handles a failed request as an error value.
///
/// ```ignore
/// mcphost_pdk::plugin!(register);
/// fn register() { /* tool(...); prompt(...); ... */ }
/// ```
#[macro_export]
macro_rules! plugin {
    ($register:expr) => {
        $crate::plugin!(@exports $register;
            list_tools, call_tool, list_prompts, get_prompt, list_resources,
            list_resource_templates, read_resource, complete);

        /// Tells mcphost that `fetch` handles a failed request as an
        /// error value; the host never calls it.
        #[no_mangle]
        pub extern "C" fn mcphost_http_errors() -> i32 {
            0
        }
    };
    (@exports $register:expr; $($name:ident),*) => {
        $(
            #[no_mangle]
            pub extern "C" fn $name() -> i32 {
                $crate::__private::$name($register)
            }
        )*
    };
}

/// Embeds the plugin's manifest (`abi.Manifest` JSON) as the
/// `mcphost.manifest` wasm custom section, which mcphost reads before
/// running any plugin code. Give the JSON as a string literal or as
/// `include_str!("../manifest.json")`:
///
/// ```ignore
/// mcphost_pdk::manifest!(r#"{"abi": 1, "name": "textkit", "version": "0.1.0",
///     "needs": {"host_functions": ["notify_logging_message"]}}"#);
/// ```
///
/// Use it once, in the plugin crate (not in a library it depends on). Do
/// not also run `mcphost manifest embed` on the module.
#[macro_export]
macro_rules! manifest {
    ($json:expr) => {
        const _: () = {
            const MANIFEST: &str = $json;
            #[link_section = "mcphost.manifest"]
            #[used]
            static MCPHOST_MANIFEST: [u8; MANIFEST.len()] = {
                let src = MANIFEST.as_bytes();
                let mut out = [0u8; MANIFEST.len()];
                let mut i = 0;
                while i < src.len() {
                    out[i] = src[i];
                    i += 1;
                }
                out
            };
        };
    };
}

/// Declares a struct whose JSON Schema comes from its fields, for tool
/// arguments, structured results and elicitation forms. It derives serde's
/// `Serialize` and `Deserialize`, implements [`JsonSchema`] and
/// [`IntoToolResult`] (structured output with an output schema).
///
/// ```ignore
/// schema! {
///     /// Arguments of `wrap`.
///     #[derive(Debug, Clone)]
///     pub struct WrapArgs {
///         /// The text to wrap.
///         pub text: String,
///         /// The line width.
///         #[schema(minimum = 10, maximum = 200, default = 80)]
///         pub width: Option<u32>,
///         /// JSON name differs from the field's.
///         pub break_words as "breakWords": Option<bool>,
///     }
/// }
/// ```
///
/// - A field's doc comment is its `description`.
/// - `Option<T>` fields are optional; all others are required.
/// - `#[schema(key = value, flag, ...)]` calls the [`Schema`] builder
///   method `key` with `value` (or without argument for a flag):
///   `minimum`, `maximum`, `exclusive_minimum`, `exclusive_maximum`,
///   `multiple_of`, `min_length`, `max_length`, `min_items`, `max_items`,
///   `unique_items`, `format`, `pattern`, `enum_values = ["a", "b"]`,
///   `default`, `examples = [..]`, `title`, `description`, `deprecated`,
///   `nullable`. On `Vec` fields the value keywords apply to the items.
/// - `field as "jsonName": Type` renames the property (and serde's field).
/// - Attributes go in this order: doc comments, then at most one
///   `#[schema(...)]`, then any `#[serde(...)]`.
/// - The struct gets `#[serde(crate = "mcphost_pdk::serde")]`, so the
///   plugin needs no direct serde dependency; keep the dependency named
///   `mcphost_pdk` (or `mcphost-pdk` in Cargo.toml). Do not derive
///   `Serialize`/`Deserialize` yourself.
#[macro_export]
macro_rules! schema {
    (
        $(#[$sattr:meta])*
        $svis:vis struct $name:ident {
            $(
                $(#[doc = $doc:literal])*
                $(#[schema( $($key:ident $(= $val:expr)?),* $(,)? )])?
                $(#[serde( $($serde:tt)* )])*
                $fvis:vis $field:ident $(as $rename:literal)? : $ty:ty
            ),* $(,)?
        }
    ) => {
        $(#[$sattr])*
        #[derive($crate::serde::Serialize, $crate::serde::Deserialize)]
        #[serde(crate = "mcphost_pdk::serde")]
        $svis struct $name {
            $(
                $(#[doc = $doc])*
                $(#[serde(rename = $rename)])?
                $(#[serde( $($serde)* )])*
                $fvis $field: $ty,
            )*
        }

        impl $crate::JsonSchema for $name {
            fn json_schema() -> $crate::Schema {
                #[allow(unused_mut)]
                let mut s = $crate::Schema::object();
                $(
                    #[allow(unused_mut)]
                    let mut f = <$ty as $crate::JsonSchema>::json_schema();
                    if let Some(d) = $crate::__private::doc_text(&[$($doc),*]) {
                        f = f.description(d);
                    }
                    $($( f = f.$key($($val)?); )*)?
                    s = s.field(
                        $crate::__schema_name!($($rename)? ; $field),
                        f,
                        !<$ty as $crate::JsonSchema>::optional(),
                    );
                )*
                s
            }
        }

        impl $crate::IntoToolResult for $name {
            fn output_schema() -> ::core::option::Option<$crate::Schema> {
                $crate::__private::__output_schema::<$name>()
            }
            fn into_tool_result(self) -> $crate::Result<$crate::CallToolResult> {
                $crate::__private::__structured(&self)
            }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __schema_name {
    ($rename:literal ; $field:ident) => {
        $rename
    };
    (; $field:ident) => {
        $crate::__private::field_name(stringify!($field))
    };
}

/// Declares an enum of strings, for arguments with a fixed set of values.
/// It derives `Serialize`, `Deserialize`, `Clone`, `Copy`, `Debug`,
/// `PartialEq` and `Eq`, implements [`JsonSchema`] (a string with `enum`)
/// and gives `as_str()`, `parse(&str)` and `VALUES` (all the strings).
///
/// ```ignore
/// schema_enum! {
///     /// A hash algorithm.
///     pub enum Algorithm { Sha256 = "sha256", Sha1 = "sha1" }
/// }
/// ```
#[macro_export]
macro_rules! schema_enum {
    (
        $(#[$eattr:meta])*
        $evis:vis enum $name:ident {
            $( $(#[$vattr:meta])* $variant:ident = $value:literal ),+ $(,)?
        }
    ) => {
        $(#[$eattr])*
        #[derive(
            $crate::serde::Serialize, $crate::serde::Deserialize,
            ::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug,
            ::core::cmp::PartialEq, ::core::cmp::Eq
        )]
        #[serde(crate = "mcphost_pdk::serde")]
        $evis enum $name {
            $( $(#[$vattr])* #[serde(rename = $value)] $variant, )+
        }

        impl $name {
            /// The JSON strings of all values, in declaration order.
            pub const VALUES: &'static [&'static str] = &[$($value),+];

            /// The value's JSON string.
            pub fn as_str(self) -> &'static str {
                match self { $( $name::$variant => $value, )+ }
            }

            /// The value whose JSON string is `s`.
            pub fn parse(s: &str) -> ::core::option::Option<$name> {
                match s {
                    $( $value => ::core::option::Option::Some($name::$variant), )+
                    _ => ::core::option::Option::None,
                }
            }
        }

        impl $crate::JsonSchema for $name {
            fn json_schema() -> $crate::Schema {
                $crate::Schema::string().enum_values([$($value),+])
            }
        }

        impl $crate::IntoToolResult for $name {
            fn output_schema() -> ::core::option::Option<$crate::Schema> {
                $crate::__private::__output_schema::<$name>()
            }
            fn into_tool_result(self) -> $crate::Result<$crate::CallToolResult> {
                $crate::__private::__structured(&self)
            }
        }
    };
}

/// Native tests of plugins: run an export against the in-memory fake
/// kernel (only when not compiled for wasm32).
#[cfg(not(target_arch = "wasm32"))]
pub mod testing {
    use crate::kernel::sys::STATE;

    /// The outcome of an export call.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Outcome {
        /// The export's status: 0 for success.
        pub status: i32,
        /// The output (JSON) on success.
        pub output: String,
        /// The error text (an ABI error as JSON) on failure.
        pub error: String,
    }

    impl Outcome {
        /// The output as JSON (panics when the call failed).
        pub fn json(&self) -> serde_json::Value {
            assert_eq!(self.status, 0, "call failed: {}", self.error);
            serde_json::from_str(&self.output).expect("output is JSON")
        }
    }

    /// Calls an export (e.g. the `call_tool` function `plugin!` defined)
    /// with `input` (the JSON envelope).
    pub fn call(export: extern "C" fn() -> i32, input: &str) -> Outcome {
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            s.input = input.as_bytes().to_vec();
            s.output = None;
            s.error = None;
        });
        let status = export();
        STATE.with(|s| {
            let s = s.borrow();
            Outcome {
                status,
                output: s.output.as_ref().map(|o| String::from_utf8_lossy(o).into_owned()).unwrap_or_default(),
                error: s.error.clone().unwrap_or_default(),
            }
        })
    }

    /// Sets the answer of a host function with a result (`create_message`,
    /// `create_elicitation`, `list_roots`) to `json`. Unset functions answer
    /// with a not-granted error.
    pub fn set_host_answer(function: &str, json: &str) {
        STATE.with(|s| s.borrow_mut().host_answers.insert(function.to_string(), json.to_string()));
    }

    /// Sets a configuration value for [`config`](crate::config).
    pub fn set_config(key: &str, value: &str) {
        STATE.with(|s| s.borrow_mut().config.insert(key.to_string(), value.to_string()));
    }

    /// Returns and clears the host function calls made so far: name and
    /// input JSON.
    pub fn take_host_calls() -> Vec<(String, String)> {
        STATE.with(|s| std::mem::take(&mut s.borrow_mut().host_calls))
    }
}

#[cfg(test)]
mod tests;
