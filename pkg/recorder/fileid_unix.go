//go:build unix

package recorder

import (
	"io/fs"
	"syscall"
)

// fileID is the device and inode of a file.
func fileID(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino) // the field types differ between systems
	}
	return 0, 0
}
