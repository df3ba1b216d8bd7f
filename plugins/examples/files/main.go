//go:build wasip1

// Command files is an mcphost plugin that serves the files of a directory
// as MCP resources. The operator mounts a host directory at /data in the
// plugin's sandbox; the plugin lists the files there and reads any of them
// through the resource template file:///{path}.
package main

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcphost/mcphost/abi"
	pdk "github.com/mcphost/mcphost/pdk/go"
)

const (
	// root is the guest path the operator mounts the shared directory at.
	root = "/data"
	// maxListed bounds list_resources; maxVisited bounds the walk behind it.
	maxListed  = 500
	maxVisited = 20000
	// defaultMaxBytes is the largest file read_resource returns unless the
	// max_file_bytes configuration says otherwise.
	defaultMaxBytes = 10 << 20
	fileTemplate    = "file:///{+path}"
)

// main is required by Go but never runs: the host calls the exports after
// _initialize has run the init functions.
func main() {}

func init() {
	pdk.ResourceLister(listFiles)
	pdk.ResourceTemplate(abi.ResourceTemplate{
		URITemplate: fileTemplate,
		Name:        "file",
		Title:       "Shared file",
		Description: "A file under the directory shared with this plugin; path is relative to that directory. " +
			"A directory reads as a listing of its entries.",
	}, readFile)
	pdk.CompleteTemplateVar(fileTemplate, "path", completePath)
}

// fileURI returns the resource URI of a path relative to root.
func fileURI(rel string) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "file:///" + strings.Join(segs, "/")
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }

// listFiles lists regular, non-hidden files under root in lexical order,
// at most maxListed of them. Symbolic links are left out.
func listFiles(ctx *pdk.Context) ([]abi.Resource, error) {
	var out []abi.Resource
	visited := 0
	err := fs.WalkDir(os.DirFS(root), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil // unreadable entry: skip it
		}
		visited++
		if visited > maxVisited || len(out) >= maxListed {
			return fs.SkipAll
		}
		if p == "." {
			return nil
		}
		if hidden(d.Name()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		r := abi.Resource{URI: fileURI(p), Name: p, MimeType: mimeType(p)}
		if info, err := d.Info(); err == nil {
			size := info.Size()
			r.Size = &size
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		ctx.Log(pdk.LevelWarning, "cannot list "+root+": is a directory mounted there?", err.Error())
		return nil, nil
	}
	return out, nil
}

// cleanPath validates a path relative to root taken from a URI: no "..",
// no hidden segments. Empty and "." segments are dropped, so "" is root.
func cleanPath(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", pdk.InvalidParams("invalid path %q", p)
	}
	var segs []string
	for _, s := range strings.Split(p, "/") {
		switch {
		case s == "" || s == ".":
		case s == "..":
			return "", pdk.InvalidParams("path %q leaves the shared directory", p)
		case hidden(s):
			return "", pdk.InvalidParams("path %q names a hidden file", p)
		default:
			segs = append(segs, s)
		}
	}
	return strings.Join(segs, "/"), nil
}

func maxBytes() int64 {
	if v, ok := pdk.Config("max_file_bytes"); ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return defaultMaxBytes
}

func readFile(ctx *pdk.Context, uri string, vars map[string]string) (*abi.ReadResourceResult, error) {
	rel, err := cleanPath(vars["path"])
	if err != nil {
		return nil, err
	}
	full := root
	if rel != "" {
		full += "/" + rel
	}
	info, err := os.Lstat(full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, pdk.ResourceNotFound(uri)
		}
		return nil, err
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return nil, pdk.InvalidParams("%s is a symbolic link; links are not followed", uri)
	case info.IsDir():
		return listDirectory(ctx, uri, rel, full)
	case !info.Mode().IsRegular():
		return nil, pdk.InvalidParams("%s is not a regular file", uri)
	}
	if limit := maxBytes(); info.Size() > limit {
		return nil, pdk.InvalidParams("%s has %d bytes, more than the limit of %d", uri, info.Size(), limit)
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return nil, err
	}
	mime := mimeType(rel)
	text := isText(mime, data)
	ctx.Log(pdk.LevelDebug, "read "+rel, map[string]any{"bytes": len(data), "mimeType": mime, "text": text})
	switch {
	case text && mime == "":
		mime = "text/plain"
	case !text && (mime == "" || strings.HasPrefix(mime, "text/")):
		mime = "application/octet-stream"
	}
	if text {
		return pdk.TextResource(uri, mime, string(data)), nil
	}
	return pdk.BlobResource(uri, mime, data), nil
}

// listDirectory reads a directory as a text listing, one entry a line,
// directories with a trailing slash.
func listDirectory(ctx *pdk.Context, uri, rel, full string) (*abi.ReadResourceResult, error) {
	entries, err := os.ReadDir(full)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	n := 0
	for _, e := range entries {
		if hidden(e.Name()) {
			continue
		}
		b.WriteString(e.Name())
		if e.IsDir() {
			b.WriteByte('/')
		}
		b.WriteByte('\n')
		n++
	}
	ctx.Log(pdk.LevelDebug, "listed /"+rel, map[string]any{"entries": n})
	return pdk.TextResource(uri, "text/plain", b.String()), nil
}

// completePath completes the path variable: the entries of the directory
// typed so far whose names start with the last segment (ignoring case);
// directories end with a slash so that completion can continue into them.
func completePath(_ *pdk.Context, value string, _ map[string]string) []string {
	dir, prefix := path.Split(strings.TrimLeft(value, "/"))
	clean, err := cleanPath(dir)
	if err != nil {
		return nil
	}
	full := root
	if clean != "" {
		full += "/" + clean
		clean += "/"
	}
	entries, err := os.ReadDir(full)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if hidden(name) || !strings.HasPrefix(strings.ToLower(name), strings.ToLower(prefix)) {
			continue
		}
		if e.IsDir() {
			name += "/"
		} else if !e.Type().IsRegular() {
			continue
		}
		out = append(out, clean+name)
	}
	return out
}

// isText reports whether data should be served as text: valid UTF-8
// without NUL bytes, of a textual or unknown type.
func isText(mime string, data []byte) bool {
	if mime != "" && !textual(mime) {
		return false
	}
	sample := data
	if len(sample) > 1<<16 {
		sample = sample[:1<<16]
		// Do not split a UTF-8 sequence at the cut.
		for i := 0; i < utf8.UTFMax && len(sample) > 0 && !utf8.RuneStart(data[len(sample)]); i++ {
			sample = sample[:len(sample)-1]
		}
	}
	for _, c := range sample {
		if c == 0 {
			return false
		}
	}
	return utf8.Valid(sample)
}

func textual(mime string) bool {
	if strings.HasPrefix(mime, "text/") || strings.HasSuffix(mime, "+json") || strings.HasSuffix(mime, "+xml") {
		return true
	}
	switch mime {
	case "application/json", "application/xml", "application/javascript", "application/yaml", "application/toml",
		"application/sql", "application/x-sh", "application/x-ndjson", "image/svg+xml":
		return true
	}
	return false
}

// mimeType guesses a MIME type from the file extension ("" when unknown).
// The standard mime package needs system files WASI does not have.
func mimeType(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := mimeTypes[ext]; ok {
		return t
	}
	switch strings.ToLower(path.Base(name)) {
	case "makefile", "dockerfile", "license", "readme", "changelog", "authors", "go.mod", "go.sum":
		return "text/plain"
	}
	return ""
}

var mimeTypes = map[string]string{
	".txt": "text/plain", ".text": "text/plain", ".log": "text/plain", ".md": "text/markdown", ".markdown": "text/markdown",
	".rst": "text/x-rst", ".adoc": "text/asciidoc", ".csv": "text/csv", ".tsv": "text/tab-separated-values",
	".html": "text/html", ".htm": "text/html", ".css": "text/css", ".xml": "application/xml",
	".json": "application/json", ".jsonl": "application/x-ndjson", ".ndjson": "application/x-ndjson",
	".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml",
	".ini": "text/plain", ".cfg": "text/plain", ".conf": "text/plain", ".env": "text/plain",
	".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript", ".ts": "text/x-typescript",
	".tsx": "text/x-typescript", ".jsx": "text/javascript",
	".go": "text/x-go", ".py": "text/x-python", ".rs": "text/x-rust", ".java": "text/x-java", ".kt": "text/x-kotlin",
	".c": "text/x-c", ".h": "text/x-c", ".cc": "text/x-c++", ".cpp": "text/x-c++", ".hpp": "text/x-c++",
	".cs": "text/x-csharp", ".rb": "text/x-ruby", ".php": "text/x-php", ".swift": "text/x-swift",
	".scala": "text/x-scala", ".lua": "text/x-lua", ".pl": "text/x-perl", ".r": "text/x-r", ".sql": "application/sql",
	".sh": "application/x-sh", ".bash": "application/x-sh", ".zsh": "application/x-sh", ".ps1": "text/plain",
	".proto": "text/plain", ".graphql": "text/plain", ".tf": "text/plain", ".diff": "text/x-diff", ".patch": "text/x-diff",
	".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".bmp": "image/bmp", ".ico": "image/vnd.microsoft.icon", ".tif": "image/tiff", ".tiff": "image/tiff",
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".flac": "audio/flac", ".m4a": "audio/mp4",
	".mp4": "video/mp4", ".webm": "video/webm", ".mov": "video/quicktime",
	".pdf": "application/pdf", ".zip": "application/zip", ".gz": "application/gzip", ".tgz": "application/gzip",
	".tar": "application/x-tar", ".bz2": "application/x-bzip2", ".xz": "application/x-xz", ".7z": "application/x-7z-compressed",
	".wasm": "application/wasm", ".bin": "application/octet-stream", ".exe": "application/octet-stream",
	".doc": "application/msword", ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xls": "application/vnd.ms-excel", ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".ppt": "application/vnd.ms-powerpoint", ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".sqlite": "application/vnd.sqlite3", ".db": "application/octet-stream",
}
