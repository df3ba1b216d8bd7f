package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tetratelabs/wazero"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
)

// fsConfig returns the wazero file system of the mounts.
//
// wazero rejects guest paths that climb out of a mount with "..", but lets
// the guest create symbolic links with any relative target, which the host
// then follows: a writable mount would let the plugin link to "../../.." and
// read or write the whole host file system. So no mount lets the guest
// create symbolic links. Links already in a mounted directory (the host
// put them there) are followed only while they resolve inside the mount:
// every path the guest uses is resolved on the host first, and one that
// leads out of the mount fails with EACCES.
func fsConfig(mounts []Mount) wazero.FSConfig {
	cfg := wazero.NewFSConfig()
	for _, m := range mounts {
		root := m.HostPath
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
		var dir experimentalsys.FS = contained{FS: sysfs.DirFS(root), root: root}
		if m.ReadOnly {
			dir = &sysfs.ReadFS{FS: dir}
		}
		cfg = cfg.(sysfs.FSConfig).WithSysFSMount(dir, m.GuestPath)
	}
	return cfg
}

// contained is a host directory in which symbolic links cannot be created,
// and whose existing links are followed only inside it.
type contained struct {
	experimentalsys.FS
	root string // absolute, symbolic links resolved
}

// maxLinks bounds the symbolic links followed in resolving one path.
const maxLinks = 40

// inside returns EACCES when the guest path p, relative to the root, leads
// out of the root: through a link in one of its directories, or, when
// follow is set, through its final component being a link. It resolves p
// the way the kernel will, component by component, following links. A
// missing component is left for the operation to report, unless the
// directory it would be in is outside the root (a dangling link's target
// that O_CREAT would create).
func (c contained) inside(p string, follow bool) experimentalsys.Errno {
	todo := strings.Split(filepath.ToSlash(p), "/")
	cur := c.root
	links := 0
	for len(todo) > 0 {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		st, err := os.Lstat(next)
		if err != nil {
			if !within(cur, c.root) {
				return experimentalsys.EACCES
			}
			return 0 // missing: the operation reports it, or creates it inside
		}
		if st.Mode()&fs.ModeSymlink == 0 || len(todo) == 0 && !follow {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return experimentalsys.ELOOP
		}
		target, err := os.Readlink(next)
		if err != nil {
			return experimentalsys.EACCES
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
	}
	if !within(cur, c.root) {
		return experimentalsys.EACCES
	}
	return 0
}

// within reports whether path is root or under it.
func within(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

func (c contained) OpenFile(path string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if errno := c.inside(path, flag&experimentalsys.O_NOFOLLOW == 0); errno != 0 {
		return nil, errno
	}
	return c.FS.OpenFile(path, flag, perm)
}

func (c contained) Lstat(path string) (sys.Stat_t, experimentalsys.Errno) {
	if errno := c.inside(path, false); errno != 0 {
		return sys.Stat_t{}, errno
	}
	return c.FS.Lstat(path)
}

func (c contained) Stat(path string) (sys.Stat_t, experimentalsys.Errno) {
	if errno := c.inside(path, true); errno != 0 {
		return sys.Stat_t{}, errno
	}
	return c.FS.Stat(path)
}

func (c contained) Mkdir(path string, perm fs.FileMode) experimentalsys.Errno {
	if errno := c.inside(path, false); errno != 0 {
		return errno
	}
	return c.FS.Mkdir(path, perm)
}

func (c contained) Chmod(path string, perm fs.FileMode) experimentalsys.Errno {
	if errno := c.inside(path, true); errno != 0 {
		return errno
	}
	return c.FS.Chmod(path, perm)
}

func (c contained) Rename(from, to string) experimentalsys.Errno {
	if errno := c.inside(from, false); errno != 0 {
		return errno
	}
	if errno := c.inside(to, false); errno != 0 {
		return errno
	}
	return c.FS.Rename(from, to)
}

func (c contained) Rmdir(path string) experimentalsys.Errno {
	if errno := c.inside(path, false); errno != 0 {
		return errno
	}
	return c.FS.Rmdir(path)
}

func (c contained) Unlink(path string) experimentalsys.Errno {
	if errno := c.inside(path, false); errno != 0 {
		return errno
	}
	return c.FS.Unlink(path)
}

func (c contained) Link(oldName, newName string) experimentalsys.Errno {
	if errno := c.inside(oldName, false); errno != 0 {
		return errno
	}
	if errno := c.inside(newName, false); errno != 0 {
		return errno
	}
	return c.FS.Link(oldName, newName)
}

// Symlink implements experimentalsys.FS: the guest may create no links.
func (contained) Symlink(string, string) experimentalsys.Errno { return experimentalsys.EPERM }

func (c contained) Readlink(path string) (string, experimentalsys.Errno) {
	if errno := c.inside(path, false); errno != 0 {
		return "", errno
	}
	return c.FS.Readlink(path)
}

func (c contained) Utimens(path string, atim, mtim int64) experimentalsys.Errno {
	if errno := c.inside(path, true); errno != 0 {
		return errno
	}
	return c.FS.Utimens(path, atim, mtim)
}
