//! The Extism kernel (`extism:host/env`) and the mcphost host functions
//! (`extism:host/user`). Memory moves between the plugin and the kernel eight
//! bytes at a time, with a byte-wise tail.
//!
//! Compiled for anything but wasm32, the kernel is an in-memory fake, so
//! that the PDK (and plugin logic) can be unit tested natively with
//! `cargo test`.

#[cfg(target_arch = "wasm32")]
pub(crate) mod sys {
    #[link(wasm_import_module = "extism:host/env")]
    extern "C" {
        pub fn input_length() -> u64;
        pub fn input_load_u64(offset: u64) -> u64;
        pub fn input_load_u8(offset: u64) -> u32;
        pub fn alloc(length: u64) -> u64;
        pub fn free(offset: u64);
        pub fn length(offset: u64) -> u64;
        pub fn load_u64(offset: u64) -> u64;
        pub fn load_u8(offset: u64) -> u32;
        pub fn store_u64(offset: u64, v: u64);
        pub fn store_u8(offset: u64, v: u32);
        pub fn output_set(offset: u64, length: u64);
        pub fn error_set(offset: u64);
        pub fn config_get(offset: u64) -> u64;
        pub fn http_request(request: u64, body: u64) -> u64;
        pub fn http_status_code() -> i32;
        pub fn http_headers() -> u64;
    }

    // A plugin imports only the host functions it calls: the linker drops
    // the others, so a plugin that never reports progress needs no grant
    // for notify_progress.
    #[link(wasm_import_module = "extism:host/user")]
    extern "C" {
        pub fn create_message(input: u64) -> u64;
        pub fn create_elicitation(input: u64) -> u64;
        pub fn list_roots() -> u64;
        pub fn request_input(input: u64) -> u64;
        pub fn notify_logging_message(input: u64);
        pub fn notify_progress(input: u64);
        pub fn notify_tool_list_changed();
        pub fn notify_prompt_list_changed();
        pub fn notify_resource_list_changed();
        pub fn notify_resource_updated(input: u64);
    }
}

#[cfg(not(target_arch = "wasm32"))]
#[path = "fake.rs"]
pub(crate) mod sys;

/// The input of the current call.
pub(crate) fn read_input() -> Vec<u8> {
    unsafe {
        let n = sys::input_length();
        let mut buf = vec![0u8; n as usize];
        let words = n & !7;
        let mut i = 0u64;
        while i < words {
            let w = sys::input_load_u64(i);
            buf[i as usize..i as usize + 8].copy_from_slice(&w.to_le_bytes());
            i += 8;
        }
        while i < n {
            buf[i as usize] = sys::input_load_u8(i) as u8;
            i += 1;
        }
        buf
    }
}

/// Copies the kernel memory at `offset` into `buf`.
fn load(offset: u64, buf: &mut [u8]) {
    let n = buf.len() as u64;
    let words = n & !7;
    let mut i = 0u64;
    unsafe {
        while i < words {
            let w = sys::load_u64(offset + i);
            buf[i as usize..i as usize + 8].copy_from_slice(&w.to_le_bytes());
            i += 8;
        }
        while i < n {
            buf[i as usize] = sys::load_u8(offset + i) as u8;
            i += 1;
        }
    }
}

/// Copies `data` into the kernel memory at `offset`.
fn store(offset: u64, data: &[u8]) {
    let n = data.len() as u64;
    let words = n & !7;
    let mut i = 0u64;
    unsafe {
        while i < words {
            let mut w = [0u8; 8];
            w.copy_from_slice(&data[i as usize..i as usize + 8]);
            sys::store_u64(offset + i, u64::from_le_bytes(w));
            i += 8;
        }
        while i < n {
            sys::store_u8(offset + i, data[i as usize] as u32);
            i += 1;
        }
    }
}

/// Copies `data` into a new kernel memory block and returns its offset; 0
/// for empty data (the kernel does not allocate empty blocks).
pub(crate) fn alloc_bytes(data: &[u8]) -> u64 {
    if data.is_empty() {
        return 0;
    }
    let offset = unsafe { sys::alloc(data.len() as u64) };
    if offset == 0 {
        panic!("mcphost-pdk: Extism kernel out of memory");
    }
    store(offset, data);
    offset
}

/// Frees a kernel memory block (nothing for 0).
pub(crate) fn free(offset: u64) {
    if offset != 0 {
        unsafe { sys::free(offset) }
    }
}

/// Reads the kernel memory block at `offset` and frees it (empty for 0).
pub(crate) fn take_block(offset: u64) -> Vec<u8> {
    if offset == 0 {
        return Vec::new();
    }
    let n = unsafe { sys::length(offset) };
    let mut buf = vec![0u8; n as usize];
    load(offset, &mut buf);
    free(offset);
    buf
}

/// Sets the output of the current call. The block is not freed: the host
/// reads it after the export returns.
pub(crate) fn set_output(data: &[u8]) {
    let offset = alloc_bytes(data);
    unsafe { sys::output_set(offset, data.len() as u64) }
}

/// Sets the Extism error of the current call.
pub(crate) fn set_error(msg: &str) {
    let msg = if msg.is_empty() { "error" } else { msg };
    unsafe { sys::error_set(alloc_bytes(msg.as_bytes())) }
}

/// The value of the plugin configuration `key` (Extism `config_get`), if
/// set. The operator configures plugins in `mcphost.toml`; declare the keys
/// a plugin reads in its manifest's `needs.config`. An empty value cannot be
/// told apart from an unset key.
pub fn config(key: &str) -> Option<String> {
    let k = alloc_bytes(key.as_bytes());
    if k == 0 {
        return None;
    }
    let offset = unsafe { sys::config_get(k) };
    free(k);
    let v = take_block(offset);
    if v.is_empty() {
        return None;
    }
    Some(String::from_utf8_lossy(&v).into_owned())
}
