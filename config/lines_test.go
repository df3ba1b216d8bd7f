package config

import (
	"testing"

	"github.com/BurntSushi/toml"
)

func TestIndexLines(t *testing.T) {
	src := `# comment [not.a.table]
top = "x # not a comment" # [not.a.table]

[server]
name = """
[fake]
fake = 1
"""
title = '''also ''not'' = "a key"'''
quoted = """ends with quotes"""""
"page_size" = 3

[ plugins . "my.plugin" ]
list = [
  "a", # comment ]
  "b",
]
after = { a = 1, b = { c = 2 } }

[plugins.files]
limits.memory_mib = 64
'dotted' . "key"= 1

[[plugins.files.mounts]]
host = "a"

[[plugins.files.mounts]]  # second
host = "b"

[[fruit]]
[[fruit.variety]]
name = "x"
[[fruit]]
[[fruit.variety]]
[[fruit.variety]]
name = "y"
[fruit.physical]
color = "red"
esc = "a \" [x] = 1"
last = 1 # no newline after this comment`
	var v map[string]any
	if _, err := toml.Decode(src, &v); err != nil {
		t.Fatalf("test input is not valid TOML: %v", err)
	}
	li := indexLines(src)
	for _, tc := range []struct {
		path keyPath
		line int
	}{
		{keyPath{"top"}, 2},
		{keyPath{"server"}, 4},
		{keyPath{"server", "name"}, 5},
		{keyPath{"fake"}, 0},
		{keyPath{"server", "fake"}, 4}, // falls back to the table
		{keyPath{"server", "title"}, 9},
		{keyPath{"server", "not"}, 4},
		{keyPath{"server", "quoted"}, 10},
		{keyPath{"server", "page_size"}, 11},
		{keyPath{"plugins"}, 13},
		{keyPath{"plugins", "my.plugin"}, 13},
		{keyPath{"plugins", "my.plugin", "list"}, 14},
		{keyPath{"plugins", "my.plugin", "list", "[1]"}, 14},
		{keyPath{"plugins", "my.plugin", "after"}, 18},
		{keyPath{"plugins", "my.plugin", "after", "b", "c"}, 18},
		{keyPath{"plugins", "files"}, 20},
		{keyPath{"plugins", "files", "limits"}, 21},
		{keyPath{"plugins", "files", "limits", "memory_mib"}, 21},
		{keyPath{"plugins", "files", "dotted", "key"}, 22},
		{keyPath{"plugins", "files", "mounts"}, 24},
		{keyPath{"plugins", "files", "mounts", "[0]"}, 24},
		{keyPath{"plugins", "files", "mounts", "[0]", "host"}, 25},
		{keyPath{"plugins", "files", "mounts", "[1]"}, 27},
		{keyPath{"plugins", "files", "mounts", "[1]", "host"}, 28},
		{keyPath{"plugins", "files", "mounts", "[1]", "guest"}, 27},
		{keyPath{"fruit", "[0]", "variety", "[0]", "name"}, 32},
		{keyPath{"fruit", "[1]"}, 33},
		{keyPath{"fruit", "[1]", "variety", "[1]"}, 35},
		{keyPath{"fruit", "[1]", "variety", "[1]", "name"}, 36},
		{keyPath{"fruit", "[1]", "physical", "color"}, 38},
		{keyPath{"fruit", "[1]", "physical", "last"}, 40},
	} {
		if got := li.line(tc.path); got != tc.line {
			t.Errorf("line(%s) = %d, want %d", tc.path, got, tc.line)
		}
	}
}

func TestKeyPathString(t *testing.T) {
	for _, tc := range []struct {
		path keyPath
		want string
	}{
		{keyPath{"server", "name"}, "server.name"},
		{keyPath{"plugins", "files", "mounts", "[0]", "host"}, "plugins.files.mounts[0].host"},
		{keyPath{"plugins", "a b", "x"}, `plugins."a b".x`},
		{keyPath{"plugins", ""}, `plugins.""`},
	} {
		if got := tc.path.String(); got != tc.want {
			t.Errorf("%q.String() = %q, want %q", []string(tc.path), got, tc.want)
		}
	}
}
