// Drives mcphost's MCP tasks (2025-11-25) with the TypeScript SDK's
// experimental tasks client and prints what it saw as one JSON document.
// The server runs the hostile test plugin (slow: optional task support) and
// the conformance plugin (test_elicitation: tasks required).
// Usage: node tasks.mjs URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [url] = process.argv.slice(2);
const client = new Client(
  { name: "ts-tasks", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } } },
);
let elicited = null;
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicited = request.params._meta ?? {};
  return { action: "accept", content: { username: "Ada", email: "ada@example.com" } };
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const tasks = client.experimental.tasks;

// callToolStream yields taskCreated, taskStatus... and ends with result or
// error. The task is asked for explicitly: the client caches task support
// from the last page of tools/list only.
async function stream(name, args, onCreated) {
  const types = [];
  let text = null;
  for await (const m of tasks.callToolStream({ name, arguments: args }, undefined, { task: { ttl: 60000 } })) {
    types.push(m.type);
    if (m.type === "taskCreated" && onCreated) await onCreated(m.task.taskId);
    if (m.type === "result") text = m.result.content?.[0]?.text ?? null;
    if (m.type === "error") text = String(m.error);
  }
  return { types, text };
}

const slow = await stream("slow", { millis: 300 });
// input_required: the client calls tasks/result, which carries the
// elicitation, and answers it.
const ask = await stream("test_elicitation", { message: "Who are you?" });
let cancelled = null;
await stream("slow", { millis: 50000 }, async (taskId) => {
  cancelled = (await tasks.cancelTask(taskId)).status;
});
let listed = 0;
let cursor;
do {
  const page = await tasks.listTasks(cursor);
  listed += page.tasks.length;
  cursor = page.nextCursor;
} while (cursor);
await client.close();

console.log(JSON.stringify({
  slow: slow.types,
  slowText: slow.text,
  ask: ask.types,
  askText: ask.text,
  elicited,
  cancelled,
  listed,
}));
