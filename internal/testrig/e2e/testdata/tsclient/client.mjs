// Drives mcphost with the official TypeScript SDK client and prints what it
// saw as one JSON document. Usage: node client.mjs streamable|sse URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";

const [kind, url] = process.argv.slice(2);
const transport = kind === "sse"
  ? new SSEClientTransport(new URL(url))
  : new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: "ts-interop", version: "1.0.0" });
await client.connect(transport);

const tools = [];
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  tools.push(...page.tools.map((t) => t.name));
  cursor = page.nextCursor;
} while (cursor);

const progress = [];
const hash = await client.callTool({ name: "hash", arguments: { text: "abc" } });
const primes = await client.callTool(
  { name: "count_primes", arguments: { limit: 5000000 } },
  undefined,
  { onprogress: (p) => progress.push(p.progress) },
);
const prompt = await client.getPrompt({ name: "code_review", arguments: { code: "x = 1", language: "py" } });
const completion = await client.complete({
  ref: { type: "ref/prompt", name: "code_review" },
  argument: { name: "language", value: "py" },
});
await client.close();

console.log(JSON.stringify({
  protocolVersion: transport.protocolVersion ?? null,
  server: client.getServerVersion(),
  tools,
  hash: hash.structuredContent ?? null,
  primes: primes.structuredContent ?? null,
  progress,
  promptMessages: prompt.messages.length,
  completion: completion.completion.values,
}));
