// Package archtest holds the tests that keep mcphost's package boundaries:
// which packages may reach which, over the whole import graph.
package archtest
