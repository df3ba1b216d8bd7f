//! HTTP through the Extism kernel (`http_request`): WASI has no sockets.

use std::collections::BTreeMap;

use serde_json::json;

use crate::error::{Error, Result};
use crate::kernel::{self, sys};

/// An HTTP request made through the Extism host.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HttpRequest {
    /// `GET` when empty.
    pub method: String,
    pub url: String,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl HttpRequest {
    /// A GET request of `url`.
    pub fn get(url: impl Into<String>) -> HttpRequest {
        HttpRequest { method: "GET".into(), url: url.into(), ..HttpRequest::default() }
    }

    /// A POST request of `url` with `body`.
    pub fn post(url: impl Into<String>, body: impl Into<Vec<u8>>) -> HttpRequest {
        HttpRequest { method: "POST".into(), url: url.into(), body: body.into(), ..HttpRequest::default() }
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> HttpRequest {
        self.headers.insert(name.into(), value.into());
        self
    }
}

/// The response to an [`HttpRequest`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HttpResponse {
    pub status: u16,
    /// The response headers (lower-case names) when the host lets the plugin
    /// see them; empty otherwise.
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

/// Sends `req` through the Extism kernel (`http_request`). The host only
/// lets requests through to the hosts the operator granted: declare them in
/// the manifest's `needs.hosts`.
///
/// A request that mcphost refuses or that fails (a host, port or scheme not
/// granted, a private address, a connection, TLS or timeout error, a
/// response over the size limit) returns an error whose message says why
/// and, for a refusal, which grant in `[plugins.NAME]` would allow it; the
/// plugin can handle it and go on. (`plugin!` exports
/// `mcphost_http_errors` for that.) Other Extism hosts, such as hyper-mcp,
/// fail the whole plugin call instead.
pub fn fetch(req: &HttpRequest) -> Result<HttpResponse> {
    if req.url.is_empty() {
        return Err(Error::new("fetch: empty URL"));
    }
    let method = if req.method.is_empty() { "GET" } else { req.method.as_str() };
    let mut meta = json!({ "method": method, "url": req.url });
    if !req.headers.is_empty() {
        meta["headers"] = json!(req.headers);
    }
    let meta = kernel::alloc_bytes(meta.to_string().as_bytes());
    // The host frees the request and body blocks.
    let offset = unsafe { sys::http_request(meta, kernel::alloc_bytes(&req.body)) };
    let status = unsafe { sys::http_status_code() };
    let body = kernel::take_block(offset);
    if status <= 0 {
        // No HTTP response has status 0: mcphost's answer to a request that
        // failed, with why as the body.
        if !body.is_empty() {
            return Err(Error::new(String::from_utf8_lossy(&body).into_owned()));
        }
        return Err(Error::new(format!("fetch: no response from {}", req.url)));
    }
    let mut resp = HttpResponse { status: status as u16, body, ..HttpResponse::default() };
    let h = unsafe { sys::http_headers() };
    if h != 0 {
        if let Ok(headers) = serde_json::from_slice(&kernel::take_block(h)) {
            resp.headers = headers;
        }
    }
    Ok(resp)
}
