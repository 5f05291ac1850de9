package mcpcmd_test

import (
	"os"
	"path/filepath"
	"testing"

	"memsvc.dev/memsvc/pkg/cli/mcpcmd"
)

// TestExportDir: the proxy's export directory is --export-dir (made
// absolute), else memsvc/exports under $XDG_DATA_HOME, else under
// ~/.local/share.
func TestExportDir(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		flag    string
		environ []string
		want    string
	}{
		{"flag", "/srv/backups", []string{"HOME=/home/u"}, "/srv/backups"},
		{"relative flag", "backups", []string{"HOME=/home/u"}, filepath.Join(wd, "backups")},
		{"XDG_DATA_HOME", "", []string{"HOME=/home/u", "XDG_DATA_HOME=/data/u"}, "/data/u/memsvc/exports"},
		{"relative XDG_DATA_HOME is ignored", "", []string{"HOME=/home/u", "XDG_DATA_HOME=data"}, "/home/u/.local/share/memsvc/exports"},
		{"HOME", "", []string{"HOME=/home/u"}, "/home/u/.local/share/memsvc/exports"},
		{"nothing", "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := mcpcmd.Flags{ServerURL: "http://127.0.0.1:8420", LogLevel: "info", ExportDir: tc.flag}
			opts, err := f.Options(tc.environ)
			if err != nil {
				t.Fatal(err)
			}
			if opts.ExportDir != tc.want {
				t.Errorf("export directory %q, want %q", opts.ExportDir, tc.want)
			}
		})
	}
}
