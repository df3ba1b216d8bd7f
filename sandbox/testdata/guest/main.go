//go:build wasip1

// Command guest is the sandbox test plugin that uses only the Extism kernel
// and WASI.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcphost/mcphost/sandbox/testdata/kernel"
)

func main() {}

//go:wasmexport echo
func echo() int32 {
	kernel.Output(kernel.Input())
	return 0
}

//go:wasmexport size
func size() int32 {
	kernel.Output([]byte(strconv.FormatUint(kernel.InputLength(), 10)))
	return 0
}

//go:wasmexport fail
func fail() int32 { return kernel.Fail("bad input: " + string(kernel.Input())) }

//go:wasmexport status
func status() int32 { return 7 }

//go:wasmexport trap
func trap() int32 { panic("boom") }

// exit exits with the status its input says.
//
//go:wasmexport exit
func exit() int32 {
	code, _ := strconv.Atoi(string(kernel.Input()))
	os.Exit(code)
	return 0
}

var spins int

//go:wasmexport loop
func loop() int32 {
	for {
		spins++
	}
}

//go:wasmexport sleep
func sleep() int32 {
	time.Sleep(time.Hour)
	return 0
}

var hoard [][]byte

// grow allocates and touches the number of MiB its input says.
//
//go:wasmexport grow
func grow() int32 {
	n, _ := strconv.Atoi(string(kernel.Input()))
	for range n {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		hoard = append(hoard, b)
	}
	hoard = nil
	return 0
}

// bigout outputs as many bytes as its input says.
//
//go:wasmexport bigout
func bigout() int32 {
	n, _ := strconv.ParseUint(string(kernel.Input()), 10, 64)
	kernel.OutputBlock(kernel.AllocN(n))
	return 0
}

//go:wasmexport http
func http() int32 {
	kernel.Output(kernel.HTTPRequest(kernel.Input()))
	return 0
}

// httpstatus sends the request its input holds and outputs the response's
// status code.
//
//go:wasmexport httpstatus
func httpstatus() int32 {
	kernel.HTTPRequest(kernel.Input())
	kernel.Output([]byte(strconv.Itoa(int(kernel.HTTPStatusCode()))))
	return 0
}

//go:wasmexport readfile
func readfile() int32 {
	b, err := os.ReadFile(string(kernel.Input()))
	if err != nil {
		return kernel.Fail(err.Error())
	}
	kernel.Output(b)
	return 0
}

//go:wasmexport writefile
func writefile() int32 {
	if err := os.WriteFile(string(kernel.Input()), []byte("written"), 0o644); err != nil {
		return kernel.Fail(err.Error())
	}
	return 0
}

// symlink makes the link named by its input point to "../../../../../..".
//
//go:wasmexport symlink
func symlink() int32 {
	if err := os.Symlink("../../../../../..", string(kernel.Input())); err != nil {
		return kernel.Fail(err.Error())
	}
	return 0
}

//go:wasmexport environ
func environ() int32 {
	b, _ := json.Marshal(map[string][]string{"env": os.Environ(), "args": os.Args})
	kernel.Output(b)
	return 0
}

//go:wasmexport config
func config() int32 {
	v, ok := kernel.Config(string(kernel.Input()))
	if !ok {
		return kernel.Fail("no such config key")
	}
	kernel.Output([]byte(v))
	return 0
}

//go:wasmexport print
func printAll() int32 {
	fmt.Println("to stdout")
	fmt.Fprint(os.Stderr, "to stderr")
	kernel.LogInfo("to the log")
	return 0
}

// levels logs at every level and outputs the host's log level.
//
//go:wasmexport levels
func levels() int32 {
	kernel.LogTrace("at trace")
	kernel.LogDebug("at debug")
	kernel.LogInfo("at info")
	kernel.LogWarn("at warn")
	kernel.LogError("at error")
	kernel.Output([]byte(strconv.Itoa(int(kernel.LogLevel()))))
	return 0
}

//go:wasmexport flood
func flood() int32 {
	for i := range 10000 {
		fmt.Println("line", i)
	}
	return 0
}

// softfail sets an error and returns 0.
//
//go:wasmexport softfail
func softfail() int32 {
	kernel.ErrorSet(kernel.Alloc([]byte("soft failure")))
	return 0
}

// errorget sets its input as the error, outputs what error_get returns and
// clears the error.
//
//go:wasmexport errorget
func errorget() int32 {
	kernel.ErrorSet(kernel.Alloc(kernel.Input()))
	kernel.Output(kernel.Read(kernel.ErrorGet()))
	kernel.ErrorSet(0)
	return 0
}

// setvar sets the variable its input names ("name=value"), or deletes it
// when the input has no "=".
//
//go:wasmexport setvar
func setvar() int32 {
	name, value, found := strings.Cut(string(kernel.Input()), "=")
	if !found {
		kernel.SetVar(name, nil)
		return 0
	}
	kernel.SetVar(name, []byte(value))
	return 0
}

//go:wasmexport getvar
func getvar() int32 {
	v, ok := kernel.Var(string(kernel.Input()))
	if !ok {
		return kernel.Fail("no such var")
	}
	kernel.Output(v)
	return 0
}

// hostile passes a new block of n bytes of kernel memory to the kernel
// function its input names ("<what> <n>"); "none" passes it to none.
//
//go:wasmexport hostile
func hostile() int32 {
	what, n, _ := strings.Cut(string(kernel.Input()), " ")
	size, _ := strconv.ParseUint(n, 10, 64)
	block := kernel.AllocN(size)
	name := func(s string) uint64 { return kernel.Alloc([]byte(s)) }
	switch what {
	case "error":
		kernel.ErrorSet(block)
		return 1
	case "output":
		kernel.OutputBlock(block)
	case "log":
		kernel.LogInfoBlock(block)
	case "config":
		kernel.ConfigGet(block)
	case "var_get":
		kernel.VarGet(block)
	case "var_set_name":
		kernel.VarSet(block, name("value"))
	case "var_set_value":
		kernel.VarSet(name("name"), block)
	case "http_request":
		kernel.HTTPRequestBlocks(block, 0)
	case "http_body":
		kernel.HTTPRequestBlocks(name(`{"url":"http://127.0.0.1:1/","method":"POST"}`), block)
	}
	return 0
}
