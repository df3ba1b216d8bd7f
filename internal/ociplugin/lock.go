package ociplugin

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// lockHeader opens every lock file.
const lockHeader = "# mcphost.lock: the digest each OCI plugin source's tag was resolved to.\n" +
	"# mcphost plugin update NAME moves a pin; keep this file under version control.\n"

// Lock is a lock file, mcphost.lock: the digest each tagged OCI source was
// resolved to, one "SOURCE DIGEST" line each, like go.sum. Its methods are
// safe for concurrent use.
type Lock struct {
	path string
	mu   sync.Mutex
}

// OpenLock returns the lock file at path, which need not exist yet.
func OpenLock(path string) *Lock { return &Lock{path: path} }

// Path returns the lock file's path.
func (l *Lock) Path() string { return l.path }

// Get returns the digest source is pinned to, "" when it is not.
func (l *Lock) Get(source string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	pins, err := l.read()
	return pins[source], err
}

// Set pins source to digest, rewriting the file atomically.
func (l *Lock) Set(source, digest string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	pins, err := l.read()
	if err != nil {
		return err
	}
	if pins[source] == digest {
		return nil
	}
	pins[source] = digest
	var b bytes.Buffer
	b.WriteString(lockHeader)
	for _, s := range slices.Sorted(maps.Keys(pins)) {
		fmt.Fprintf(&b, "%s %s\n", s, pins[s])
	}
	tmp, err := os.CreateTemp(filepath.Dir(l.path), ".mcphost.lock-")
	if err != nil {
		return fmt.Errorf("lock file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("lock file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("lock file: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("lock file: %w", err)
	}
	if err := os.Rename(tmp.Name(), l.path); err != nil {
		return fmt.Errorf("lock file: %w", err)
	}
	return nil
}

// read returns the pins of the file, none when it does not exist.
func (l *Lock) read() (map[string]string, error) {
	pins := map[string]string{}
	data, err := os.ReadFile(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		return pins, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || !strings.HasPrefix(f[1], "sha256:") {
			return nil, fmt.Errorf("%s:%d: want \"SOURCE sha256:DIGEST\", got %q", l.path, n, line)
		}
		pins[f[0]] = f[1]
	}
	return pins, nil
}
