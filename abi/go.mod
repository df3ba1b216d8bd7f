module github.com/mcphost/mcphost/abi

go 1.24
