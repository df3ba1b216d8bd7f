package rpctest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"testing"
)

// StdioSession serves one session with serve on pipes, as the stdio
// transport does, initialized at protocol version 2025-11-25. It returns a
// function that sends one request, format with a %d verb for a fresh id,
// and returns its response line. The session ends with the test.
func StdioSession(tb testing.TB, serve func(ctx context.Context, in io.Reader, out io.Writer) error) func(format string) []byte {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, inR, outW) }()
	tb.Cleanup(func() {
		cancel()
		inW.Close()
		<-done
	})
	br := bufio.NewReader(outR)
	roundTrip := func(line string) []byte {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			tb.Fatal(err)
		}
		resp, err := br.ReadBytes('\n')
		if err != nil {
			tb.Fatal(err)
		}
		return resp
	}
	roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		tb.Fatal(err)
	}
	id := 0
	return func(format string) []byte {
		id++
		return roundTrip(fmt.Sprintf(format, id))
	}
}
