//! Errors of handlers and host functions.

use std::fmt;

use serde_json::{json, Value};

/// JSON-RPC error codes a plugin may return through [`Error::protocol`].
pub const CODE_INVALID_PARAMS: i32 = -32602;
/// JSON-RPC internal error.
pub const CODE_INTERNAL_ERROR: i32 = -32603;
/// MCP "resource not found".
pub const CODE_RESOURCE_NOT_FOUND: i32 = -32002;

/// The error of a handler.
///
/// A *plain* error ([`Error::new`], or any `std::error::Error` converted by
/// `?`) returned by a tool handler becomes a **tool execution error**: the
/// call succeeds with a result marked `isError` carrying the message, so the
/// model can read it. From a prompt, resource or completion handler it
/// becomes an internal error (-32603).
///
/// A *protocol* error ([`Error::protocol`], [`Error::invalid_params`],
/// [`Error::resource_not_found`]) fails the MCP request itself: the export
/// sets `{"code": C, "message": M, "data": D}` with `error_set` and the
/// client receives that JSON-RPC error.
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    message: String,
    code: Option<i32>,
    data: Option<Value>,
    not_found: bool,
}

/// The result type of handlers.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A plain error: a tool execution error from a tool handler, an
    /// internal error from the others.
    pub fn new(message: impl Into<String>) -> Error {
        Error { message: message.into(), code: None, data: None, not_found: false }
    }

    /// A protocol error: the request fails with this JSON-RPC code.
    pub fn protocol(code: i32, message: impl Into<String>) -> Error {
        Error { message: message.into(), code: Some(code), data: None, not_found: false }
    }

    /// A protocol error with code -32602 (invalid params).
    pub fn invalid_params(message: impl Into<String>) -> Error {
        Error::protocol(CODE_INVALID_PARAMS, message)
    }

    /// A protocol error with code -32002 naming `uri`, with data
    /// `{"uri": uri}`.
    pub fn resource_not_found(uri: &str) -> Error {
        Error {
            message: format!("resource not found: {}", uri),
            code: Some(CODE_RESOURCE_NOT_FOUND),
            data: Some(json!({ "uri": uri })),
            not_found: true,
        }
    }

    /// A protocol error with code -32603 (internal error).
    pub fn internal(message: impl Into<String>) -> Error {
        Error::protocol(CODE_INTERNAL_ERROR, message)
    }

    /// Attaches JSON-RPC error data (protocol errors).
    pub fn with_data(mut self, data: Value) -> Error {
        self.data = Some(data);
        self
    }

    /// The error message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JSON-RPC code of a protocol error, `None` for a plain error.
    pub fn code(&self) -> Option<i32> {
        self.code
    }

    /// Whether the error says something does not exist: a resource not
    /// found, or an `std::io::Error` of kind `NotFound` (a resource handler
    /// returning one fails the read with -32002).
    pub fn is_not_found(&self) -> bool {
        self.not_found
    }

    /// Whether the error fails the request (it has a code).
    pub fn is_protocol(&self) -> bool {
        self.code.is_some()
    }

    /// The text the export sets with `error_set`: the error as an ABI error
    /// object, the code defaulting to -32603.
    pub(crate) fn abi_text(&self) -> String {
        let mut obj = json!({
            "code": self.code.unwrap_or(CODE_INTERNAL_ERROR),
            "message": self.message,
        });
        if let Some(d) = &self.data {
            obj["data"] = d.clone();
        }
        obj.to_string()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Any standard error converts into a plain [`Error`] with its message, so
/// `?` works in handlers.
impl<E: std::error::Error + 'static> From<E> for Error {
    fn from(e: E) -> Error {
        let mut err = Error::new(e.to_string());
        if let Some(io) = (&e as &dyn std::any::Any).downcast_ref::<std::io::Error>() {
            err.not_found = io.kind() == std::io::ErrorKind::NotFound;
        }
        err
    }
}

/// Returns early from a handler with a plain [`Error`] built like
/// `format!`: `bail!("no such word: {}", w)`.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return ::core::result::Result::Err($crate::Error::new(::std::format!($($arg)*)))
    };
}

/// The error a host function reported (`{"error": {"code", "message"}}`),
/// for example a function the operator did not grant or a client that does
/// not support sampling. Converted by `?`, it is a plain [`Error`] (a tool
/// execution error in a tool handler).
#[derive(Clone, Debug, PartialEq)]
pub struct HostError {
    /// The host function that failed.
    pub function: String,
    /// The host's JSON-RPC error code.
    pub code: i32,
    /// The host's message.
    pub message: String,
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.function, self.message)
    }
}

impl std::error::Error for HostError {}
