/* mcphost.manifest
{
  "name": "units",
  "version": "0.1.0",
  "description": "Unit conversion, written in JavaScript: tools, a prompt, resources and completions.",
  "needs": {"host_functions": ["notify_progress", "notify_logging_message"]}
}
*/
// An mcphost plugin in plain JavaScript. Drop this file into the plugins
// folder: mcphost runs it on its embedded JavaScript engine (see
// pdk/js/README.md). The comment above is the plugin's manifest.

// Units by dimension, as factors to the dimension's base unit (temperatures
// have offsets too).
const UNITS = {
  length: { m: 1, km: 1000, cm: 0.01, mm: 0.001, mi: 1609.344, yd: 0.9144, ft: 0.3048, in: 0.0254 },
  mass: { kg: 1, g: 0.001, mg: 1e-6, t: 1000, lb: 0.45359237, oz: 0.028349523125 },
  time: { s: 1, ms: 0.001, min: 60, h: 3600, d: 86400 },
  temperature: { C: [1, 0], K: [1, -273.15], F: [5 / 9, -32 * (5 / 9)] },
};

const NAMES = {
  m: 'metre', km: 'kilometre', cm: 'centimetre', mm: 'millimetre', mi: 'mile', yd: 'yard', ft: 'foot', in: 'inch',
  kg: 'kilogram', g: 'gram', mg: 'milligram', t: 'tonne', lb: 'pound', oz: 'ounce',
  s: 'second', ms: 'millisecond', min: 'minute', h: 'hour', d: 'day',
  C: 'degree Celsius', K: 'kelvin', F: 'degree Fahrenheit',
};

const ALL_UNITS = Object.values(UNITS).flatMap((d) => Object.keys(d));

function dimensionOf(unit) {
  for (const [dim, units] of Object.entries(UNITS)) {
    if (Object.prototype.hasOwnProperty.call(units, unit)) return dim;
  }
  return undefined;
}

function convert(value, from, to) {
  const dim = dimensionOf(from);
  if (!dim) throw new Error(`unknown unit "${from}"; known units: ${ALL_UNITS.join(', ')}`);
  if (dimensionOf(to) !== dim) throw new Error(`cannot convert ${dim} (${from}) to ${dimensionOf(to) ?? 'unknown unit'} (${to})`);
  if (dim === 'temperature') {
    const [fa, oa] = UNITS.temperature[from];
    const [fb, ob] = UNITS.temperature[to];
    return (value * fa + oa - ob) / fb;
  }
  return (value * UNITS[dim][from]) / UNITS[dim][to];
}

const round = (x) => Number(x.toPrecision(12));

mcphost.tool('convert_units', {
  title: 'Convert units',
  description: 'Converts a value between units of length, mass, time or temperature.',
  inputSchema: {
    type: 'object',
    properties: {
      value: { type: 'number', description: 'The value to convert' },
      from: { type: 'string', description: 'Unit of the value, e.g. "km"' },
      to: { type: 'string', description: 'Unit to convert to, e.g. "mi"' },
    },
    required: ['value', 'from', 'to'],
  },
  outputSchema: {
    type: 'object',
    properties: { value: { type: 'number' }, unit: { type: 'string' }, text: { type: 'string' } },
    required: ['value', 'unit', 'text'],
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
}, ({ value, from, to }) => {
  const result = round(convert(value, from, to));
  // An object is the tool's structured output (and its JSON, as text).
  return { value: result, unit: to, text: `${value} ${from} = ${result} ${to}` };
});

mcphost.tool('conversion_table', {
  description: 'Tabulates a unit against every other unit of its dimension, reporting progress.',
  inputSchema: {
    type: 'object',
    properties: { unit: { type: 'string', description: 'The unit, e.g. "kg"' } },
    required: ['unit'],
  },
}, ({ unit }, ctx) => {
  const dim = dimensionOf(unit);
  // A thrown error is a tool error the model can read (isError).
  if (!dim) throw new Error(`unknown unit "${unit}"`);
  const others = Object.keys(UNITS[dim]).filter((u) => u !== unit);
  const lines = [];
  others.forEach((u, i) => {
    lines.push(`1 ${unit} = ${round(convert(1, unit, u))} ${u}`);
    ctx.progress(i + 1, others.length, `converted to ${u}`);
  });
  ctx.log('info', `tabulated ${unit}`, { rows: lines.length });
  return mcphost.text(lines.join('\n'));
});

mcphost.prompt('explain_conversion', {
  description: 'Asks the model to explain how to convert between two units.',
  arguments: [
    { name: 'from', description: 'Unit to convert from', required: true },
    { name: 'to', description: 'Unit to convert to', required: true },
  ],
}, ({ from, to }) =>
  `Explain, step by step, how to convert a value in ${NAMES[from] ?? from} (${from}) ` +
  `to ${NAMES[to] ?? to} (${to}), with one worked example.`);

mcphost.completePromptArg('explain_conversion', 'from', ALL_UNITS);
mcphost.completePromptArg('explain_conversion', 'to', (value, args) => {
  // Only units of the same dimension as "from", once it is known.
  const dim = dimensionOf(args.from);
  return mcphost.filterPrefix(dim ? Object.keys(UNITS[dim]) : ALL_UNITS, value);
});

mcphost.resource({
  uri: 'units://catalog',
  name: 'unit catalog',
  description: 'Every known unit by dimension',
  mimeType: 'application/json',
}, () => JSON.stringify(Object.fromEntries(Object.entries(UNITS).map(([d, u]) => [d, Object.keys(u)]))));

mcphost.resourceTemplate({
  uriTemplate: 'units://unit/{unit}',
  name: 'unit',
  description: 'One unit: its name and dimension',
  mimeType: 'application/json',
}, (uri, { unit }) => {
  const dim = dimensionOf(unit);
  if (!dim) throw mcphost.resourceNotFound(uri);
  return JSON.stringify({ unit, name: NAMES[unit], dimension: dim });
});

mcphost.completeTemplateVar('units://unit/{unit}', 'unit', ALL_UNITS);
