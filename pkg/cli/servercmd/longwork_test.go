package servercmd

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/memory"
)

// backlog is a service whose dream ticks take groups of two entries off a
// backlog of a given size, recording what each tick asked for.
type backlog struct {
	memory.Service
	groups int
	asked  []uint32
}

func (b *backlog) DreamTick(_ context.Context, req *memory.DreamTickRequest) (*memory.DreamTickResponse, error) {
	b.asked = append(b.asked, req.MaxGroups)
	n := min(int(req.MaxGroups), b.groups)
	if !req.DryRun {
		b.groups -= n
	}
	return &memory.DreamTickResponse{GroupsProcessed: uint32(n), RawRecordsProcessed: uint32(2 * n), EpisodicSummariesCreated: uint32(n)}, nil
}

// TestDreamTickInSteps: a large dream-tick is a series of smaller ticks
// that together do what the one tick would (stopping when the backlog is
// done or the groups asked for are processed), counting groups into the
// progress line; the default run and a dry run are one request.
func TestDreamTickInSteps(t *testing.T) {
	start := time.Unix(0, 0)
	cases := []struct {
		name    string
		backlog int
		max     uint32
		dry     bool
		asked   []uint32
		groups  uint32
	}{
		{"default", 1000, 10, false, []uint32{10}, 10},
		{"backlog ends early", 37, 100, false, []uint32{10, 10, 10, 10}, 37},
		{"max reached", 5000, 1000, false, slices.Repeat([]uint32{20}, 50), 1000},
		{"uneven last step", 5000, 1010, false, append(slices.Repeat([]uint32{21}, 48), 2), 1010},
		{"dry run", 5000, 1000, true, []uint32{1000}, 1000},
		{"empty backlog", 0, 500, false, []uint32{10}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			svc := &backlog{groups: c.backlog}
			var line bytes.Buffer
			bar := cli.NewProgress(&line, true, cli.ProgressOptions{Label: "dream-tick", Noun: "groups", Total: int64(c.max), Now: func() time.Time { return start }})
			req := memory.DefaultDreamTickRequest()
			req.MaxGroups, req.DryRun = c.max, c.dry
			resp, err := dreamTick(context.Background(), svc, req, bar)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(svc.asked, c.asked) {
				t.Errorf("ticks asked for %v groups, want %v", svc.asked, c.asked)
			}
			if resp.GroupsProcessed != c.groups || resp.RawRecordsProcessed != 2*c.groups || resp.EpisodicSummariesCreated != c.groups {
				t.Errorf("answer %+v, want %d groups", resp, c.groups)
			}
			if want := cli.FormatCount(int64(c.groups)) + "/"; !strings.Contains(bar.Line(start), want) {
				t.Errorf("progress line %q does not count %d groups", bar.Line(start), c.groups)
			}
		})
	}
}
