package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
)

// The protocol transcripts in testdata/transcripts show the engine's wire
// behaviour: each file's "in" section is what a client writes to the
// server's stdin, one JSON-RPC message a line, and its "out" section is what
// the server writes back. TestTranscripts replays every file against
// transcriptCatalog through Server.ServeStdio.
//
// Requests run concurrently in the engine, so the replay is in lockstep to
// make the order of the output deterministic: after each line that expects
// an answer (anything but a notification or a response to the server), it
// waits for that answer before it sends the next line. "out" therefore holds
// the answers in the order of the "in" lines that asked for them, with any
// message the server sends while it serves a request before that request's
// response. Lines are compared as JSON values, so the key order and spacing
// of "out" do not matter.
//
// go test ./host -run TestTranscripts -update rewrites the "out" sections
// with what the engine answers now; review the diff before committing it.

var update = flag.Bool("update", false, "rewrite the out sections of testdata/transcripts with the engine's answers")

// transcriptCatalog is the catalog every transcript runs against: two fake
// plugins, "calc" with tools and "docs" with prompts, resources, resource
// templates and completion. All plugin construction is here.
func transcriptCatalog() *Catalog {
	addSchema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`)
	sumSchema := json.RawMessage(`{"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"]}`)
	textSchema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	calc := NewPlugin("calc", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{
			{Name: "add", Title: "Add", Description: "Adds two integers.", InputSchema: addSchema, OutputSchema: sumSchema},
			{Name: "echo", Description: "Answers its text.", InputSchema: textSchema},
			{Name: "upper", Description: "Answers its text in upper case.", InputSchema: textSchema},
		}}),
		abi.ExportCallTool: func(_ context.Context, in []byte) ([]byte, error) {
			var input struct {
				Request struct {
					Name      string `json:"name"`
					Arguments struct {
						A    int    `json:"a"`
						B    int    `json:"b"`
						Text string `json:"text"`
					} `json:"arguments"`
				} `json:"request"`
			}
			if err := json.Unmarshal(in, &input); err != nil {
				return nil, err
			}
			args := input.Request.Arguments
			switch input.Request.Name {
			case "add":
				sum := args.A + args.B
				return json.Marshal(abi.CallToolResult{
					Content:           []abi.Content{{Type: abi.ContentText, Text: fmt.Sprintf(`{"sum":%d}`, sum)}},
					StructuredContent: map[string]int{"sum": sum},
				})
			case "upper":
				return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: strings.ToUpper(args.Text)}}})
			default:
				return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: args.Text}}})
			}
		},
	})

	languages := []string{"go", "haskell", "javascript", "python", "rust"}
	docs := NewPlugin("docs", "", fakeRuntime{
		abi.ExportListPrompts: returns(abi.ListPromptsResult{Prompts: []abi.Prompt{{
			Name: "review", Title: "Code review", Description: "Asks for a review of code.",
			Arguments: []abi.PromptArgument{{Name: "language", Required: true}, {Name: "focus"}},
		}}}),
		abi.ExportGetPrompt: func(_ context.Context, in []byte) ([]byte, error) {
			var input struct {
				Request abi.GetPromptParams `json:"request"`
			}
			if err := json.Unmarshal(in, &input); err != nil {
				return nil, err
			}
			text := "Review this " + input.Request.Arguments["language"] + " code."
			return json.Marshal(abi.GetPromptResult{Messages: []abi.PromptMessage{{Role: "user", Content: abi.Content{Type: abi.ContentText, Text: text}}}})
		},
		abi.ExportListResources: returns(abi.ListResourcesResult{Resources: []abi.Resource{
			{URI: "docs://readme", Name: "readme", Title: "Read me", MimeType: "text/markdown"},
		}}),
		abi.ExportListResourceTemplates: returns(abi.ListResourceTemplatesResult{ResourceTemplates: []abi.ResourceTemplate{
			{URITemplate: "docs://pages/{page}", Name: "page", Description: "A page of the manual.", MimeType: "text/markdown"},
		}}),
		abi.ExportReadResource: func(_ context.Context, in []byte) ([]byte, error) {
			var input struct {
				Request abi.ReadResourceParams `json:"request"`
			}
			if err := json.Unmarshal(in, &input); err != nil {
				return nil, err
			}
			uri := input.Request.URI
			return json.Marshal(abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: uri, MimeType: "text/markdown", Text: "# " + uri}}})
		},
		abi.ExportComplete: func(_ context.Context, in []byte) ([]byte, error) {
			var input struct {
				Request abi.CompleteParams `json:"request"`
			}
			if err := json.Unmarshal(in, &input); err != nil {
				return nil, err
			}
			candidates := languages
			if input.Request.Ref.Type == abi.RefResource {
				candidates = []string{"install", "intro", "usage"}
			}
			values := []string{}
			for _, c := range candidates {
				if strings.HasPrefix(c, input.Request.Argument.Value) {
					values = append(values, c)
				}
			}
			return json.Marshal(abi.CompleteResult{Completion: abi.Completion{Values: values}})
		},
	})
	return BuildCatalog(context.Background(), []*Plugin{calc, docs}, nil)
}

// transcript is a parsed testdata/transcripts file.
type transcript struct {
	comment string
	in, out []string // non-empty lines
}

// parseTranscript reads a txtar archive with the sections "in" and "out".
func parseTranscript(data []byte) (*transcript, error) {
	tr := &transcript{}
	var comment strings.Builder
	section := ""
	for line := range strings.Lines(string(data)) {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "-- "); ok && strings.HasSuffix(name, " --") {
			section = strings.TrimSuffix(name, " --")
			if section != "in" && section != "out" {
				return nil, fmt.Errorf("unknown section %q: want in and out", section)
			}
			continue
		}
		switch line = strings.TrimRight(line, "\r\n"); {
		case section == "":
			comment.WriteString(line + "\n")
		case line == "":
		case section == "in":
			tr.in = append(tr.in, line)
		default:
			tr.out = append(tr.out, line)
		}
	}
	tr.comment = comment.String()
	return tr, nil
}

// format writes the transcript back as txtar.
func (tr *transcript) format() []byte {
	var b bytes.Buffer
	b.WriteString(tr.comment)
	b.WriteString("-- in --\n")
	for _, l := range tr.in {
		b.WriteString(l + "\n")
	}
	b.WriteString("-- out --\n")
	for _, l := range tr.out {
		b.WriteString(l + "\n")
	}
	return b.Bytes()
}

// expectsAnswer reports whether the server answers line: everything but a
// notification (a method and no id) and a response (a result or an error
// and no method) gets an answer, malformed lines included.
func expectsAnswer(line string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &m) != nil {
		return true
	}
	_, hasID := m["id"]
	_, hasMethod := m["method"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	switch {
	case hasMethod:
		return hasID
	case hasResult || hasError:
		return false
	}
	return true
}

// isAnswer reports whether a server message answers a request: a response
// (an id and no method) or a batch of them, as opposed to a notification or
// a request to the client. The acknowledgement of subscriptions/listen
// counts as its answer: the request itself is answered only when the
// subscription ends.
func isAnswer(line string) bool {
	if strings.HasPrefix(line, "[") {
		return true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &m) != nil {
		return false
	}
	_, hasID := m["id"]
	method, hasMethod := m["method"]
	return hasID && !hasMethod || string(method) == `"notifications/subscriptions/acknowledged"`
}

// replay runs lines through a fresh server's stdio transport in lockstep
// and returns every line the server wrote.
func replay(t *testing.T, lines []string) []string {
	t.Helper()
	srv := NewServer(Options{Name: "transcripts", Title: "Transcript Server", Version: "1.0.0", PageSize: 2, CatalogChanges: true}, transcriptCatalog())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	t.Cleanup(func() { inW.Close(); outR.Close() }) // ends the goroutines when a check gave up early
	served := make(chan error, 1)
	go func() {
		err := srv.ServeStdio(context.Background(), inR, outW, time.Second)
		outW.Close()
		served <- err
	}()
	written := make(chan string)
	go func() {
		defer close(written)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			written <- sc.Text()
		}
	}()
	var got []string
	for i, line := range lines {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatalf("writing in line %d: %v", i+1, err)
		}
		for answered := !expectsAnswer(line); !answered; {
			select {
			case msg, ok := <-written:
				if !ok {
					t.Fatalf("the server closed stdout before answering in line %d: %s", i+1, line)
				}
				got = append(got, msg)
				answered = isAnswer(msg)
			case <-time.After(5 * time.Second):
				t.Fatalf("no response to in line %d within 5s: %s", i+1, line)
			}
		}
	}
	inW.Close()
	for msg := range written { // what comes after the last answer, if anything
		got = append(got, msg)
	}
	if err := <-served; err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	return got
}

// sameJSON reports whether two lines hold equal JSON values.
func sameJSON(a, b string) bool {
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata/transcripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := parseTranscript(data)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			got := replay(t, tr.in)
			if *update {
				tr.out = got
				if err := os.WriteFile(file, tr.format(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for i := range max(len(got), len(tr.out)) {
				switch {
				case i >= len(got):
					t.Errorf("out line %d: missing; want %s", i+1, tr.out[i])
				case i >= len(tr.out):
					t.Errorf("out line %d: unexpected %s", i+1, got[i])
				case !sameJSON(got[i], tr.out[i]):
					t.Errorf("out line %d:\n got %s\nwant %s", i+1, got[i], tr.out[i])
				}
			}
		})
	}
}
