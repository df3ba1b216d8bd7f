mcphost.tool('x', 'x', () => 1);

function broken( {
  return 1;
}
