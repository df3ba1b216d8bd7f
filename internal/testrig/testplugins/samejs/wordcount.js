/* mcphost.manifest
{"name": "samejs", "version": "0.1.0", "description": "wordcount, in JavaScript (the same tool as samego and samerust)."}
*/
// samejs is the JavaScript version of the wordcount test plugin, which
// internal/testrig/testplugins/samego (Go) and internal/testrig/testplugins/samerust (Rust)
// implement identically: one tool, wordcount, taking {"text": string} and
// returning {"words": n, "lines": n, "chars": n} as structured output. See
// samego/main.go for the counting rules. internal/testrig/e2e copies this file into a
// plugins folder as samejs.js.

// isWhiteSpace reports whether the UTF-16 code unit c is White_Space (all
// of which are in the BMP). JavaScript's \s differs: it lacks U+0085 and
// has U+FEFF.
function isWhiteSpace(c) {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0x85) return false;
  return c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000;
}

function count(s) {
  let words = 0;
  let lines = 0;
  let chars = 0;
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // Code points: the low half of a surrogate pair is not another one.
    if (c < 0xdc00 || c > 0xdfff || i === 0 || (s.charCodeAt(i - 1) & 0xfc00) !== 0xd800) chars++;
    if (c === 0x0a) lines++;
    if (isWhiteSpace(c)) {
      inWord = false;
    } else if (!inWord) {
      inWord = true;
      words++;
    }
  }
  if (s !== '' && !s.endsWith('\n')) lines++;
  return { words, lines, chars };
}

const count_ = { type: 'integer', minimum: 0 };

mcphost.tool('wordcount', {
  description: 'Counts the words, lines and characters of a text.',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string', description: 'The text to count in.' } },
    required: ['text'],
  },
  outputSchema: {
    type: 'object',
    properties: {
      words: { ...count_, description: 'Runs of non-white-space characters.' },
      lines: { ...count_, description: 'Lines; a final newline does not start another.' },
      chars: { ...count_, description: 'Unicode code points.' },
    },
    required: ['words', 'lines', 'chars'],
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
}, ({ text }) => count(text));
