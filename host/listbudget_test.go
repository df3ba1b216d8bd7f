package host

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
)

// pagedTools is a list_tools export that answers pages of perPage tools,
// pages of them, after delay each, counting the pages it was asked for.
func pagedTools(pages, perPage int, delay time.Duration, asked *atomic.Int64) func(context.Context, []byte) ([]byte, error) {
	return func(ctx context.Context, in []byte) ([]byte, error) {
		asked.Add(1)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, &CallError{Reason: "plugin call canceled", Message: "canceled", Canceled: true}
		}
		var input abi.ListInput
		_ = json.Unmarshal(in, &input)
		page := 0
		if input.Request != nil {
			fmt.Sscan(input.Request.Cursor, &page)
		}
		res := abi.ListToolsResult{}
		for i := range perPage {
			res.Tools = append(res.Tools, abi.Tool{Name: fmt.Sprintf("t%d_%d", page, i), InputSchema: json.RawMessage(`{"type":"object"}`)})
		}
		if page+1 < pages {
			res.NextCursor = fmt.Sprint(page + 1)
		}
		return json.Marshal(res)
	}
}

// TestAListBombIsReadOnlyUpToTheItemCap: a plugin that lists 100 pages of
// 1,000 tools is read only until maxListedItems tools have come, not for
// all 100,000 of them.
func TestAListBombIsReadOnlyUpToTheItemCap(t *testing.T) {
	var asked atomic.Int64
	bomb := NewPlugin("bomb", "", fakeRuntime{abi.ExportListTools: pagedTools(100, 1000, 0, &asked)})
	c := BuildCatalog(t.Context(), []*Plugin{bomb}, nil)
	if n := asked.Load(); n > maxListedItems/1000 {
		t.Errorf("%d pages read, want at most %d", n, maxListedItems/1000)
	}
	if len(c.tools) > maxListedItems {
		t.Errorf("%d tools listed, want at most %d", len(c.tools), maxListedItems)
	}
}

// TestASlowListStaysWithinItsBudget: a plugin whose every page is slow
// gets its list budget for all its listing; the catalog is built without
// its tools once the budget is spent, and the other plugin is listed.
func TestASlowListStaysWithinItsBudget(t *testing.T) {
	var asked, healthy atomic.Int64
	slow := NewPlugin("slow", "", fakeRuntime{abi.ExportListTools: pagedTools(100, 1, 200*time.Millisecond, &asked)},
		WithListBudget(500*time.Millisecond))
	fine := NewPlugin("fine", "", fakeRuntime{abi.ExportListTools: pagedTools(1, 1, 0, &healthy)})
	start := time.Now()
	c := BuildCatalog(t.Context(), []*Plugin{slow, fine}, nil)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("listing took %v with a budget of 500ms", took)
	}
	if _, ok := c.toolIndex["t0_0"]; !ok || len(c.tools) != 1 {
		t.Errorf("tools %d; want the healthy plugin's one", len(c.tools))
	}
}
