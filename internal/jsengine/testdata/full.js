/* mcphost.manifest
{"version": "1.0.0", "description": "pdk/js test plugin",
 "needs": {"host_functions": ["notify_progress", "notify_logging_message", "create_message",
                              "create_elicitation", "list_roots", "request_input"], "config": ["greeting"]}}
*/
'use strict';

mcphost.tool('add', {
  description: 'Adds two numbers.',
  inputSchema: {
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
  },
  outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
  annotations: { readOnlyHint: true },
  title: 'Add',
}, ({ a, b }) => ({ sum: a + b }));

mcphost.tool('greet', 'Greets someone.', (args) => `${mcphost.config('greeting') ?? 'Hello'}, ${args.name ?? 'world'}!`);
mcphost.tool('content', { description: 'Returns content blocks.' }, () => [
  mcphost.text('one'),
  mcphost.image(new Uint8Array([1, 2, 3]), 'image/png'),
  mcphost.resourceLink('test://a', 'a', 'text/plain'),
]);
mcphost.tool('mcp_result', 'Returns a CallToolResult as is.', () => ({ content: [{ type: 'text', text: 'raw' }], _meta: { x: 1 } }));
mcphost.tool('fail', 'Throws.', () => { throw new Error('it broke'); });
mcphost.tool('fail_later', 'Throws from a nested call.', () => JSON.parse('{not json'));
mcphost.tool('error_result', 'Returns an error result.', () => mcphost.errorResult('bad input'));
mcphost.tool('protocol_error', 'Throws a protocol error.', () => { throw mcphost.invalidParams('no such thing'); });
mcphost.tool('async', 'An async handler.', async (args) => {
  const v = await Promise.resolve(args.n * 2);
  await null;
  return { doubled: v };
});
mcphost.tool('async_fail', 'An async handler that rejects.', async () => { await null; throw new TypeError('async broke'); });
mcphost.tool('never', 'A promise that never settles.', () => new Promise(() => {}));
mcphost.tool('spin', 'Loops forever.', () => { for (;;) {} });
mcphost.tool('recurse', 'Recurses forever.', () => { const f = (n) => f(n + 1) + 1; return f(0); });
mcphost.tool('hog', 'Allocates without end.', () => { const a = []; for (;;) a.push(new Array(1e5).fill(1.5)); });
mcphost.tool('number', 'Returns a number.', () => 42);
mcphost.tool('nothing', 'Returns nothing.', () => {});
mcphost.tool('echo', 'Echoes its arguments.', (args) => mcphost.structuredResult(args));
mcphost.tool('task_tool', { description: 'Task support.', taskSupport: 'optional' }, () => 'ok');

mcphost.tool('progress', 'Reports progress and logs.', (args, ctx) => {
  ctx.progress(1, 2, 'half');
  ctx.progress(2, 2);
  ctx.log('warning', 'careful', { n: 1 });
  ctx.log(undefined, 'plain');
  console.log('to the host log', { a: 1 });
  return `token=${ctx.progressToken} id=${ctx.id}`;
});
mcphost.tool('sample', 'Asks the client model.', (args, ctx) => {
  const r = ctx.createMessage({ messages: [mcphost.userMessage('hi')], maxTokens: 10 });
  return `${r.model}: ${r.text}`;
});
mcphost.tool('ask', 'Elicits.', (args, ctx) => {
  const r = ctx.elicit('Your name?', { type: 'object', properties: { name: { type: 'string' } } });
  return r.action === 'accept' ? `name=${r.content.name}` : r.action;
});
mcphost.tool('roots', 'Lists roots.', (args, ctx) => ctx.listRoots().map((r) => r.uri).join(','));
mcphost.tool('who', 'Names the caller.', (args, ctx) =>
  [ctx.protocolVersion, ctx.subject, ctx.hasScope('notes:write'), ctx.clientCan('sampling', 'tools'), ctx.clientCan('elicitation')].join(' '));
mcphost.tool('batch', 'Asks two questions at once.', (args, ctx) => {
  const answers = ctx.requestInput({
    user_name: { method: 'elicitation/create', params: { message: 'Name?' } },
    client_roots: { method: 'roots/list' },
  });
  return Object.keys(answers).sort().join(',');
});
mcphost.tool('host_error', 'A host function that fails.', (args, ctx) => {
  try {
    ctx.listRoots();
    return 'no error';
  } catch (e) {
    return `${e.name} ${e.function} ${e.code} ${e instanceof mcphost.HostError}: ${e.message}`;
  }
});
mcphost.tool('fetch', 'HTTP.', (args) => {
  const r = mcphost.fetch({ url: mcphost.config('url'), method: 'POST', headers: { 'X-Test': 'yes' }, body: args.body });
  return `${r.status} ${r.ok} ${r.text()} ${r.json().method}`;
});
mcphost.tool('fetchsafe', 'HTTP, going on when the request fails.', () => {
  try {
    const r = mcphost.fetch(mcphost.config('url'));
    return `${r.status} ${r.text()}`;
  } catch (e) {
    return `fallback: ${e.message}`;
  }
});
mcphost.tool('notify', 'Notifications.', () => {
  mcphost.notifyToolListChanged();
  mcphost.notifyResourceUpdated('test://static');
  return 'sent';
});

// The engine itself: ES2020 features and number formatting.
mcphost.tool('selftest', 'Checks the engine.', async () => {
  const failures = [];
  const eq = (name, got, want) => { if (got !== want) failures.push(`${name}: got ${JSON.stringify(String(got))}, want ${JSON.stringify(String(want))}`); };
  eq('toFixed tie', (2.5).toFixed(0), '3');
  eq('toFixed tie neg', (-2.5).toFixed(0), '-3');
  eq('toFixed 1.25', (1.25).toFixed(1), '1.3');
  eq('toFixed 1.005', (1.005).toFixed(2), '1.00');
  eq('toFixed 0.125', (0.125).toFixed(2), '0.13');
  eq('toPrecision tie', (0.125).toPrecision(2), '0.13');
  eq('toExponential', (123456).toExponential(2), '1.23e+5');
  eq('shortest', String(0.1 + 0.2), '0.30000000000000004');
  eq('shortest 2', String(1.3 * 1.1), '1.4300000000000002');
  eq('big', String(1e21), '1e+21');
  eq('parse', parseFloat('3.14159'), 3.14159);
  eq('bigint', String(2n ** 100n), '1267650600228229401496703205376');
  eq('optional chaining', ({ a: null })?.a?.b, undefined);
  eq('nullish', null ?? 'd', 'd');
  eq('matchAll', [...'a1b2'.matchAll(/\d/g)].map((m) => m[0]).join(''), '12');
  eq('globalThis', typeof globalThis.mcphost, 'object');
  eq('regexp named groups', /(?<y>\d{4})/.exec('in 2024').groups.y, '2024');
  eq('unicode', 'Ünïcödé'.normalize('NFD').length, 11);
  eq('date', new Date(Date.UTC(2020, 0, 2)).toISOString(), '2020-01-02T00:00:00.000Z');
  eq('json', JSON.stringify({ a: [1, 'x', true, null] }), '{"a":[1,"x",true,null]}');
  eq('base64', mcphost.base64Encode('hé'), 'aMOp');
  eq('base64 back', mcphost.utf8Decode(mcphost.base64Decode('aMOp')), 'hé');
  eq('btoa', btoa('hello'), 'aGVsbG8=');
  eq('atob', atob('aGVsbG8='), 'hello');
  eq('TextEncoder', new TextEncoder().encode('€').length, 3);
  eq('TextDecoder', new TextDecoder().decode(new Uint8Array([0xe2, 0x82, 0xac])), '€');
  eq('Math.random', typeof Math.random(), 'number');
  let la = null;
  la ??= 5;
  eq('logical assignment', la, 5);
  class Counter { #n = 1; inc() { return ++this.#n; } }
  eq('class fields', new Counter().inc(), 2);
  eq('Promise.any', typeof Promise.any, 'function');
  eq('now', Date.now() > 1.6e12, true);
  const settled = await Promise.allSettled([Promise.reject(new Error('x')), 1]);
  eq('allSettled', settled.map((x) => x.status).join(), 'rejected,fulfilled');
  return failures.length ? mcphost.errorResult(failures.join('\n')) : 'ok';
});

mcphost.prompt('summarise', {
  description: 'Summarise a text.',
  title: 'Summarise',
  arguments: [{ name: 'text', description: 'Text to summarise', required: true }, { name: 'length' }],
}, ({ text, length }) => `Summarise in a ${length ?? 'short'} paragraph:\n\n${text}`);
mcphost.prompt('chat', 'Two messages.', () => [
  'first',
  mcphost.assistantMessage('second'),
]);
mcphost.prompt('explicit', 'A full result.', () => ({ description: 'custom', messages: [mcphost.userMessage('x')] }));
mcphost.completePromptArg('summarise', 'length', ['short', 'medium', 'long']);
mcphost.completePromptArg('chat', 'many', () => Array.from({ length: 150 }, (_, i) => `v${i}`));

mcphost.resource({ uri: 'test://static', name: 'static', mimeType: 'text/plain' }, () => 'static text');
mcphost.resource({ uri: 'test://bytes', name: 'bytes', mimeType: 'application/octet-stream' }, () => new Uint8Array([0, 1, 2, 255]));
mcphost.resourceTemplate({ uriTemplate: 'test://items/{id}{?fields*}', name: 'item', mimeType: 'application/json' },
  (uri, vars) => {
    if (vars.id === 'missing') return null;
    return JSON.stringify(vars);
  });
mcphost.resourceTemplate({ uriTemplate: 'file:///{+path}', name: 'file' }, async (uri, { path }) =>
  mcphost.textResource(uri, 'text/plain', `path=${path}`));
mcphost.resourceLister(() => [{ uri: 'test://items/1', name: 'item 1' }, { uri: 'test://static' }]);
mcphost.completeTemplateVar('test://items/{id}{?fields*}', 'id', (value) => mcphost.filterPrefix(['1', '2', '10'], value));
