// Package packaging holds the tests of what ships mcphost beside its
// source: server.json, the MCP Registry's entry, and the Dockerfile. They
// read the files at the repository's root, three folders up.
package packaging
