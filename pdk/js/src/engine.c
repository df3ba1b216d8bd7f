/*
 * The mcphost JavaScript engine: QuickJS as an mcphost plugin.
 *
 * This module implements the mcphost ABI (abi/ABI.md) on the Extism kernel
 * and hands every export call to the JavaScript prelude (prelude.js), which
 * runs the plugin's handlers. The plugin's source is not part of the module:
 * the host passes it as the Extism config value "mcphost.js.source" (and its
 * file name as "mcphost.js.filename"), so that every JavaScript plugin shares
 * one compiled engine. The source is evaluated on an instance's first call;
 * later calls on that instance reuse the same JavaScript context.
 *
 * Built by internal/jsengine/build.sh; see pdk/js/README.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quickjs.h"
#include "prelude.h" /* prelude_js, prelude_js_len: generated from prelude.js */

typedef uint64_t u64;

#define EXTISM(name) __attribute__((import_module("extism:host/env"), import_name(#name)))
#define HOST(name) __attribute__((import_module("extism:host/user"), import_name(#name)))
#define EXPORT(name) __attribute__((export_name(#name)))

/* The Extism kernel. */
EXTISM(input_length) u64 ext_input_length(void);
EXTISM(input_load_u64) u64 ext_input_load_u64(u64 offset);
EXTISM(input_load_u8) uint32_t ext_input_load_u8(u64 offset);
EXTISM(alloc) u64 ext_alloc(u64 length);
EXTISM(free) void ext_free(u64 offset);
EXTISM(length) u64 ext_length(u64 offset);
EXTISM(load_u64) u64 ext_load_u64(u64 offset);
EXTISM(load_u8) uint32_t ext_load_u8(u64 offset);
EXTISM(store_u64) void ext_store_u64(u64 offset, u64 value);
EXTISM(store_u8) void ext_store_u8(u64 offset, uint32_t value);
EXTISM(output_set) void ext_output_set(u64 offset, u64 length);
EXTISM(error_set) void ext_error_set(u64 offset);
EXTISM(config_get) u64 ext_config_get(u64 key);
EXTISM(http_request) u64 ext_http_request(u64 request, u64 body);
EXTISM(http_status_code) int32_t ext_http_status_code(void);
EXTISM(http_headers) u64 ext_http_headers(void);
EXTISM(log_debug) void ext_log_debug(u64 offset);
EXTISM(log_info) void ext_log_info(u64 offset);
EXTISM(log_warn) void ext_log_warn(u64 offset);
EXTISM(log_error) void ext_log_error(u64 offset);

/* The mcphost host functions (abi.HostModule). The engine imports all of
   them; mcphost provides every one, denying those the operator did not
   grant. */
HOST(create_message) u64 host_create_message(u64 in);
HOST(create_elicitation) u64 host_create_elicitation(u64 in);
HOST(list_roots) u64 host_list_roots(void);
HOST(request_input) u64 host_request_input(u64 in);
HOST(notify_logging_message) void host_notify_logging_message(u64 in);
HOST(notify_progress) void host_notify_progress(u64 in);
HOST(notify_tool_list_changed) void host_notify_tool_list_changed(void);
HOST(notify_prompt_list_changed) void host_notify_prompt_list_changed(void);
HOST(notify_resource_list_changed) void host_notify_resource_list_changed(void);
HOST(notify_resource_updated) void host_notify_resource_updated(u64 in);
HOST(notify_elicitation_complete) void host_notify_elicitation_complete(u64 in);

/* Reserved config keys; must match engine.go. */
#define SOURCE_KEY "mcphost.js.source"
#define FILENAME_KEY "mcphost.js.filename"

/* The JavaScript stack limit, below the linked shadow stack (build.sh:
   -z stack-size=1048576) so that deep recursion is a RangeError, not a trap. */
#define JS_STACK_BYTES (768 * 1024)

/* ---- Kernel memory ---- */

/* block_write copies n bytes into a new kernel block. It returns 0 for an
   empty block (or when the kernel is out of memory). */
static u64 block_write(const void *data, size_t n)
{
    const uint8_t *p = data;
    u64 off;
    size_t i = 0;
    if (n == 0)
        return 0;
    off = ext_alloc(n);
    if (off == 0)
        return 0;
    for (; i + 8 <= n; i += 8) {
        u64 w;
        memcpy(&w, p + i, 8);
        ext_store_u64(off + i, w);
    }
    for (; i < n; i++)
        ext_store_u8(off + i, p[i]);
    return off;
}

/* block_read copies the kernel block at off into a new NUL-terminated
   buffer (NULL when out of memory) and frees the block if take is set. */
static char *block_read(u64 off, size_t *len, int take)
{
    size_t n = off ? ext_length(off) : 0, i = 0;
    char *buf = malloc(n + 1);
    if (buf) {
        for (; i + 8 <= n; i += 8) {
            u64 w = ext_load_u64(off + i);
            memcpy(buf + i, &w, 8);
        }
        for (; i < n; i++)
            buf[i] = (char)ext_load_u8(off + i);
        buf[n] = '\0';
    }
    *len = buf ? n : 0;
    if (take && off)
        ext_free(off);
    return buf;
}

static char *input_read(size_t *len)
{
    size_t n = ext_input_length(), i = 0;
    char *buf = malloc(n + 1);
    if (!buf)
        return NULL;
    for (; i + 8 <= n; i += 8) {
        u64 w = ext_input_load_u64(i);
        memcpy(buf + i, &w, 8);
    }
    for (; i < n; i++)
        buf[i] = (char)ext_input_load_u8(i);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static void set_output(const char *s, size_t n)
{
    u64 off = block_write(s, n);
    ext_output_set(off, off ? n : 0);
}

static void set_error(const char *s, size_t n)
{
    u64 off = block_write(s, n ? n : 1);
    ext_error_set(off);
}

/* set_internal_error sets the ABI error {"code":-32603,"message":msg}. */
static void set_internal_error(const char *msg)
{
    size_t n = strlen(msg), i, j = 0;
    char *buf = malloc(n * 6 + 64);
    if (!buf) {
        static const char oom[] = "{\"code\":-32603,\"message\":\"out of memory\"}";
        set_error(oom, sizeof(oom) - 1);
        return;
    }
    j += sprintf(buf, "{\"code\":-32603,\"message\":\"");
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)msg[i];
        if (c == '"' || c == '\\') {
            buf[j++] = '\\';
            buf[j++] = (char)c;
        } else if (c < 0x20) {
            j += sprintf(buf + j, "\\u%04x", c);
        } else {
            buf[j++] = (char)c;
        }
    }
    j += sprintf(buf + j, "\"}");
    set_error(buf, j);
    free(buf);
}

/* config_value returns the config value of key (malloc'd) or NULL. */
static char *config_value(const char *key, size_t *len)
{
    u64 k = block_write(key, strlen(key)), v;
    v = ext_config_get(k);
    ext_free(k);
    if (v == 0)
        return NULL;
    return block_read(v, len, 1);
}

/* ---- JavaScript state ---- */

static JSRuntime *rt;
static JSContext *ctx;
static JSValue dispatch_fn; /* the prelude's dispatch(export, input) */
static char *init_error;    /* why the source did not load; sticks */

/* The outcome of the current call, set by the prelude through done(). */
static int call_done, call_ok;
static char *call_out;
static size_t call_out_len;

/* exception_text formats the pending exception as "Name: message" plus its
   stack, in a malloc'd string. */
static char *exception_text(JSContext *c)
{
    JSValue e = JS_GetException(c), stack = JS_UNDEFINED;
    const char *msg, *st = NULL;
    char *out;
    size_t n;
    msg = JS_ToCString(c, e);
    if (JS_IsError(c, e)) {
        stack = JS_GetPropertyStr(c, e, "stack");
        if (JS_IsString(stack))
            st = JS_ToCString(c, stack);
    }
    if (!msg)
        msg = JS_ToCString(c, JS_UNDEFINED); /* "undefined" */
    n = strlen(msg ? msg : "") + (st ? strlen(st) + 1 : 0) + 1;
    out = malloc(n);
    if (out) {
        strcpy(out, msg ? msg : "");
        if (st && *st) {
            strcat(out, "\n");
            strcat(out, st);
            /* drop the stack's trailing newline */
            n = strlen(out);
            while (n > 0 && out[n - 1] == '\n')
                out[--n] = '\0';
        }
    }
    if (st)
        JS_FreeCString(c, st);
    if (msg)
        JS_FreeCString(c, msg);
    JS_FreeValue(c, stack);
    JS_FreeValue(c, e);
    return out;
}

static void log_message(int level, const char *s, size_t n)
{
    u64 off = block_write(s, n ? n : 1);
    if (off == 0)
        return;
    /* The kernel frees the block. */
    switch (level) {
    case 0: ext_log_debug(off); break;
    case 1: ext_log_info(off); break;
    case 2: ext_log_warn(off); break;
    default: ext_log_error(off); break;
    }
}

/* bytes_of returns the bytes of an ArrayBuffer or typed array. */
static uint8_t *bytes_of(JSContext *c, JSValueConst v, size_t *len)
{
    size_t off = 0, n = 0, per;
    uint8_t *p;
    JSValue buf;
    if (JS_IsObject(v)) {
        p = JS_GetArrayBuffer(c, &n, v);
        if (p) {
            *len = n;
            return p;
        }
        JS_FreeValue(c, JS_GetException(c));
        buf = JS_GetTypedArrayBuffer(c, v, &off, &n, &per);
        if (!JS_IsException(buf)) {
            size_t total;
            p = JS_GetArrayBuffer(c, &total, buf);
            JS_FreeValue(c, buf);
            if (p) {
                *len = n;
                return p + off;
            }
        }
        JS_FreeValue(c, JS_GetException(c));
    }
    JS_ThrowTypeError(c, "expected an ArrayBuffer or a typed array");
    return NULL;
}

/* ---- Native functions the prelude uses (the object passed to it) ---- */

/* host(name, input?) calls a host function; it returns its output as a
   string, or undefined for functions without output. */
static JSValue js_host(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
    const char *name, *in = NULL;
    size_t in_len = 0, out_len;
    u64 in_off = 0, out_off = 0;
    int has_out = 0;
    JSValue ret;
    char *out;
    name = JS_ToCString(c, argv[0]);
    if (!name)
        return JS_EXCEPTION;
    if (argc > 1 && !JS_IsUndefined(argv[1])) {
        in = JS_ToCStringLen(c, &in_len, argv[1]);
        if (!in) {
            JS_FreeCString(c, name);
            return JS_EXCEPTION;
        }
        in_off = block_write(in, in_len ? in_len : 1);
        JS_FreeCString(c, in);
    }
    if (!strcmp(name, "create_message")) {
        out_off = host_create_message(in_off), has_out = 1;
    } else if (!strcmp(name, "create_elicitation")) {
        out_off = host_create_elicitation(in_off), has_out = 1;
    } else if (!strcmp(name, "list_roots")) {
        out_off = host_list_roots(), has_out = 1;
    } else if (!strcmp(name, "request_input")) {
        out_off = host_request_input(in_off), has_out = 1;
    } else if (!strcmp(name, "notify_logging_message")) {
        host_notify_logging_message(in_off);
    } else if (!strcmp(name, "notify_progress")) {
        host_notify_progress(in_off);
    } else if (!strcmp(name, "notify_tool_list_changed")) {
        host_notify_tool_list_changed();
    } else if (!strcmp(name, "notify_prompt_list_changed")) {
        host_notify_prompt_list_changed();
    } else if (!strcmp(name, "notify_resource_list_changed")) {
        host_notify_resource_list_changed();
    } else if (!strcmp(name, "notify_resource_updated")) {
        host_notify_resource_updated(in_off);
    } else if (!strcmp(name, "notify_elicitation_complete")) {
        host_notify_elicitation_complete(in_off);
    } else {
        if (in_off)
            ext_free(in_off);
        ret = JS_ThrowTypeError(c, "unknown host function %s", name);
        JS_FreeCString(c, name);
        return ret;
    }
    JS_FreeCString(c, name);
    if (in_off)
        ext_free(in_off);
    if (!has_out)
        return JS_UNDEFINED;
    if (out_off == 0)
        return JS_NewString(c, "");
    out = block_read(out_off, &out_len, 1);
    if (!out)
        return JS_ThrowOutOfMemory(c);
    ret = JS_NewStringLen(c, out, out_len);
    free(out);
    return ret;
}

/* config(key) returns the operator's config value or undefined. */
static JSValue js_config(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
    const char *key = JS_ToCString(c, argv[0]);
    char *v;
    size_t n;
    JSValue ret;
    if (!key)
        return JS_EXCEPTION;
    v = config_value(key, &n);
    JS_FreeCString(c, key);
    if (!v)
        return JS_UNDEFINED;
    ret = JS_NewStringLen(c, v, n);
    free(v);
    return ret;
}

/* log(level, message): level 0 debug, 1 info, 2 warn, 3 error; to the host
   log. */
static JSValue js_log(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
    int32_t level = 1;
    size_t n;
    const char *s;
    JS_ToInt32(c, &level, argv[0]);
    s = JS_ToCStringLen(c, &n, argv[1]);
    if (!s)
        return JS_EXCEPTION;
    log_message(level, s, n);
    JS_FreeCString(c, s);
    return JS_UNDEFINED;
}

/* http(requestJSON, body?) -> [status, headersJSON | undefined, ArrayBuffer]:
   status 0 when the request failed, with why as the body. */
static JSValue js_http(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t n, body_len = 0;
    const char *req = JS_ToCStringLen(c, &n, argv[0]);
    uint8_t *body = NULL;
    u64 req_off, body_off = 0, resp_off, hdr_off;
    int32_t status;
    char *resp, *hdr = NULL;
    size_t resp_len, hdr_len = 0;
    JSValue arr;
    if (!req)
        return JS_EXCEPTION;
    if (argc > 1 && !JS_IsUndefined(argv[1])) {
        body = bytes_of(c, argv[1], &body_len);
        if (!body) {
            JS_FreeCString(c, req);
            return JS_EXCEPTION;
        }
    }
    req_off = block_write(req, n);
    JS_FreeCString(c, req);
    body_off = block_write(body, body_len);
    /* The kernel frees the request and body blocks. */
    resp_off = ext_http_request(req_off, body_off);
    status = ext_http_status_code();
    resp = block_read(resp_off, &resp_len, 1);
    hdr_off = ext_http_headers();
    if (hdr_off)
        hdr = block_read(hdr_off, &hdr_len, 1);
    if (!resp) {
        free(hdr);
        return JS_ThrowOutOfMemory(c);
    }
    arr = JS_NewArray(c);
    JS_SetPropertyUint32(c, arr, 0, JS_NewInt32(c, status));
    JS_SetPropertyUint32(c, arr, 1, hdr ? JS_NewStringLen(c, hdr, hdr_len) : JS_UNDEFINED);
    JS_SetPropertyUint32(c, arr, 2, JS_NewArrayBufferCopy(c, (uint8_t *)resp, resp_len));
    free(resp);
    free(hdr);
    return arr;
}

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* b64encode(bytes) -> standard base64 string with padding */
static JSValue js_b64encode(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t n, i, j = 0;
    uint8_t *p = bytes_of(c, argv[0], &n);
    char *out;
    JSValue ret;
    if (!p)
        return JS_EXCEPTION;
    out = malloc((n + 2) / 3 * 4 + 1);
    if (!out)
        return JS_ThrowOutOfMemory(c);
    for (i = 0; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        out[j++] = b64chars[v >> 18 & 63];
        out[j++] = b64chars[v >> 12 & 63];
        out[j++] = b64chars[v >> 6 & 63];
        out[j++] = b64chars[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        out[j++] = b64chars[v >> 18 & 63];
        out[j++] = b64chars[v >> 12 & 63];
        out[j++] = i + 1 < n ? b64chars[v >> 6 & 63] : '=';
        out[j++] = '=';
    }
    ret = JS_NewStringLen(c, out, j);
    free(out);
    return ret;
}

static int b64value(int ch)
{
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+' || ch == '-') return 62;
    if (ch == '/' || ch == '_') return 63;
    return -1;
}

/* b64decode(string) -> ArrayBuffer; accepts the standard and URL alphabets,
   with or without padding, and ignores whitespace. */
static JSValue js_b64decode(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t n, i, j = 0;
    const char *s = JS_ToCStringLen(c, &n, argv[0]);
    uint8_t *out;
    uint32_t acc = 0;
    int bits = 0, pad = 0;
    JSValue ret;
    if (!s)
        return JS_EXCEPTION;
    out = malloc(n / 4 * 3 + 3);
    if (!out) {
        JS_FreeCString(c, s);
        return JS_ThrowOutOfMemory(c);
    }
    for (i = 0; i < n; i++) {
        int ch = (unsigned char)s[i], v;
        if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
            continue;
        if (ch == '=') {
            pad++;
            continue;
        }
        v = b64value(ch);
        if (v < 0 || pad) {
            free(out);
            JS_FreeCString(c, s);
            return JS_ThrowSyntaxError(c, "invalid base64 at offset %d", (int)i);
        }
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[j++] = (uint8_t)(acc >> bits);
        }
    }
    JS_FreeCString(c, s);
    ret = JS_NewArrayBufferCopy(c, out, j);
    free(out);
    return ret;
}

/* utf8encode(string) -> ArrayBuffer */
static JSValue js_utf8encode(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t n;
    const char *s = JS_ToCStringLen(c, &n, argv[0]);
    JSValue ret;
    if (!s)
        return JS_EXCEPTION;
    ret = JS_NewArrayBufferCopy(c, (const uint8_t *)s, n);
    JS_FreeCString(c, s);
    return ret;
}

/* utf8decode(bytes) -> string */
static JSValue js_utf8decode(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t n;
    uint8_t *p = bytes_of(c, argv[0], &n);
    if (!p)
        return JS_EXCEPTION;
    return JS_NewStringLen(c, (const char *)p, n);
}

/* done(ok, text): the outcome of the current call. */
static JSValue js_done(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t n;
    const char *s;
    if (call_done)
        return JS_UNDEFINED;
    s = JS_ToCStringLen(c, &n, argv[1]);
    if (!s)
        return JS_EXCEPTION;
    call_out = malloc(n + 1);
    if (!call_out) {
        JS_FreeCString(c, s);
        return JS_ThrowOutOfMemory(c);
    }
    memcpy(call_out, s, n + 1);
    call_out_len = n;
    JS_FreeCString(c, s);
    call_ok = JS_ToBool(c, argv[0]);
    call_done = 1;
    return JS_UNDEFINED;
}

static const JSCFunctionListEntry native_funcs[] = {
    JS_CFUNC_DEF("host", 2, js_host),
    JS_CFUNC_DEF("config", 1, js_config),
    JS_CFUNC_DEF("log", 2, js_log),
    JS_CFUNC_DEF("http", 2, js_http),
    JS_CFUNC_DEF("b64encode", 1, js_b64encode),
    JS_CFUNC_DEF("b64decode", 1, js_b64decode),
    JS_CFUNC_DEF("utf8encode", 1, js_utf8encode),
    JS_CFUNC_DEF("utf8decode", 1, js_utf8decode),
    JS_CFUNC_DEF("done", 2, js_done),
};

/* ---- Initialisation ---- */

static void fail_init(const char *what, char *detail)
{
    size_t n = strlen(what) + (detail ? strlen(detail) : 0) + 3;
    init_error = malloc(n);
    if (init_error)
        snprintf(init_error, n, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
    free(detail);
}

/* init creates the JavaScript context, runs the prelude and then the
   plugin's source. It returns 0 on failure, with init_error set; a failure
   is final for this instance. */
static int init(void)
{
    static int done;
    JSValue prelude, native, setup, ret, global;
    char *src, *filename;
    size_t src_len, filename_len;

    if (done)
        return init_error == NULL;
    done = 1;

    rt = JS_NewRuntime();
    ctx = rt ? JS_NewContext(rt) : NULL;
    if (!ctx) {
        fail_init("out of memory", NULL);
        return 0;
    }
    JS_SetMaxStackSize(rt, JS_STACK_BYTES);

    /* The prelude is a function expression taking the native object. */
    prelude = JS_Eval(ctx, (const char *)prelude_js, prelude_js_len, "mcphost:prelude",
                      JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_STRICT);
    if (JS_IsException(prelude)) {
        fail_init("prelude", exception_text(ctx));
        return 0;
    }
    native = JS_NewObject(ctx);
    JS_SetPropertyFunctionList(ctx, native, native_funcs,
                               sizeof(native_funcs) / sizeof(native_funcs[0]));
    global = JS_GetGlobalObject(ctx);
    setup = JS_Call(ctx, prelude, global, 1, (JSValueConst *)&native);
    JS_FreeValue(ctx, prelude);
    JS_FreeValue(ctx, native);
    JS_FreeValue(ctx, global);
    if (JS_IsException(setup)) {
        fail_init("prelude", exception_text(ctx));
        return 0;
    }
    dispatch_fn = setup; /* the prelude returns dispatch */

    src = config_value(SOURCE_KEY, &src_len);
    if (!src) {
        fail_init("no JavaScript source: the host did not set config " SOURCE_KEY, NULL);
        return 0;
    }
    filename = config_value(FILENAME_KEY, &filename_len);
    ret = JS_Eval(ctx, src, src_len, filename ? filename : "plugin.js", JS_EVAL_TYPE_GLOBAL);
    free(src);
    free(filename);
    if (JS_IsException(ret)) {
        fail_init("loading the plugin failed", exception_text(ctx));
        return 0;
    }
    JS_FreeValue(ctx, ret);
    /* Settle what the top level queued (promises). */
    for (;;) {
        JSContext *c;
        int r = JS_ExecutePendingJob(rt, &c);
        if (r == 0)
            break;
        if (r < 0) {
            fail_init("loading the plugin failed", exception_text(c));
            return 0;
        }
    }
    return 1;
}

/* ---- Exports ---- */

static int32_t run_export(const char *name)
{
    char *in;
    size_t in_len;
    JSValue args[2], ret;

    if (!init()) {
        set_internal_error(init_error ? init_error : "out of memory");
        return 1;
    }
    JS_UpdateStackTop(rt);
    in = input_read(&in_len);
    if (!in) {
        set_internal_error("out of memory reading the input");
        return 1;
    }
    call_done = 0;
    call_ok = 0;
    call_out = NULL;
    args[0] = JS_NewString(ctx, name);
    args[1] = JS_NewStringLen(ctx, in, in_len);
    free(in);
    ret = JS_Call(ctx, dispatch_fn, JS_UNDEFINED, 2, (JSValueConst *)args);
    JS_FreeValue(ctx, args[0]);
    JS_FreeValue(ctx, args[1]);
    if (JS_IsException(ret)) {
        char *msg = exception_text(ctx);
        set_internal_error(msg ? msg : "exception");
        free(msg);
        free(call_out);
        call_out = NULL;
        return 1;
    }
    JS_FreeValue(ctx, ret);
    /* Run the promise jobs: async handlers settle here, since nothing they
       can wait for (host functions are synchronous) is outside the VM. Jobs
       the handler left behind run too, within this call. */
    for (;;) {
        JSContext *c;
        int r = JS_ExecutePendingJob(rt, &c);
        if (r == 0)
            break;
        if (r < 0) {
            static const char what[] = "exception in a promise job";
            char *msg = exception_text(c);
            log_message(3, msg ? msg : what, msg ? strlen(msg) : sizeof(what) - 1);
            free(msg);
        }
    }
    if (!call_done) {
        set_internal_error("the handler returned a promise that never settled "
                           "(plugins have no timers or asynchronous I/O)");
        return 1;
    }
    if (call_ok)
        set_output(call_out, call_out_len);
    else
        set_error(call_out, call_out_len);
    free(call_out);
    call_out = NULL;
    return call_ok ? 0 : 1;
}

EXPORT(list_tools) int32_t list_tools(void) { return run_export("list_tools"); }
EXPORT(call_tool) int32_t call_tool(void) { return run_export("call_tool"); }
EXPORT(list_prompts) int32_t list_prompts(void) { return run_export("list_prompts"); }
EXPORT(get_prompt) int32_t get_prompt(void) { return run_export("get_prompt"); }
EXPORT(list_resources) int32_t list_resources(void) { return run_export("list_resources"); }
EXPORT(list_resource_templates) int32_t list_resource_templates(void) { return run_export("list_resource_templates"); }
EXPORT(read_resource) int32_t read_resource(void) { return run_export("read_resource"); }
EXPORT(complete) int32_t complete(void) { return run_export("complete"); }

/* abi.ExportHTTPErrors: mcphost answers a failed http_request with status 0
   and why as the body, which mcphost.fetch throws as an Error. The host
   never calls it. */
EXPORT(mcphost_http_errors) int32_t mcphost_http_errors(void) { return 0; }
