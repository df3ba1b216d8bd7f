// Type definitions for the mcphost JavaScript plugin API: the global
// `mcphost` object and the globals the engine adds (console, TextEncoder,
// TextDecoder, btoa, atob, queueMicrotask). The engine runs plain
// JavaScript (ES2020, QuickJS); these types are for editors and for checking
// plugins with `tsc --allowJs --checkJs --noEmit` (reference this file with
// `/// <reference path="mcphost.d.ts" />`). See README.md beside this file.

declare namespace mcphost {
  // ---- MCP data (2025-11-25) ----

  type Meta = { [key: string]: unknown };
  type JSONSchema = { type?: string; [keyword: string]: unknown };
  type Role = 'user' | 'assistant';
  type LoggingLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';
  /** Bytes as the helpers take them: a string is already base64. */
  type Bytes = Uint8Array | ArrayBuffer | ArrayBufferView | number[];

  interface Icon {
    src: string;
    mimeType?: string;
    sizes?: string[];
    theme?: 'light' | 'dark';
  }

  interface Annotations {
    audience?: Role[];
    priority?: number;
    lastModified?: string;
  }

  interface ToolAnnotations {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  }

  interface TextContent { type: 'text'; text: string; annotations?: Annotations; _meta?: Meta }
  interface ImageContent { type: 'image'; data: string; mimeType: string; annotations?: Annotations; _meta?: Meta }
  interface AudioContent { type: 'audio'; data: string; mimeType: string; annotations?: Annotations; _meta?: Meta }
  interface ResourceLink {
    type: 'resource_link';
    uri: string;
    name: string;
    title?: string;
    description?: string;
    mimeType?: string;
    size?: number;
    icons?: Icon[];
    annotations?: Annotations;
    _meta?: Meta;
  }
  interface EmbeddedResource { type: 'resource'; resource: ResourceContents; annotations?: Annotations; _meta?: Meta }
  type Content = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource;

  interface ResourceContents {
    uri: string;
    mimeType?: string;
    /** Text contents. */
    text?: string;
    /** Binary contents, base64. */
    blob?: string;
    _meta?: Meta;
  }

  interface CallToolResult {
    content: Content[];
    structuredContent?: { [key: string]: unknown };
    isError?: boolean;
    _meta?: Meta;
  }

  interface PromptMessage { role: Role; content: Content }
  interface GetPromptResult { description?: string; messages: PromptMessage[]; _meta?: Meta }
  interface ReadResourceResult { contents: ResourceContents[]; _meta?: Meta }

  interface Resource {
    uri: string;
    /** Defaults to the URI. */
    name?: string;
    title?: string;
    description?: string;
    mimeType?: string;
    size?: number;
    icons?: Icon[];
    annotations?: Annotations;
    _meta?: Meta;
  }

  interface ResourceTemplate {
    /** An RFC 6570 URI template, e.g. "weather://{city}/current". */
    uriTemplate: string;
    /** Defaults to the template. */
    name?: string;
    title?: string;
    description?: string;
    mimeType?: string;
    icons?: Icon[];
    annotations?: Annotations;
    _meta?: Meta;
  }

  interface PromptArgument {
    name: string;
    title?: string;
    description?: string;
    /** A missing or blank required argument fails get_prompt with -32602. */
    required?: boolean;
  }

  interface Root { uri: string; name?: string; _meta?: Meta }

  // ---- Registration ----

  interface ToolDefinition {
    description?: string;
    title?: string;
    /** A JSON Schema with "type": "object". Default: {"type": "object"}. mcphost validates arguments against it before the handler runs. */
    inputSchema?: JSONSchema;
    /** A JSON Schema with "type": "object" for structuredContent. */
    outputSchema?: JSONSchema;
    annotations?: ToolAnnotations;
    /** MCP tasks (2025-11-25); same as execution: {taskSupport}. */
    taskSupport?: 'forbidden' | 'optional' | 'required';
    execution?: { taskSupport?: 'forbidden' | 'optional' | 'required' };
    icons?: Icon[];
    _meta?: Meta;
  }

  /**
   * What a tool handler may return (or resolve to):
   * - a string: one text block;
   * - a content block or an array of content blocks;
   * - a CallToolResult (an object whose `content` is an array of blocks,
   *   or one made by result, errorResult or structuredResult): as is;
   * - undefined or null: no content;
   * - any other object: structured output (structuredContent, and its JSON
   *   as text); arrays are wrapped as {"result": [...]};
   * - a number or boolean: as text, or structured ({"result": v}) when the
   *   tool declares an outputSchema.
   */
  type ToolReturn = string | Content | Content[] | CallToolResult | { [key: string]: unknown } | unknown[] | number | boolean | null | undefined | void;

  type ToolHandler<A = any> = (args: A, ctx: Context) => ToolReturn | Promise<ToolReturn>;

  interface PromptDefinition {
    description?: string;
    title?: string;
    /** Arguments; a string is {name}. */
    arguments?: (PromptArgument | string)[];
    icons?: Icon[];
    _meta?: Meta;
  }

  /**
   * What a prompt handler may return: a string (one user message), an array
   * of messages (strings are user messages), one PromptMessage, or a
   * GetPromptResult. The description defaults to the prompt's.
   */
  type PromptReturn = string | (PromptMessage | string)[] | PromptMessage | GetPromptResult;
  type PromptHandler = (args: { [name: string]: string }, ctx: Context) => PromptReturn | Promise<PromptReturn>;

  /**
   * What a resource handler may return: a string (text), bytes (a blob), a
   * ResourceContents or an array of them, or a ReadResourceResult. Missing
   * URIs and MIME types are filled in from the request and the resource.
   * undefined or null: the resource is not found (-32002).
   */
  type ResourceReturn = string | Bytes | ResourceContents | ResourceContents[] | ReadResourceResult | null | undefined;
  type ResourceHandler = (uri: string, ctx: Context) => ResourceReturn | Promise<ResourceReturn>;
  type TemplateHandler = (uri: string, vars: { [name: string]: string }, ctx: Context) => ResourceReturn | Promise<ResourceReturn>;
  type ResourceLister = (ctx: Context) => Resource[] | Promise<Resource[]>;

  /** value: what the user typed so far; args: the other arguments already filled in. */
  type Completer = (value: string, args: { [name: string]: string }, ctx: Context) => Iterable<string> | Promise<Iterable<string>>;

  /** Registers (or replaces) a tool. */
  function tool<A = any>(name: string, definition: ToolDefinition | string, handler: ToolHandler<A>): void;
  function removeTool(name: string): void;
  /** Registers (or replaces) a prompt. */
  function prompt(name: string, definition: PromptDefinition | string, handler: PromptHandler): void;
  function removePrompt(name: string): void;
  /** Registers (or replaces) a fixed resource. */
  function resource(resource: Resource, handler: ResourceHandler): void;
  function removeResource(uri: string): void;
  /** Registers a family of resources; read_resource tries fixed resources first, then templates in order. */
  function resourceTemplate(template: ResourceTemplate, handler: TemplateHandler): void;
  /** Adds resources known only at run time to list_resources (read them through a template). */
  function resourceLister(lister: ResourceLister): void;
  /** Completes an argument of a prompt: a function, or the values to filter by prefix. */
  function completePromptArg(prompt: string, arg: string, completer: Completer | string[]): void;
  /** Completes a variable of a resource template. */
  function completeTemplateVar(uriTemplate: string, varName: string, completer: Completer | string[]): void;
  /** The values starting with prefix, ignoring case. */
  function filterPrefix(values: Iterable<string>, prefix: string): string[];
  /** A completer offering values. */
  function completeFrom(...values: (string | string[])[]): Completer;
  /** At most this many completion values are sent (with total and hasMore). */
  const MAX_COMPLETION_VALUES: 100;

  // ---- Content and results ----

  function text(text: string): TextContent;
  /** data: bytes, or a base64 string. */
  function image(data: Bytes | string, mimeType: string): ImageContent;
  function audio(data: Bytes | string, mimeType: string): AudioContent;
  function resourceLink(uri: string, name?: string, mimeType?: string): ResourceLink;
  function embeddedText(uri: string, mimeType: string | undefined, text: string): EmbeddedResource;
  function embeddedBlob(uri: string, mimeType: string | undefined, data: Bytes | string): EmbeddedResource;
  function result(...content: (Content | Content[])[]): CallToolResult;
  /** A tool execution error (isError) the model can read; throwing an Error does the same. */
  function errorResult(message: string): CallToolResult;
  /** structuredContent = value (wrapped as {"result": value} unless an object), content = its JSON. */
  function structuredResult(value: unknown): CallToolResult;
  function textResource(uri: string, mimeType: string | undefined, text: string): ReadResourceResult;
  function blobResource(uri: string, mimeType: string | undefined, data: Bytes | string): ReadResourceResult;
  function userMessage(content: string | Content): PromptMessage;
  function assistantMessage(content: string | Content): PromptMessage;
  function messages(...messages: (PromptMessage | string | (PromptMessage | string)[])[]): GetPromptResult;

  // ---- Errors ----

  /**
   * Fails the request itself with a JSON-RPC error, from any handler. mcphost
   * passes codes -32602 (invalid params), -32002 (resource not found) and
   * -32603 (internal error). Any other exception is, in a tool, an isError
   * result with its message, and elsewhere an internal error.
   */
  class ProtocolError extends Error {
    constructor(code: number, message: string, data?: unknown);
    code: number;
    data?: unknown;
  }
  /** A host function failed (not granted, client without the capability, ...). */
  class HostError extends Error {
    function: string;
    code: number;
  }
  function invalidParams(message: string): ProtocolError;
  function resourceNotFound(uri: string): ProtocolError;
  const CODE_INVALID_PARAMS: -32602;
  const CODE_INTERNAL_ERROR: -32603;
  const CODE_RESOURCE_NOT_FOUND: -32002;

  // ---- The request context and host functions ----

  interface SamplingMessage { role: Role; content: Content | Content[] }
  interface CreateMessageParams {
    messages: SamplingMessage[];
    maxTokens: number;
    systemPrompt?: string;
    modelPreferences?: {
      hints?: { name?: string }[];
      costPriority?: number;
      speedPriority?: number;
      intelligencePriority?: number;
    };
    includeContext?: 'none' | 'thisServer' | 'allServers';
    temperature?: number;
    stopSequences?: string[];
    metadata?: unknown;
    tools?: unknown[];
    toolChoice?: unknown;
  }
  interface CreateMessageResult {
    role: Role;
    content: Content | Content[];
    model: string;
    stopReason?: string;
    /** The text blocks of content, joined. */
    readonly text: string;
  }
  interface ElicitParams {
    message: string;
    /** A flat object schema: string, number, integer, boolean and enum properties. */
    requestedSchema?: JSONSchema;
    mode?: 'form' | 'url';
    url?: string;
    elicitationId?: string;
  }
  interface ElicitResult {
    action: 'accept' | 'decline' | 'cancel';
    content?: { [key: string]: unknown };
  }

  /**
   * The request a handler serves. Its methods call mcphost host functions,
   * synchronously; each must be granted to the plugin (host_functions in
   * mcphost.toml) and should be declared in the manifest comment. A denied
   * function with a result throws a HostError; one without does nothing.
   */
  interface Context {
    /** The client's JSON-RPC request id. */
    readonly id: string | number | undefined;
    /** The request's _meta. */
    readonly meta: Meta;
    readonly progressToken: string | number | undefined;
    /** The MCP version the request is served at ("" when the host does not say). */
    readonly protocolVersion: string;
    /** What the client declared it can do (a ClientCapabilities object). */
    readonly clientCapabilities: { [key: string]: unknown };
    /** The caller's subject and token scopes when the host authenticates requests; "" and [] otherwise. */
    readonly subject: string;
    readonly scopes: string[];
    /** Whether the client declared the capability at the path, e.g. clientCan('extensions', 'io.modelcontextprotocol/ui'). */
    clientCan(...path: string[]): boolean;
    /** Whether the caller's token has the scope. */
    hasScope(scope: string): boolean;
    /** Several questions at once, by key (request_input); returns the answers by key. In a 2026-07-28 request the host may replay the call with the answers: ask before acting. */
    requestInput(questions: { [key: string]: { method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list'; params?: unknown } }): { [key: string]: unknown };
    /** notifications/progress (notify_progress); nothing unless the client sent a progressToken. Keep progress increasing; total <= 0 is unknown. */
    progress(progress: number, total?: number, message?: string): void;
    /** notifications/message (notify_logging_message): data = message, or {message, data} when data is given. */
    log(level: LoggingLevel | undefined, message: string, data?: unknown): void;
    /** sampling/createMessage (create_message). */
    createMessage(params: CreateMessageParams): CreateMessageResult;
    /** elicitation/create (create_elicitation). */
    elicit(params: ElicitParams): ElicitResult;
    elicit(message: string, requestedSchema?: JSONSchema): ElicitResult;
    /** roots/list (list_roots). */
    listRoots(): Root[];
  }

  /** notify_tool_list_changed: after adding or removing tools during a call. */
  function notifyToolListChanged(): void;
  function notifyPromptListChanged(): void;
  function notifyResourceListChanged(): void;
  /** notify_resource_updated: to the sessions subscribed to uri. */
  function notifyResourceUpdated(uri: string): void;
  /** notify_elicitation_complete: a URL-mode elicitation finished. */
  function notifyElicitationComplete(elicitationId: string): void;

  const LEVELS: LoggingLevel[];
  const LEVEL_DEBUG: 'debug';
  const LEVEL_INFO: 'info';
  const LEVEL_NOTICE: 'notice';
  const LEVEL_WARNING: 'warning';
  const LEVEL_ERROR: 'error';
  const LEVEL_CRITICAL: 'critical';
  const LEVEL_ALERT: 'alert';
  const LEVEL_EMERGENCY: 'emergency';

  // ---- Configuration and HTTP ----

  /** The operator's config value for key (config = {...} in mcphost.toml), or undefined. Declare keys in needs.config. */
  function config(key: string): string | undefined;

  interface FetchRequest {
    url: string;
    /** Default GET. */
    method?: string;
    headers?: { [name: string]: string };
    body?: string | Bytes;
  }
  interface FetchResponse {
    status: number;
    ok: boolean;
    /** Lower-case names; empty when the host does not pass them. */
    headers: { [name: string]: string };
    body: Uint8Array;
    text(): string;
    json(): any;
  }
  /**
   * Sends an HTTP request through the host (Extism http_request),
   * synchronously. Only hosts the operator allowed (allowed_hosts; declare
   * them in needs.hosts) are reachable. A request the host refuses or that
   * fails throws an Error whose message says why: for a refusal, the grant
   * in [plugins.NAME] that would allow it (allowed_hosts,
   * allow_private_network); otherwise could not connect, TLS error, timed
   * out, or a response body over 16 MiB. The plugin may catch it.
   */
  function fetch(request: FetchRequest): FetchResponse;
  function fetch(url: string, init?: Omit<FetchRequest, 'url'>): FetchResponse;

  // ---- Bytes ----

  /** Standard base64 (with padding) of bytes, or of a string's UTF-8. */
  function base64Encode(data: Bytes | string): string;
  /** Accepts the standard and URL-safe alphabets, padded or not. */
  function base64Decode(base64: string): Uint8Array;
  function utf8Encode(text: string): Uint8Array;
  function utf8Decode(bytes: Bytes): string;
  /** The text blocks of content, joined. */
  function textOf(content: Content | Content[] | undefined): string;
}

/** Logs to the mcphost log (not to the client: use ctx.log for that). */
declare const console: {
  debug(...args: unknown[]): void;
  log(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
};

/** UTF-8 only. */
declare class TextEncoder {
  readonly encoding: 'utf-8';
  encode(input?: string): Uint8Array;
}
/** UTF-8 only. */
declare class TextDecoder {
  constructor(label?: 'utf-8' | 'utf8');
  readonly encoding: 'utf-8';
  decode(input?: Uint8Array | ArrayBuffer | ArrayBufferView): string;
}
declare function btoa(data: string): string;
declare function atob(data: string): string;
declare function queueMicrotask(callback: () => void): void;
