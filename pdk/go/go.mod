module github.com/mcphost/mcphost/pdk/go

go 1.24

require github.com/mcphost/mcphost/abi v0.1.0

// Inside the mcphost repository the PDK is built with the ABI beside it.
// (A replace directive only applies when this is the main module.)
replace github.com/mcphost/mcphost/abi => ../../abi
