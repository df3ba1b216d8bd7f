// Package diskcache lists and prunes mcphost's on-disk caches (the wazero
// compilation cache, and any cache of files kept under one folder): every
// regular file below the folder is an entry, and an entry was last used
// when it was last read or written (the later of its access and
// modification times; with the common relatime mount option, reads update
// the access time at most once a day, so the order is exact to the day).
package diskcache

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Entry is one file of a cache.
type Entry struct {
	// Name is the file's path relative to the cache folder, with slashes.
	Name string
	// Bytes is its size.
	Bytes int64
	// Used is when it was last read or written.
	Used time.Time
}

// List returns the entries of the cache in dir, most recently used first,
// and their total size. A missing dir is an empty cache.
func List(dir string) ([]Entry, int64, error) {
	var entries []Entry
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == dir {
				return fs.SkipAll
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		entries = append(entries, Entry{Name: filepath.ToSlash(rel), Bytes: info.Size(), Used: lastUsed(info)})
		total += info.Size()
		return nil
	})
	slices.SortStableFunc(entries, func(a, b Entry) int { return b.Used.Compare(a.Used) })
	return entries, total, err
}

// lastUsed is the later of a file's access and modification times.
func lastUsed(info fs.FileInfo) time.Time {
	used := info.ModTime()
	if at, ok := accessTime(info); ok && at.After(used) {
		used = at
	}
	return used
}

// Prune removes the least recently used entries of the cache in dir until
// the rest take at most maxBytes, and the folders it empties, and returns
// what it removed, least recently used first.
func Prune(dir string, maxBytes int64) ([]Entry, error) {
	entries, total, err := List(dir)
	if err != nil {
		return nil, err
	}
	var removed []Entry
	for i := len(entries) - 1; i >= 0 && total > maxBytes; i-- {
		e := entries[i]
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(e.Name))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, err
		}
		removed = append(removed, e)
		total -= e.Bytes
		removeEmptyParents(dir, filepath.Dir(filepath.Join(dir, filepath.FromSlash(e.Name))))
	}
	return removed, nil
}

// removeEmptyParents removes folder and its parents up to, not including,
// dir, while they are empty.
func removeEmptyParents(dir, folder string) {
	for folder != dir && len(folder) > len(dir) {
		if os.Remove(folder) != nil { // not empty
			return
		}
		folder = filepath.Dir(folder)
	}
}

// Total returns the size of entries.
func Total(entries []Entry) int64 {
	var n int64
	for _, e := range entries {
		n += e.Bytes
	}
	return n
}
