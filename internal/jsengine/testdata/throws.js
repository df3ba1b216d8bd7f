const config = JSON.parse(mcphost.config('settings') ?? '{}');
if (!config.apiKey) throw new Error('settings.apiKey is not configured');
