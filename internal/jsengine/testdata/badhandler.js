mcphost.tool('x', { description: 'no handler' });
