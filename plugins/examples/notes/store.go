//go:build wasip1

package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

// The note store: one Markdown file per note, /notes/<name>.md, whose first
// line is "# <title>" followed by a blank line and the body. The files are
// ordinary Markdown, so the operator can read and edit them on the host.
//
// Several instances of the plugin may run at once (the host pools them),
// so nothing is cached between calls: the directory is the only state.

// root is the guest directory the operator mounts read-write.
const root = "/notes"

// maxNotes bounds list results; maxNoteBytes the size of one note.
const (
	maxNotes     = 1000
	maxNoteBytes = 1 << 20
)

// namePattern is the rule for note names: they are file names and URI
// path segments, so keep them plain.
var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Note is one note as the tools report it.
type Note struct {
	Name     string `json:"name" description:"The note's name (its file is <name>.md)"`
	Title    string `json:"title"`
	URI      string `json:"uri" description:"The note as a resource: note:///<name>"`
	Bytes    int64  `json:"bytes"`
	Modified string `json:"modified,omitempty" description:"Last change, RFC 3339"`
}

func noteURI(name string) string  { return "note:///" + name }
func notePath(name string) string { return root + "/" + name + ".md" }

func checkName(name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("invalid note name %q: use 1-64 lower-case letters, digits, '-' and '_', starting with a letter or digit", name)
	}
	return nil
}

// slug derives a note name from a title: lower-case letters and digits,
// other runs of characters become one '-'.
func slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
		if b.Len() >= 64 {
			break
		}
	}
	return strings.TrimRight(b.String()[:min(b.Len(), 64)], "-")
}

// render is the file content of a note.
func render(title, body string) string {
	return "# " + title + "\n\n" + strings.TrimRight(body, "\n") + "\n"
}

// parse splits a note file into title and body; a file that does not
// start with "# " has the note's name as its title.
func parse(name, content string) (title, body string) {
	first, rest, _ := strings.Cut(content, "\n")
	if t, ok := strings.CutPrefix(first, "# "); ok && strings.TrimSpace(t) != "" {
		return strings.TrimSpace(t), strings.TrimLeft(rest, "\n")
	}
	return name, content
}

// errMissingMount explains a store that is not there.
var errMissingMount = errors.New("the note store " + root + " is not available: the operator must mount a writable host directory there " +
	"([[plugins.notes.mounts]] with guest = \"/notes\" and mode = \"rw\")")

// readNote reads a note; fs.ErrNotExist when there is none.
func readNote(name string) (Note, string, error) {
	if err := checkName(name); err != nil {
		return Note{}, "", err
	}
	info, err := os.Stat(notePath(name))
	if err != nil {
		if _, rerr := os.Stat(root); rerr != nil {
			return Note{}, "", errMissingMount
		}
		return Note{}, "", err
	}
	if !info.Mode().IsRegular() {
		return Note{}, "", fmt.Errorf("note %q is not a regular file", name)
	}
	if info.Size() > maxNoteBytes {
		return Note{}, "", fmt.Errorf("note %q has %d bytes, more than %d", name, info.Size(), maxNoteBytes)
	}
	data, err := os.ReadFile(notePath(name))
	if err != nil {
		return Note{}, "", err
	}
	title, _ := parse(name, string(data))
	return describe(name, title, info), string(data), nil
}

func describe(name, title string, info fs.FileInfo) Note {
	n := Note{Name: name, Title: title, URI: noteURI(name), Bytes: info.Size()}
	if t := info.ModTime(); !t.IsZero() {
		n.Modified = t.UTC().Format(time.RFC3339)
	}
	return n
}

// listNotes lists the notes in order of name.
func listNotes() ([]Note, error) {
	if _, err := os.Stat(root); err != nil {
		return nil, errMissingMount
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []Note
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || !namePattern.MatchString(name) || !e.Type().IsRegular() {
			continue // hidden temporaries, other files
		}
		n, _, err := readNote(name)
		if err != nil {
			continue // removed meanwhile, or unreadable
		}
		out = append(out, n)
		if len(out) == maxNotes {
			break
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// writeNote stores a note. Without replace it fails when the note exists
// (O_EXCL, so two concurrent calls cannot both create it); with replace it
// writes a temporary file and renames it over the note, so readers never
// see half a note. It reports whether a note was replaced.
func writeNote(name, title, body string, replace bool) (Note, bool, error) {
	content := render(title, body)
	if len(content) > maxNoteBytes {
		return Note{}, false, fmt.Errorf("the note would have %d bytes, more than %d", len(content), maxNoteBytes)
	}
	if _, err := os.Stat(root); err != nil {
		return Note{}, false, errMissingMount
	}
	path := notePath(name)
	replaced := false
	if !replace {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return Note{}, false, fmt.Errorf("a note named %q already exists; pass replace=true to overwrite it, or choose another name", name)
		}
		if err != nil {
			return Note{}, false, err
		}
		_, err = f.WriteString(content)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return Note{}, false, err
		}
	} else {
		if _, err := os.Stat(path); err == nil {
			replaced = true
		}
		tmp := root + "/." + name + "." + randomHex() + ".tmp"
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			os.Remove(tmp)
			return Note{}, false, err
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return Note{}, false, err
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		return Note{}, false, err
	}
	return describe(name, title, info), replaced, nil
}

func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
