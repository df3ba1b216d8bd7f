// Drives mcphost with the TypeScript SDK v2 client (@modelcontextprotocol/client)
// and prints what it saw as one JSON document.
// Usage: node v2client.mjs auto|pin|legacy http URL
//        node v2client.mjs auto|pin|legacy stdio MCPHOST_BINARY ARGS...
// It lists the tools, calls greet, and calls
// test_input_required_result_multi_round, whose two questions the client
// answers through its elicitation handler: on 2026-07-28 they arrive as
// input_required results that the client fulfils and retries.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [mode, kind, target, ...args] = process.argv.slice(2);
const transport = kind === "stdio"
  ? new StdioClientTransport({ command: target, args, stderr: "ignore" })
  : new StreamableHTTPClientTransport(new URL(target));
const client = new Client(
  { name: "ts-v2-interop", version: "1.0.0" },
  {
    capabilities: { elicitation: { form: {} } },
    versionNegotiation: { mode: mode === "pin" ? { pin: "2026-07-28" } : mode },
  },
);
const asked = [];
client.setRequestHandler("elicitation/create", async (request) => {
  asked.push(request.params.message);
  return { action: "accept", content: { name: "Alice", color: "blue" } };
});
await client.connect(transport);

const tools = [];
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  tools.push(...page.tools.map((t) => t.name));
  cursor = page.nextCursor;
} while (cursor);
const greet = await client.callTool({ name: "greet", arguments: { name: "v2" } });
const rounds = await client.callTool({ name: "test_input_required_result_multi_round", arguments: {} });
console.log(JSON.stringify({
  era: client.getProtocolEra(),
  version: client.getNegotiatedProtocolVersion(),
  tools: tools.length,
  greet: greet.content?.[0]?.text,
  rounds: rounds.content?.[0]?.text,
  asked,
}));
await client.close();
