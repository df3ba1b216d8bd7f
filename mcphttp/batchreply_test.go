package mcphttp

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/jsonrpc"
)

// TestBatchReplyIsBounded: a 2025-03-26 batch of 100 tools/list, each
// answered with a page of 100 tools of 6 KiB (64 MiB in all, as the
// attack that reached 1 GiB built), gets a reply of at most the default
// max_batch_response_bytes (8 MiB): the responses that do not fit are
// replaced by errors naming the setting, so that every request is still
// answered once.
func TestBatchReplyIsBounded(t *testing.T) {
	const limit = 8 << 20 // the default [http] max_batch_response_bytes
	var tools []abi.Tool
	for i := range 100 {
		tools = append(tools, abi.Tool{Name: fmt.Sprintf("t%d", i), Description: strings.Repeat("x", 6<<10), InputSchema: objectSchema})
	}
	hh := newHTTPHarness(t, Options{}, toolsPlugin("p", tools...))
	id := hh.initSession(t, host.Version20250326)
	var batch []string
	for i := range 100 {
		batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i))
	}
	resp := hh.do(t, http.MethodPost, "/mcp", "["+strings.Join(batch, ",")+"]", headerSessionID, id)
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("batch: %d, %v", resp.StatusCode, err)
	}
	t.Logf("the reply to 100 tools/list: %d bytes", len(body))
	// Each response that does not fit becomes an error of a few hundred
	// bytes.
	if len(body) > limit+100*512 {
		t.Errorf("the reply to a batch is %d bytes, more than max_batch_response_bytes (%d)", len(body), limit)
	}
	var replies []struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if err := json.Unmarshal(body, &replies); err != nil {
		t.Fatalf("the reply is not a JSON-RPC batch: %v", err)
	}
	answered := map[int]int{}
	results, refused := 0, 0
	for _, r := range replies {
		answered[r.ID]++
		switch {
		case r.Result != nil:
			results++
		case r.Error != nil && strings.Contains(r.Error.Message, "max_batch_response_bytes"):
			refused++
		default:
			t.Errorf("reply %d: neither a result nor an error naming max_batch_response_bytes: %+v", r.ID, r.Error)
		}
	}
	if len(answered) != 100 || len(replies) != 100 {
		t.Errorf("%d replies to %d distinct ids, want one to each of 100", len(replies), len(answered))
	}
	if results == 0 || refused == 0 {
		t.Errorf("%d results and %d refusals, want both", results, refused)
	}
}
