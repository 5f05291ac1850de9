package servercmd

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/cli"
)

// quietFlag adds --quiet to a command that shows progress.
func quietFlag(fs *ff.FlagSet) *bool {
	return fs.BoolLong("quiet", "show no progress line (it is shown only when stdout and stderr are terminals)")
}

// progress returns the progress line of a long command: on stderr when
// both output streams are terminals and --quiet was not given, else nil
// (which draws nothing).
func (r *root) progress(quiet bool, o cli.ProgressOptions) *cli.Progress {
	return cli.NewProgress(r.stderr, cli.ShowProgress(r.stdout, r.stderr, quiet), o)
}

// archiveRecords reads the header of the archive at path and returns the
// number of records it declares (curated and raw), so that an import can
// say how many it skipped. The import itself verifies the whole archive.
// checkUnencrypted refuses, before anything is opened or derived, an
// encrypted archive given without a passphrase, saying which flag to add.
func checkUnencrypted(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open archive: %w", err)
	}
	defer f.Close()
	prefix := make([]byte, archive.DetectLen)
	n, err := io.ReadFull(f, prefix)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read archive %s: %w", path, err)
	}
	if archive.IsEncrypted(prefix[:n]) {
		return fmt.Errorf("archive %s: %w; pass --decryption-key-stdin (or --decryption-key)", path, archive.ErrNeedKey)
	}
	return nil
}

func archiveRecords(path, passphrase string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("open archive: %w", err)
	}
	defer f.Close()
	var pass []byte
	if passphrase != "" {
		pass = []byte(passphrase)
	}
	ar, err := archive.NewReader(f, archive.ReaderOptions{Passphrase: pass})
	if errors.Is(err, archive.ErrNeedKey) {
		return 0, fmt.Errorf("archive %s: %w; pass --decryption-key-stdin (or --decryption-key)", path, err)
	}
	if err != nil {
		return 0, fmt.Errorf("archive %s: %w", path, err)
	}
	return ar.Header().Records(), nil
}
