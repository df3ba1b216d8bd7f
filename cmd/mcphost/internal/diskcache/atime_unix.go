//go:build linux || darwin

package diskcache

import (
	"io/fs"
	"syscall"
	"time"
)

// accessTime returns the file's last access time, when the system keeps one.
func accessTime(info fs.FileInfo) (time.Time, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	ts := atim(st)
	return time.Unix(ts.Unix()), true
}
