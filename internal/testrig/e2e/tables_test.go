package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tableBomb is a plugin, assembled by hand, whose list_tools grows its
// table, which has no maximum, by 4 Gi - 2 elements (32 GiB of references)
// and returns what table.grow returned.
var tableBomb = []byte{
	0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00,
	0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, // type 0: () -> i32
	0x03, 0x02, 0x01, 0x00, // function 0 of type 0
	0x04, 0x04, 0x01, 0x70, 0x00, 0x00, // table 0: funcref, at least 0, no maximum
	0x07, 0x0e, 0x01, 0x0a, 'l', 'i', 's', 't', '_', 't', 'o', 'o', 'l', 's', 0x00, 0x00, // export list_tools
	0x0a, 0x0b, 0x01, 0x09, 0x00, // code of function 0, without locals:
	0xd0, 0x70, 0x41, 0x7e, 0xfc, 0x0f, 0x00, 0x0b, // ref.null func, i32.const -2, table.grow 0, end
}

// TestTableBombIsContained serves a plugin that grows its table by 32 GiB
// beside a healthy plugin: the server lives on, the growth fails inside
// the plugin (table.grow returns -1, which list_tools returns), the server
// holds little memory, and the healthy plugin answers.
func TestTableBombIsContained(t *testing.T) {
	f := newFixture(t, "", "plugins/examples/tools")
	if err := os.WriteFile(filepath.Join(f.plugins, "tables.wasm"), tableBomb, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := f.start(t)
	ctx := ctxT(t)
	cs := srv.session(t, nil)
	names := toolNames(t, cs)
	if !slices.Contains(names, "hash") {
		t.Errorf("tools %q lack the healthy plugin's hash", names)
	}
	if got, isErr, err := hostileCall(ctx, srv.session(t, nil), "hash", map[string]any{"text": "abc"}); err != nil || isErr || !strings.Contains(got, sha256abc) {
		t.Errorf("healthy plugin after the table bomb: %v %v %q", err, isErr, got)
	}
	// Extism reports the return code unsigned: -1 is 4294967295.
	if want := "list_tools returned -1 without an error message"; !strings.Contains(srv.log.String(), want) {
		t.Errorf("server log lacks %q:\n%s", want, srv.log)
	}
	if rss := rssKiB(t, srv.pid) >> 10; rss > 512 {
		t.Errorf("the server holds %d MiB", rss)
	}
}
