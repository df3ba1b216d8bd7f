//go:build wasip1

// Command guest is the sandbox test plugin that uses only the Extism kernel
// and WASI.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
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
