//! An in-memory fake of the Extism kernel and the mcphost host functions,
//! used when the PDK is compiled natively (unit tests). Same signatures as
//! the wasm imports; state is per thread.

#![allow(clippy::missing_safety_doc)]

use std::cell::RefCell;
use std::collections::HashMap;

#[derive(Default)]
pub(crate) struct State {
    blocks: HashMap<u64, Vec<u8>>,
    next: u64,
    pub input: Vec<u8>,
    pub output: Option<Vec<u8>>,
    pub error: Option<String>,
    pub config: HashMap<String, String>,
    /// Host function calls: name and input JSON ("" for none).
    pub host_calls: Vec<(String, String)>,
    /// Answers of host functions with a result, by name.
    pub host_answers: HashMap<String, String>,
    /// What `http_request` answers: the status `http_status_code` returns
    /// and the response body.
    pub http_status: i32,
    pub http_body: String,
    /// The last request `http_request` received (JSON).
    pub http_request: String,
}

thread_local! {
    pub(crate) static STATE: RefCell<State> = RefCell::new(State { next: 1, ..State::default() });
}

fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    STATE.with(|s| f(&mut s.borrow_mut()))
}

fn locate(offset: u64) -> (u64, usize) {
    with(|s| {
        for (start, b) in &s.blocks {
            if offset >= *start && offset < *start + b.len() as u64 {
                return (*start, (offset - start) as usize);
            }
        }
        panic!("fake kernel: offset {} is in no block", offset)
    })
}

pub(crate) fn new_block(data: Vec<u8>) -> u64 {
    if data.is_empty() {
        return 0;
    }
    with(|s| {
        let offset = s.next;
        s.next += data.len() as u64 + 8;
        s.blocks.insert(offset, data);
        offset
    })
}

fn block(offset: u64) -> Vec<u8> {
    with(|s| s.blocks.get(&offset).cloned().unwrap_or_default())
}

pub unsafe fn input_length() -> u64 {
    with(|s| s.input.len() as u64)
}
pub unsafe fn input_load_u64(offset: u64) -> u64 {
    with(|s| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s.input[offset as usize..offset as usize + 8]);
        u64::from_le_bytes(w)
    })
}
pub unsafe fn input_load_u8(offset: u64) -> u32 {
    with(|s| s.input[offset as usize] as u32)
}
pub unsafe fn alloc(length: u64) -> u64 {
    new_block(vec![0u8; length as usize])
}
pub unsafe fn free(offset: u64) {
    with(|s| s.blocks.remove(&offset));
}
pub unsafe fn length(offset: u64) -> u64 {
    with(|s| s.blocks.get(&offset).map(|b| b.len() as u64).unwrap_or(0))
}
pub unsafe fn load_u64(offset: u64) -> u64 {
    let (start, at) = locate(offset);
    with(|s| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s.blocks[&start][at..at + 8]);
        u64::from_le_bytes(w)
    })
}
pub unsafe fn load_u8(offset: u64) -> u32 {
    let (start, at) = locate(offset);
    with(|s| s.blocks[&start][at] as u32)
}
pub unsafe fn store_u64(offset: u64, v: u64) {
    let (start, at) = locate(offset);
    with(|s| s.blocks.get_mut(&start).unwrap()[at..at + 8].copy_from_slice(&v.to_le_bytes()))
}
pub unsafe fn store_u8(offset: u64, v: u32) {
    let (start, at) = locate(offset);
    with(|s| s.blocks.get_mut(&start).unwrap()[at] = v as u8)
}
pub unsafe fn output_set(offset: u64, length: u64) {
    let mut b = block(offset);
    b.truncate(length as usize);
    with(|s| s.output = Some(b));
}
pub unsafe fn error_set(offset: u64) {
    let b = block(offset);
    with(|s| s.error = Some(String::from_utf8_lossy(&b).into_owned()));
}
pub unsafe fn config_get(offset: u64) -> u64 {
    let key = String::from_utf8_lossy(&block(offset)).into_owned();
    match with(|s| s.config.get(&key).cloned()) {
        Some(v) => new_block(v.into_bytes()),
        None => 0,
    }
}
pub unsafe fn http_request(request: u64, body: u64) -> u64 {
    let text = String::from_utf8_lossy(&block(request)).into_owned();
    // The host frees the request and body blocks.
    free(request);
    free(body);
    let answer = with(|s| {
        s.http_request = text;
        s.http_body.clone()
    });
    new_block(answer.into_bytes())
}
pub unsafe fn http_status_code() -> i32 {
    with(|s| s.http_status)
}
pub unsafe fn http_headers() -> u64 {
    0
}

fn host_call(name: &str, input: u64) -> u64 {
    let text = String::from_utf8_lossy(&block(input)).into_owned();
    let answer = with(|s| {
        s.host_calls.push((name.to_string(), text));
        s.host_answers.get(name).cloned()
    });
    let answer = answer.unwrap_or_else(|| {
        format!(r#"{{"error":{{"code":-32603,"message":"host function {} is not granted"}}}}"#, name)
    });
    new_block(answer.into_bytes())
}

pub unsafe fn create_message(input: u64) -> u64 {
    host_call("create_message", input)
}
pub unsafe fn create_elicitation(input: u64) -> u64 {
    host_call("create_elicitation", input)
}
pub unsafe fn request_input(input: u64) -> u64 {
    host_call("request_input", input)
}
pub unsafe fn list_roots() -> u64 {
    host_call("list_roots", 0)
}
pub unsafe fn notify_logging_message(input: u64) {
    host_call("notify_logging_message", input);
}
pub unsafe fn notify_progress(input: u64) {
    host_call("notify_progress", input);
}
pub unsafe fn notify_tool_list_changed() {
    host_call("notify_tool_list_changed", 0);
}
pub unsafe fn notify_prompt_list_changed() {
    host_call("notify_prompt_list_changed", 0);
}
pub unsafe fn notify_resource_list_changed() {
    host_call("notify_resource_list_changed", 0);
}
pub unsafe fn notify_resource_updated(input: u64) {
    host_call("notify_resource_updated", input);
}
