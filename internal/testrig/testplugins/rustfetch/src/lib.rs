//! rustfetch is the Rust test plugin that sends HTTP requests through the
//! Rust PDK and handles a failed one as an error value, as
//! sandbox/testdata/pdkfetch does with the Go PDK: one tool, `fetch`,
//! taking `{"url": string}` and answering "STATUS BODY", or "fallback:
//! MESSAGE" when the request failed.

use mcphost_pdk::*;

manifest!(include_str!("../manifest.json"));
plugin!(register);

schema! {
    pub struct FetchArgs {
        /// The URL to GET.
        pub url: String,
    }
}

fn register() {
    tool("fetch", "Fetches a URL; a request that fails gives the fallback.", |_: &Context, a: FetchArgs| {
        Ok(match fetch(&HttpRequest::get(a.url)) {
            Ok(resp) => format!("{} {}", resp.status, String::from_utf8_lossy(&resp.body)),
            Err(e) => format!("fallback: {}", e.message()),
        })
    });
}
