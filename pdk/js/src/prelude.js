// The mcphost JavaScript prelude (pdk/js/src/prelude.js): the `mcphost` API of JavaScript plugins
// and the dispatcher of the ABI exports. engine.c evaluates this file (a
// function expression) once per instance, calls it with the native
// functions, and calls the function it returns, dispatch(export, input),
// for every export call. See README.md for the API and mcphost.d.ts for its
// types (pdk/js).
(function (native) {
  'use strict';

  const CODE_INVALID_PARAMS = -32602;
  const CODE_INTERNAL_ERROR = -32603;
  const CODE_RESOURCE_NOT_FOUND = -32002;
  const MAX_COMPLETION_VALUES = 100;
  const CONTENT_TYPES = ['text', 'image', 'audio', 'resource_link', 'resource'];
  const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

  const defineHidden = (obj, key, value) =>
    Object.defineProperty(obj, key, { value, enumerable: false, configurable: true, writable: true });
  const isObject = (v) => v !== null && typeof v === 'object';
  const isThenable = (v) => isObject(v) && typeof v.then === 'function';
  const isBytes = (v) => v instanceof ArrayBuffer || ArrayBuffer.isView(v);

  // settle runs fn and hands its value (awaited when it is a promise) to
  // onValue, or what it threw to onError.
  function settle(fn, onValue, onError) {
    let r;
    try {
      r = fn();
    } catch (e) {
      return onError(e);
    }
    if (isThenable(r)) return Promise.resolve(r).then(onValue, onError);
    return onValue(r);
  }

  // ---- Bytes and text ----

  function toUint8(data) {
    if (data instanceof Uint8Array) return data;
    if (data instanceof ArrayBuffer) return new Uint8Array(data);
    if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    if (Array.isArray(data)) return Uint8Array.from(data);
    throw new TypeError('expected bytes (Uint8Array, ArrayBuffer or typed array)');
  }

  // base64 of bytes, or of a string's UTF-8.
  function base64Encode(data) {
    return native.b64encode(typeof data === 'string' ? native.utf8encode(data) : toUint8(data));
  }
  function base64Decode(s) {
    return new Uint8Array(native.b64decode(String(s)));
  }
  function utf8Encode(s) {
    return new Uint8Array(native.utf8encode(String(s)));
  }
  function utf8Decode(bytes) {
    return native.utf8decode(toUint8(bytes));
  }
  // base64 data as the content helpers take it: a string is already base64.
  const dataOf = (data) => (typeof data === 'string' ? data : base64Encode(data));

  // ---- Errors ----

  class ProtocolError extends Error {
    constructor(code, message, data) {
      super(message);
      this.name = 'ProtocolError';
      this.code = code;
      if (data !== undefined) this.data = data;
    }
  }
  class HostError extends Error {
    constructor(fn, code, message) {
      super(fn + ': ' + message);
      this.name = 'HostError';
      this.function = fn;
      this.code = code;
    }
  }
  const invalidParams = (message) => new ProtocolError(CODE_INVALID_PARAMS, message);
  const resourceNotFound = (uri) =>
    new ProtocolError(CODE_RESOURCE_NOT_FOUND, 'resource not found: ' + uri, { uri });

  // messageOf is the text of an exception: "message" for an Error,
  // "TypeError: message" for the other error classes.
  function messageOf(e) {
    if (e instanceof Error) {
      const name = String(e.name || 'Error');
      const message = String(e.message === undefined ? '' : e.message);
      if (name === 'Error' || e instanceof ProtocolError || e instanceof HostError) return message || name;
      return message ? name + ': ' + message : name;
    }
    if (typeof e === 'string') return e;
    try {
      const s = JSON.stringify(e);
      if (s !== undefined) return s;
    } catch (_) {
      // fall through
    }
    return String(e);
  }

  // errorText is the ABI error of an exception thrown by a handler.
  function errorText(e) {
    if (e instanceof ProtocolError) {
      const err = { code: e.code, message: String(e.message) };
      if (e.data !== undefined) err.data = e.data;
      try {
        return JSON.stringify(err);
      } catch (_) {
        return JSON.stringify({ code: e.code, message: String(e.message) });
      }
    }
    logStack(e);
    return JSON.stringify({ code: CODE_INTERNAL_ERROR, message: messageOf(e) });
  }

  function logStack(e) {
    if (e instanceof Error && e.stack) native.log(0, String(e) + '\n' + e.stack);
  }

  // ---- Content and results ----

  const RESULT = Symbol('mcphost.toolResult');
  const brand = (r) => {
    defineHidden(r, RESULT, true);
    return r;
  };

  const text = (s) => ({ type: 'text', text: String(s) });
  const image = (data, mimeType) => ({ type: 'image', data: dataOf(data), mimeType });
  const audio = (data, mimeType) => ({ type: 'audio', data: dataOf(data), mimeType });
  function resourceLink(uri, name, mimeType) {
    const c = { type: 'resource_link', uri, name: name === undefined ? uri : name };
    if (mimeType) c.mimeType = mimeType;
    return c;
  }
  function embeddedText(uri, mimeType, t) {
    const r = { uri, text: String(t) };
    if (mimeType) r.mimeType = mimeType;
    return { type: 'resource', resource: r };
  }
  function embeddedBlob(uri, mimeType, data) {
    const r = { uri, blob: dataOf(data) };
    if (mimeType) r.mimeType = mimeType;
    return { type: 'resource', resource: r };
  }
  const result = (...content) => brand({ content: content.flat() });
  const errorResult = (message) => brand({ content: [text(message)], isError: true });
  function structuredResult(value) {
    let json;
    try {
      json = JSON.stringify(value);
    } catch (e) {
      return errorResult('structured result: ' + messageOf(e));
    }
    if (json === undefined) json = 'null';
    const structured = isObject(value) && !Array.isArray(value) && json[0] === '{' ? value : { result: value };
    const r = { content: [text(structured === value ? json : JSON.stringify(structured))], structuredContent: structured };
    return brand(r);
  }
  function textResource(uri, mimeType, t) {
    const c = { uri, text: String(t) };
    if (mimeType) c.mimeType = mimeType;
    return { contents: [c] };
  }
  function blobResource(uri, mimeType, data) {
    const c = { uri, blob: dataOf(data) };
    if (mimeType) c.mimeType = mimeType;
    return { contents: [c] };
  }
  const promptMessage = (role, content) => ({ role, content: typeof content === 'string' ? text(content) : content });
  const userMessage = (content) => promptMessage('user', content);
  const assistantMessage = (content) => promptMessage('assistant', content);
  const messages = (...msgs) => ({ messages: msgs.flat().map((m) => (typeof m === 'string' ? userMessage(m) : m)) });

  const isContent = (v) => isObject(v) && typeof v.type === 'string' && CONTENT_TYPES.includes(v.type);
  const isContentList = (v) => Array.isArray(v) && v.length > 0 && v.every(isContent);
  const isToolResult = (v) =>
    isObject(v) && (v[RESULT] === true || (Array.isArray(v.content) && v.content.every(
      (c) => isObject(c) && typeof c.type === 'string')));

  // toolResult turns what a tool handler returned into a CallToolResult.
  function toolResult(v, def) {
    if (v === undefined || v === null) return { content: [] };
    if (typeof v === 'string') return { content: [text(v)] };
    if (isToolResult(v)) {
      if (!Array.isArray(v.content)) v.content = [];
      return v;
    }
    if (isContent(v)) return { content: [v] };
    if (isContentList(v)) return { content: v };
    if (def.outputSchema === undefined && !isObject(v)) {
      // A number or boolean without an output schema: as text.
      return { content: [text(String(v))] };
    }
    return structuredResult(v);
  }

  // ---- Registry ----

  const tools = new Map();
  const prompts = new Map();
  const resources = new Map();
  const templates = [];
  const listers = [];
  const completions = new Map();
  const completionKey = (kind, ref, arg) => kind + '\u0000' + ref + '\u0000' + arg;

  const OBJECT_SCHEMA = { type: 'object' };

  function needFunction(fn, what) {
    if (typeof fn !== 'function') throw new TypeError(what + ': the handler must be a function');
  }
  function needName(name, what) {
    if (typeof name !== 'string' || name === '') throw new TypeError(what + ': the name must be a non-empty string');
  }

  // Fields of a tool or prompt definition passed through to the listing.
  function copyCommon(from, to) {
    if (from.title !== undefined) to.title = from.title;
    if (from.icons !== undefined) to.icons = from.icons;
    const meta = from._meta !== undefined ? from._meta : from.meta;
    if (meta !== undefined) to._meta = meta;
  }

  function tool(name, spec, handler) {
    needName(name, 'mcphost.tool');
    if (typeof spec === 'function' && handler === undefined) {
      handler = spec;
      spec = {};
    }
    if (typeof spec === 'string') spec = { description: spec };
    if (!isObject(spec)) throw new TypeError('mcphost.tool ' + name + ': the definition must be an object');
    needFunction(handler, 'mcphost.tool ' + name);
    const t = { name };
    copyCommon(spec, t);
    if (spec.description !== undefined) t.description = String(spec.description);
    t.inputSchema = spec.inputSchema === undefined ? OBJECT_SCHEMA : spec.inputSchema;
    if (spec.outputSchema !== undefined) t.outputSchema = spec.outputSchema;
    if (spec.annotations !== undefined) t.annotations = spec.annotations;
    if (spec.execution !== undefined) t.execution = spec.execution;
    else if (spec.taskSupport !== undefined) t.execution = { taskSupport: String(spec.taskSupport) };
    tools.set(name, { tool: t, handler, outputSchema: spec.outputSchema });
  }

  function prompt(name, spec, handler) {
    needName(name, 'mcphost.prompt');
    if (typeof spec === 'function' && handler === undefined) {
      handler = spec;
      spec = {};
    }
    if (typeof spec === 'string') spec = { description: spec };
    if (!isObject(spec)) throw new TypeError('mcphost.prompt ' + name + ': the definition must be an object');
    needFunction(handler, 'mcphost.prompt ' + name);
    const p = { name };
    copyCommon(spec, p);
    if (spec.description !== undefined) p.description = String(spec.description);
    const args = spec.arguments || [];
    if (!Array.isArray(args)) throw new TypeError('mcphost.prompt ' + name + ': arguments must be an array');
    p.arguments = args.map((a) => (typeof a === 'string' ? { name: a } : Object.assign({}, a)));
    prompts.set(name, { prompt: p, handler });
  }

  function resource(res, handler) {
    if (!isObject(res) || typeof res.uri !== 'string' || res.uri === '') {
      throw new TypeError('mcphost.resource: the resource must have a uri');
    }
    needFunction(handler, 'mcphost.resource ' + res.uri);
    const r = Object.assign({}, res);
    if (r.name === undefined) r.name = r.uri;
    resources.set(r.uri, { resource: r, handler });
  }

  function resourceTemplate(tmpl, handler) {
    if (!isObject(tmpl) || typeof tmpl.uriTemplate !== 'string' || tmpl.uriTemplate === '') {
      throw new TypeError('mcphost.resourceTemplate: the template must have a uriTemplate');
    }
    needFunction(handler, 'mcphost.resourceTemplate ' + tmpl.uriTemplate);
    const t = Object.assign({}, tmpl);
    if (t.name === undefined) t.name = t.uriTemplate;
    const parsed = parseTemplate(t.uriTemplate);
    const i = templates.findIndex((x) => x.template.uriTemplate === t.uriTemplate);
    const entry = { template: t, handler, parsed };
    if (i >= 0) templates[i] = entry;
    else templates.push(entry);
  }

  function resourceLister(fn) {
    needFunction(fn, 'mcphost.resourceLister');
    listers.push(fn);
  }

  function completer(values) {
    if (typeof values === 'function') return values;
    if (Array.isArray(values)) return completeFrom(...values);
    throw new TypeError('a completer must be a function or an array of values');
  }
  function completePromptArg(promptName, arg, fn) {
    completions.set(completionKey('prompt', promptName, arg), completer(fn));
  }
  function completeTemplateVar(uriTemplate, varName, fn) {
    completions.set(completionKey('resource', uriTemplate, varName), completer(fn));
  }
  function filterPrefix(values, prefix) {
    const p = String(prefix || '').toLowerCase();
    return Array.from(values, String).filter((v) => v.toLowerCase().startsWith(p));
  }
  function completeFrom(...values) {
    const all = values.flat().map(String);
    return (value) => filterPrefix(all, value);
  }

  // ---- RFC 6570 URI templates (matching only; the Go PDK's rules) ----

  function parseTemplate(s) {
    const raw = s;
    const parts = [];
    while (s.length > 0) {
      const open = s.indexOf('{');
      if (open < 0) {
        if (s.includes('}')) throw new TypeError('uri template ' + JSON.stringify(raw) + ': unbalanced }');
        parts.push({ literal: s });
        break;
      }
      if (open > 0) {
        const lit = s.slice(0, open);
        if (lit.includes('}')) throw new TypeError('uri template ' + JSON.stringify(raw) + ': unbalanced }');
        parts.push({ literal: lit });
      }
      const end = s.indexOf('}', open);
      if (end < 0) throw new TypeError('uri template ' + JSON.stringify(raw) + ': unclosed {');
      let expr = s.slice(open + 1, end);
      s = s.slice(end + 1);
      let op = ' ';
      if (expr !== '' && '+#./;?&'.includes(expr[0])) {
        op = expr[0];
        expr = expr.slice(1);
      }
      if (expr === '') throw new TypeError('uri template ' + JSON.stringify(raw) + ': empty expression');
      const vars = expr.split(',').map((spec) => {
        const v = { name: spec, explode: false, prefix: 0 };
        if (spec.endsWith('*')) {
          v.name = spec.slice(0, -1);
          v.explode = true;
        } else if (spec.includes(':')) {
          const [name, n] = spec.split(':');
          const l = Number(n);
          if (!Number.isInteger(l) || l <= 0 || l >= 10000) {
            throw new TypeError('uri template ' + JSON.stringify(raw) + ': bad prefix in ' + JSON.stringify(spec));
          }
          v.name = name;
          v.prefix = l;
        }
        if (v.name === '' || /[{}/?#&=+ ]/.test(v.name)) {
          throw new TypeError('uri template ' + JSON.stringify(raw) + ': bad variable ' + JSON.stringify(spec));
        }
        return v;
      });
      parts.push({ op, vars });
    }
    return parts;
  }

  function percentDecode(s) {
    if (!s.includes('%')) return s;
    try {
      return decodeURIComponent(s);
    } catch (_) {
      return s;
    }
  }

  function stopsExpression(op, c) {
    switch (op) {
      case '+':
      case '#':
        return false;
      case '?':
      case '&':
        return c === '#';
      case '/':
        return c === '?' || c === '#';
      default: // ' ', '.', ';'
        return c === '/' || c === '?' || c === '#';
    }
  }

  function assignList(p, chunk, sep, vars) {
    let rest = chunk;
    for (let i = 0; i < p.vars.length; i++) {
      const v = p.vars[i];
      const last = i === p.vars.length - 1;
      let value;
      if (last) {
        value = rest;
      } else {
        const j = rest.indexOf(sep);
        if (j < 0) {
          value = rest;
          rest = '';
        } else {
          value = rest.slice(0, j);
          rest = rest.slice(j + 1);
        }
      }
      if (v.prefix > 0 && Array.from(percentDecode(value)).length > v.prefix) return false;
      if (value !== '' || last) vars[v.name] = percentDecode(value);
      if (rest === '' && !last) break;
    }
    return true;
  }

  function matchExpression(p, chunk, vars) {
    switch (p.op) {
      case ' ':
      case '+':
        if (chunk === '') return false;
        return assignList(p, chunk, ',', vars);
      case '#':
      case '/':
      case '.':
        if (chunk === '') return true;
        if (chunk[0] !== p.op) return false;
        return assignList(p, chunk.slice(1), p.op === '#' ? ',' : p.op, vars);
      default: {
        // '?', '&', ';'
        if (chunk === '') return true;
        if (chunk[0] !== p.op) return false;
        const sep = p.op === ';' ? ';' : '&';
        for (const pair of chunk.slice(1).split(sep)) {
          const eq = pair.indexOf('=');
          const name = eq < 0 ? pair : pair.slice(0, eq);
          let value = eq < 0 ? '' : pair.slice(eq + 1);
          let known = false;
          for (const v of p.vars) {
            if (v.name === name) {
              if (v.explode && Object.prototype.hasOwnProperty.call(vars, name)) value = vars[name] + ',' + value;
              vars[name] = percentDecode(value);
              known = true;
            }
          }
          if (!known) return false;
        }
        return true;
      }
    }
  }

  function matchParts(parts, i, s, vars) {
    if (i === parts.length) return s === '';
    const p = parts[i];
    if (p.literal !== undefined) {
      return s.startsWith(p.literal) && matchParts(parts, i + 1, s.slice(p.literal.length), vars);
    }
    let limit = s.length;
    for (let k = 0; k < s.length; k++) {
      if (stopsExpression(p.op, s[k])) {
        limit = k;
        break;
      }
    }
    for (let end = 0; end <= limit; end++) {
      const got = {};
      if (!matchExpression(p, s.slice(0, end), got)) continue;
      const rest = {};
      if (matchParts(parts, i + 1, s.slice(end), rest)) {
        Object.assign(vars, got, rest);
        return true;
      }
    }
    return false;
  }

  function matchTemplate(parsed, uri) {
    const vars = {};
    return matchParts(parsed, 0, uri, vars) ? vars : null;
  }

  // ---- Host functions ----

  // callHost calls a host function with a JSON input and decodes its JSON
  // output, throwing a HostError for {"error": ...}.
  function callHost(fn, params) {
    const input = params === undefined ? undefined : JSON.stringify(params);
    const out = native.host(fn, input);
    if (out === undefined) return undefined;
    if (out === '') throw new HostError(fn, CODE_INTERNAL_ERROR, 'no result');
    let v;
    try {
      v = JSON.parse(out);
    } catch (e) {
      throw new HostError(fn, CODE_INTERNAL_ERROR, 'invalid result: ' + e.message);
    }
    if (isObject(v) && isObject(v.error)) {
      throw new HostError(fn, v.error.code === undefined ? CODE_INTERNAL_ERROR : v.error.code, String(v.error.message));
    }
    return v;
  }

  const notifyToolListChanged = () => void native.host('notify_tool_list_changed');
  const notifyPromptListChanged = () => void native.host('notify_prompt_list_changed');
  const notifyResourceListChanged = () => void native.host('notify_resource_list_changed');
  const notifyResourceUpdated = (uri) => void native.host('notify_resource_updated', JSON.stringify({ uri: String(uri) }));
  const notifyElicitationComplete = (elicitationId) =>
    void native.host('notify_elicitation_complete', JSON.stringify({ elicitationId: String(elicitationId) }));

  function textOf(content) {
    const list = Array.isArray(content) ? content : content ? [content] : [];
    return list.filter((c) => isObject(c) && c.type === 'text').map((c) => c.text).join('');
  }

  class Context {
    constructor(c) {
      c = isObject(c) ? c : {};
      this.id = c.id;
      this.meta = isObject(c._meta) ? c._meta : {};
      this.protocolVersion = typeof c.protocolVersion === 'string' ? c.protocolVersion : '';
      this.clientCapabilities = isObject(c.clientCapabilities) ? c.clientCapabilities : {};
      this.subject = typeof c.subject === 'string' ? c.subject : '';
      this.scopes = Array.isArray(c.scopes) ? c.scopes.map(String) : [];
    }
    // clientCan reports whether the client declared the capability at the
    // path, such as clientCan('elicitation') or
    // clientCan('extensions', 'io.modelcontextprotocol/ui').
    clientCan(...path) {
      let v = this.clientCapabilities;
      for (const key of path) {
        if (!isObject(v) || v[key] === undefined || v[key] === null) return false;
        v = v[key];
      }
      return path.length > 0;
    }
    // hasScope reports whether the caller's token has the scope.
    hasScope(scope) {
      return this.scopes.includes(String(scope));
    }
    // requestInput asks the client several questions at once, by key
    // ({key: {method, params}}), and returns the answers by key.
    requestInput(questions) {
      const r = callHost('request_input', { inputRequests: questions });
      return isObject(r) && isObject(r.inputResponses) ? r.inputResponses : {};
    }
    get progressToken() {
      return this.meta.progressToken;
    }
    // progress sends notifications/progress when the client asked for it.
    progress(progress, total, message) {
      const token = this.progressToken;
      if (token === undefined || token === null) return;
      const p = { progressToken: token, progress: Number(progress) };
      if (total !== undefined && total !== null && Number(total) > 0) p.total = Number(total);
      if (message !== undefined && message !== null && message !== '') p.message = String(message);
      native.host('notify_progress', JSON.stringify(p));
    }
    // log sends notifications/message to the client.
    log(level, message, data) {
      level = level === undefined || level === null || level === '' ? 'info' : String(level);
      let payload = message === undefined ? '' : message;
      if (data !== undefined) payload = { message, data };
      let json;
      try {
        json = JSON.stringify({ level, data: payload });
      } catch (_) {
        json = JSON.stringify({ level, data: String(message) });
      }
      native.host('notify_logging_message', json);
    }
    createMessage(params) {
      const r = callHost('create_message', params);
      if (isObject(r)) defineHidden(r, 'text', textOf(r.content));
      return r;
    }
    elicit(params, requestedSchema) {
      if (typeof params === 'string') {
        params = { message: params };
        if (requestedSchema !== undefined) params.requestedSchema = requestedSchema;
      }
      return callHost('create_elicitation', params);
    }
    listRoots() {
      const r = callHost('list_roots');
      return isObject(r) && Array.isArray(r.roots) ? r.roots : [];
    }
  }

  // ---- Configuration and HTTP ----

  function config(key) {
    return native.config(String(key));
  }

  function fetch(req, init) {
    if (typeof req === 'string') req = Object.assign({ url: req }, init || {});
    if (!isObject(req) || !req.url) throw new TypeError('mcphost.fetch: a url is needed');
    const headers = {};
    if (isObject(req.headers)) for (const k of Object.keys(req.headers)) headers[k] = String(req.headers[k]);
    const meta = { method: String(req.method || 'GET').toUpperCase(), url: String(req.url), headers };
    let body;
    if (req.body !== undefined && req.body !== null) {
      body = typeof req.body === 'string' ? native.utf8encode(req.body) : toUint8(req.body);
    }
    const [status, headersJSON, buf] = native.http(JSON.stringify(meta), body);
    const bytes = new Uint8Array(buf);
    // No HTTP response has status 0: mcphost's answer to a request that
    // failed (refused by a grant, or by the network), with why as the body.
    if (!status) throw new Error(bytes.length ? native.utf8decode(bytes) : 'mcphost.fetch: no response from ' + meta.url);
    let respHeaders = {};
    if (headersJSON) {
      try {
        respHeaders = JSON.parse(headersJSON) || {};
      } catch (_) {
        respHeaders = {};
      }
    }
    return {
      status,
      ok: status >= 200 && status < 300,
      headers: respHeaders,
      body: bytes,
      text: () => native.utf8decode(bytes),
      json: () => JSON.parse(native.utf8decode(bytes)),
    };
  }

  // ---- Globals: console, TextEncoder/TextDecoder, base64 ----

  function format(args) {
    return args
      .map((a) => {
        if (typeof a === 'string') return a;
        if (a instanceof Error) return a.stack ? String(a) + '\n' + a.stack : String(a);
        try {
          const s = JSON.stringify(a);
          return s === undefined ? String(a) : s;
        } catch (_) {
          return String(a);
        }
      })
      .join(' ');
  }
  const consoleObj = {
    debug: (...a) => native.log(0, format(a)),
    log: (...a) => native.log(1, format(a)),
    info: (...a) => native.log(1, format(a)),
    warn: (...a) => native.log(2, format(a)),
    error: (...a) => native.log(3, format(a)),
  };

  class TextEncoder {
    get encoding() {
      return 'utf-8';
    }
    encode(s) {
      return utf8Encode(s === undefined ? '' : s);
    }
  }
  class TextDecoder {
    constructor(label) {
      if (label !== undefined && !/^utf-?8$/i.test(String(label))) {
        throw new RangeError('TextDecoder: only utf-8 is supported');
      }
    }
    get encoding() {
      return 'utf-8';
    }
    decode(bytes) {
      return bytes === undefined ? '' : utf8Decode(bytes);
    }
  }
  function btoa(s) {
    s = String(s);
    const b = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c > 255) throw new RangeError('btoa: character out of range');
      b[i] = c;
    }
    return native.b64encode(b);
  }
  function atob(s) {
    const b = base64Decode(s);
    let out = '';
    for (let i = 0; i < b.length; i += 4096) out += String.fromCharCode.apply(null, b.subarray(i, i + 4096));
    return out;
  }

  const mcphost = {
    tool, prompt, resource, resourceTemplate, resourceLister,
    completePromptArg, completeTemplateVar, filterPrefix, completeFrom,
    removeTool: (name) => void tools.delete(name),
    removePrompt: (name) => void prompts.delete(name),
    removeResource: (uri) => void resources.delete(uri),
    text, image, audio, resourceLink, embeddedText, embeddedBlob,
    result, errorResult, structuredResult, textResource, blobResource,
    userMessage, assistantMessage, messages,
    ProtocolError, HostError, invalidParams, resourceNotFound,
    notifyToolListChanged, notifyPromptListChanged, notifyResourceListChanged, notifyResourceUpdated,
    notifyElicitationComplete,
    config, fetch, base64Encode, base64Decode, utf8Encode, utf8Decode, textOf,
    MAX_COMPLETION_VALUES,
    CODE_INVALID_PARAMS, CODE_INTERNAL_ERROR, CODE_RESOURCE_NOT_FOUND,
    LEVELS,
  };
  for (const l of LEVELS) mcphost['LEVEL_' + l.toUpperCase()] = l;

  const g = globalThis;
  const defineGlobal = (k, v) => Object.defineProperty(g, k, { value: v, writable: true, configurable: true, enumerable: false });
  defineGlobal('mcphost', Object.freeze(mcphost));
  defineGlobal('console', consoleObj);
  defineGlobal('TextEncoder', TextEncoder);
  defineGlobal('TextDecoder', TextDecoder);
  defineGlobal('btoa', btoa);
  defineGlobal('atob', atob);
  defineGlobal('queueMicrotask', (fn) => void Promise.resolve().then(fn));

  // ---- Exports ----

  const requestOf = (input) => (isObject(input.request) ? input.request : {});
  function contextOf(input, request) {
    const c = isObject(input.context) ? Object.assign({}, input.context) : {};
    if (!isObject(c._meta) && isObject(request) && isObject(request._meta)) c._meta = request._meta;
    return new Context(c);
  }

  const handlers = {
    list_tools() {
      return { tools: Array.from(tools.values(), (t) => t.tool) };
    },

    call_tool(input) {
      const req = requestOf(input);
      const def = tools.get(req.name);
      if (!def) throw invalidParams('unknown tool: ' + JSON.stringify(req.name));
      const args = isObject(req.arguments) ? req.arguments : {};
      const ctx = contextOf(input, req);
      return settle(
        () => def.handler(args, ctx),
        (v) => toolResult(v, def),
        (e) => {
          if (e instanceof ProtocolError) throw e;
          logStack(e);
          return { content: [text(messageOf(e))], isError: true };
        },
      );
    },

    list_prompts() {
      return { prompts: Array.from(prompts.values(), (p) => p.prompt) };
    },

    get_prompt(input) {
      const req = requestOf(input);
      const def = prompts.get(req.name);
      if (!def) throw invalidParams('unknown prompt: ' + JSON.stringify(req.name));
      const args = {};
      if (isObject(req.arguments)) for (const k of Object.keys(req.arguments)) args[k] = String(req.arguments[k]);
      for (const a of def.prompt.arguments) {
        if (a.required && String(args[a.name] || '').trim() === '') {
          throw invalidParams('prompt ' + JSON.stringify(req.name) + ': missing required argument ' + JSON.stringify(a.name));
        }
      }
      const ctx = contextOf(input, req);
      return settle(
        () => def.handler(args, ctx),
        (v) => {
          let r;
          if (v === undefined || v === null) throw new Error('prompt ' + JSON.stringify(req.name) + ' returned no result');
          if (typeof v === 'string') r = { messages: [userMessage(v)] };
          else if (Array.isArray(v)) r = messages(...v);
          else if (isObject(v) && Array.isArray(v.messages)) r = v;
          else if (isObject(v) && typeof v.role === 'string') r = { messages: [v] };
          else throw new Error('prompt ' + JSON.stringify(req.name) + ' returned no messages');
          if (r.description === undefined && def.prompt.description !== undefined) r.description = def.prompt.description;
          return r;
        },
        (e) => {
          throw e;
        },
      );
    },

    list_resources(input) {
      const ctx = contextOf(input, {});
      const list = Array.from(resources.values(), (r) => r.resource);
      const seen = new Set(list.map((r) => r.uri));
      // Listers run one after the other, each possibly async.
      const step = (i) => {
        if (i === listers.length) return { resources: list };
        return settle(
          () => listers[i](ctx),
          (more) => {
            for (const r of more || []) {
              if (!isObject(r) || typeof r.uri !== 'string' || r.uri === '' || seen.has(r.uri)) continue;
              const c = Object.assign({}, r);
              if (c.name === undefined) c.name = c.uri;
              seen.add(c.uri);
              list.push(c);
            }
            return step(i + 1);
          },
          (e) => {
            throw e;
          },
        );
      };
      return step(0);
    },

    list_resource_templates() {
      return { resourceTemplates: templates.map((t) => t.template) };
    },

    read_resource(input) {
      const req = requestOf(input);
      const uri = req.uri;
      if (typeof uri !== 'string' || uri === '') throw invalidParams('read_resource: missing uri');
      const ctx = contextOf(input, req);
      let run, mimeType;
      const fixed = resources.get(uri);
      if (fixed) {
        run = () => fixed.handler(uri, ctx);
        mimeType = fixed.resource.mimeType;
      } else {
        for (const t of templates) {
          const vars = matchTemplate(t.parsed, uri);
          if (vars) {
            run = () => t.handler(uri, vars, ctx);
            mimeType = t.template.mimeType;
            break;
          }
        }
      }
      if (!run) throw resourceNotFound(uri);
      return settle(
        run,
        (v) => {
          let r;
          if (v === undefined || v === null) throw resourceNotFound(uri);
          if (typeof v === 'string') r = { contents: [{ uri, text: v }] };
          else if (isBytes(v)) r = { contents: [{ uri, blob: base64Encode(v) }] };
          else if (Array.isArray(v)) r = { contents: v };
          else if (isObject(v) && Array.isArray(v.contents)) r = v;
          else if (isObject(v) && (v.text !== undefined || v.blob !== undefined)) r = { contents: [v] };
          else throw new Error('resource ' + uri + ': the handler returned neither text, bytes nor contents');
          for (const c of r.contents) {
            if (!isObject(c)) continue;
            if (!c.uri) c.uri = uri;
            if (!c.mimeType && mimeType) c.mimeType = mimeType;
            if (isBytes(c.blob)) c.blob = base64Encode(c.blob);
          }
          return r;
        },
        (e) => {
          throw e;
        },
      );
    },

    complete(input) {
      const req = requestOf(input);
      const ref = isObject(req.ref) ? req.ref : {};
      const kind = String(ref.type || '').replace(/^ref\//, '');
      const arg = isObject(req.argument) ? req.argument : {};
      let key;
      if (kind === 'prompt') {
        if (!prompts.has(ref.name)) throw invalidParams('unknown prompt: ' + JSON.stringify(ref.name));
        key = completionKey('prompt', ref.name, arg.name);
      } else if (kind === 'resource') {
        key = completionKey('resource', ref.uri, arg.name);
      } else {
        throw invalidParams('unsupported completion reference type ' + JSON.stringify(ref.type));
      }
      const fn = completions.get(key);
      const cap = (values) => {
        const all = values === undefined || values === null ? [] : Array.from(values, String);
        const c = { values: all.slice(0, MAX_COMPLETION_VALUES), total: all.length };
        if (all.length > MAX_COMPLETION_VALUES) c.hasMore = true;
        return { completion: c };
      };
      if (!fn) return cap([]);
      const others = isObject(req.context) && isObject(req.context.arguments) ? req.context.arguments : {};
      const ctx = contextOf(input, req);
      return settle(() => fn(String(arg.value === undefined ? '' : arg.value), others, ctx), cap, (e) => {
        throw e;
      });
    },
  };

  // dispatch serves one export call and reports its outcome with
  // native.done(ok, text): the output JSON, or the ABI error.
  return function dispatch(exportName, inputText) {
    const fail = (e) => native.done(false, errorText(e));
    const succeed = (v) => {
      let out;
      try {
        out = JSON.stringify(v);
      } catch (e) {
        fail(new Error(exportName + ': the result cannot be encoded as JSON: ' + messageOf(e)));
        return;
      }
      native.done(true, out);
    };
    let input;
    try {
      input = inputText.trim() === '' ? {} : JSON.parse(inputText);
    } catch (e) {
      fail(invalidParams('invalid input: ' + e.message));
      return;
    }
    if (!isObject(input)) input = {};
    const h = handlers[exportName];
    if (!h) {
      fail(new Error('unknown export ' + exportName));
      return;
    }
    settle(() => h(input), succeed, fail);
  };
});
