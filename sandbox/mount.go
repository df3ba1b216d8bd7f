package sandbox

import (
	"github.com/tetratelabs/wazero"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

// fsConfig returns the wazero file system of the mounts.
//
// wazero rejects guest paths that climb out of a mount with "..", but lets
// the guest create symbolic links with any relative target, which the host
// then follows: a writable mount would let the plugin link to "../../.." and
// read or write the whole host file system. So no mount lets the guest
// create symbolic links. Links already in a mounted directory are followed,
// wherever they point: mount only directories whose links you trust.
func fsConfig(mounts []Mount) wazero.FSConfig {
	cfg := wazero.NewFSConfig()
	for _, m := range mounts {
		var dir experimentalsys.FS = noSymlinks{sysfs.DirFS(m.HostPath)}
		if m.ReadOnly {
			dir = &sysfs.ReadFS{FS: dir}
		}
		cfg = cfg.(sysfs.FSConfig).WithSysFSMount(dir, m.GuestPath)
	}
	return cfg
}

// noSymlinks is a file system in which symbolic links cannot be created.
type noSymlinks struct{ experimentalsys.FS }

// Symlink implements experimentalsys.FS.
func (noSymlinks) Symlink(string, string) experimentalsys.Errno { return experimentalsys.EPERM }
