package servercmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/memory"
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

// archiveRecords reads the header of the archive at path and returns the
// number of records it declares (curated and raw), so that an import can
// say how many it skipped. The import itself verifies the whole archive.
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

// A dream-tick over many groups is sent as a series of smaller ticks so
// that its progress line moves: about dreamSteps requests, of at least
// dreamStepMin groups each (so the default run of 10 is one request).
const (
	dreamSteps   = 50
	dreamStepMin = 10
)

// dreamTick runs req as a series of ticks of at most a step of groups
// each, adding every answer to the total and the count to bar, until
// req.MaxGroups groups are processed or a tick finds fewer groups than it
// asked for (the backlog is done). Each tick takes the oldest pending
// groups, as one large tick would, so the series does the same work. A
// dry run writes nothing, so a second tick would find the same groups:
// it is one request.
func dreamTick(ctx context.Context, svc memory.Service, req memory.DreamTickRequest, bar *cli.Progress) (*memory.DreamTickResponse, error) {
	step := max(dreamStepMin, (req.MaxGroups+dreamSteps-1)/dreamSteps)
	if req.DryRun {
		step = req.MaxGroups
	}
	total := &memory.DreamTickResponse{}
	for left := req.MaxGroups; left > 0; {
		one := req
		one.MaxGroups = min(step, left)
		resp, err := svc.DreamTick(ctx, &one)
		if err != nil {
			return nil, err
		}
		total.GroupsProcessed += resp.GroupsProcessed
		total.RawRecordsProcessed += resp.RawRecordsProcessed
		total.EpisodicSummariesCreated += resp.EpisodicSummariesCreated
		total.SemanticNodesCreated += resp.SemanticNodesCreated
		bar.Add(int64(resp.GroupsProcessed))
		if resp.GroupsProcessed < one.MaxGroups || req.DryRun {
			break
		}
		left -= resp.GroupsProcessed
	}
	return total, nil
}
