package host

import (
	"context"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

func TestCatalogSizeCountsWhatClientsSee(t *testing.T) {
	a := toolsPlugin("a", abi.Tool{Name: "one", InputSchema: objectSchema}, abi.Tool{Name: "two", InputSchema: objectSchema})
	b := toolsPlugin("b", abi.Tool{Name: "one", InputSchema: objectSchema}, abi.Tool{Name: "bad name!", InputSchema: objectSchema})
	got := BuildCatalog(context.Background(), []*Plugin{a, b}, nil).Size()
	if want := (CatalogSize{Plugins: 2, Tools: 3}); got != want {
		t.Errorf("Size() = %+v, want %+v (b's one exposed as b_one, its bad name left out)", got, want)
	}
}
