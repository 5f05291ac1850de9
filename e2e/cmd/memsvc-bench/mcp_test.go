package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// builtDir holds memsvc and memsvc-mcp, built once for the tests that
// run them; TestMain removes it.
var (
	buildOnce sync.Once
	builtDir  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		_ = os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

// binaries builds memsvc and memsvc-mcp (once per test binary, bounded in
// time) and returns their paths.
func binaries(t *testing.T) (memsvcBin, mcpBin string) {
	t.Helper()
	buildOnce.Do(func() {
		builtDir, buildErr = os.MkdirTemp("", "memsvc-bench-test-bin-")
		if buildErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", "build", "-o", builtDir+string(os.PathSeparator),
			"memsvc.dev/memsvc/cmd/memsvc", "memsvc.dev/memsvc/cmd/memsvc-mcp").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(builtDir, "memsvc"), filepath.Join(builtDir, "memsvc-mcp")
}

// testBench is a bench for a small MCP workload whose scratch directory,
// children and log live as long as the test.
func testBench(t *testing.T, memsvcBin, mcpBin string) *bench {
	t.Helper()
	return benchFor(t, &config{
		memsvcBin: memsvcBin, mcpBin: mcpBin, mcpNotes: 12, mcpSearches: 8, seed: 7,
		peerDir: filepath.Join(t.TempDir(), "npm"), peerPackage: "@modelcontextprotocol/server-memory",
	})
}

// benchFor is a bench for cfg whose scratch directory (under a TMPDIR of
// the test's own), children and log live as long as the test.
func benchFor(t *testing.T, cfg *config) *bench {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	b, err := newBench(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.close)
	return b
}

// memsvcMCPPeer returns a peer starter for b that runs a second
// memsvc-mcp, called name and of version "test-peer", over its own memsvc
// server on loopback. b.close kills that server with the other children;
// its data directory is removed with the scratch directory after that.
func memsvcMCPPeer(b *bench, memsvcBin, mcpBin, name string) func(ctx context.Context, dir string) (*peerServer, error) {
	return func(ctx context.Context, dir string) (*peerServer, error) {
		srv, err := startServer(ctx, b.kids, memsvcBin, filepath.Join(dir, "data"), dir)
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(mcpBin, "--server-url", srv.url())
		cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
		tg := memsvcTarget()
		tg.name = name
		return &peerServer{cmd: cmd, target: tg, version: "test-peer"}, nil
	}
}

// TestMCPComparisonAgainstStdioPeer runs the comparison with a second
// memsvc-mcp, over its own memsvc server on loopback, as the peer: both
// runs are reported, the ratios are ours over the peer's, and the report
// has both servers' rows and the ratio line.
func TestMCPComparisonAgainstStdioPeer(t *testing.T) {
	memsvcBin, mcpBin := binaries(t)
	b := testBench(t, memsvcBin, mcpBin)
	const peerName = "second-memsvc-mcp"
	b.peer = memsvcMCPPeer(b, memsvcBin, mcpBin, peerName)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := b.runMCP(ctx); err != nil {
		t.Fatal(err)
	}

	rep := b.result.MCP
	if rep == nil || len(rep.Servers) != 2 || rep.PeerSkipped != "" {
		t.Fatalf("MCP report %+v", rep)
	}
	ours, peer := rep.Servers[0], rep.Servers[1]
	if ours.Name != "memsvc-mcp" || peer.Name != peerName || peer.Version != "test-peer" || ours.Version == "" {
		t.Errorf("servers %q %q, versions %q %q", ours.Name, peer.Name, ours.Version, peer.Version)
	}
	for _, s := range rep.Servers {
		if s.Store.Ops != 12 || s.Search.Ops != 8 || s.Store.Throughput <= 0 || s.Search.Throughput <= 0 || s.StartupMs <= 0 {
			t.Errorf("%s: store %+v, search %+v, start-up %v ms", s.Name, s.Store, s.Search, s.StartupMs)
		}
		if s.HitRate < 0 || s.HitRate > 1 {
			t.Errorf("%s: hit rate %v", s.Name, s.HitRate)
		}
	}
	wantStore, wantSearch := ours.Store.Throughput/peer.Store.Throughput, ours.Search.Throughput/peer.Search.Throughput
	if rep.StoreRatio != wantStore || rep.SearchRatio != wantSearch || math.IsInf(rep.StoreRatio, 0) || math.IsNaN(rep.SearchRatio) {
		t.Errorf("ratios %v %v, want %v %v", rep.StoreRatio, rep.SearchRatio, wantStore, wantSearch)
	}

	md := b.result.markdown()
	for _, want := range []string{
		"| memsvc-mcp | " + ours.Version + " | ",
		"| " + peerName + " | test-peer | ",
		" | store (store) | 12 | ", " | search (recall) | 8 | ",
		fmt.Sprintf("Ratio memsvc-mcp / %s: store throughput %.2f×", peerName, rep.StoreRatio),
		fmt.Sprintf("search throughput %.2f×", rep.SearchRatio),
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if n := strings.Count(md, " | store (store) | 12 | "); n != 2 {
		t.Errorf("%d store rows, want one per server:\n%s", n, md)
	}
	if strings.Contains(md, "The peer did not run") {
		t.Errorf("the report says the peer did not run:\n%s", md)
	}
}

// TestMCPPeerSkippedWithoutNPM: with no npm on PATH and the peer not
// installed, the comparison still runs memsvc-mcp and reports why the
// peer is missing; the run does not fail.
func TestMCPPeerSkippedWithoutNPM(t *testing.T) {
	memsvcBin, mcpBin := binaries(t) // built before PATH loses go
	b := testBench(t, memsvcBin, mcpBin)
	t.Setenv("PATH", t.TempDir())
	if _, err := exec.LookPath("npm"); err == nil {
		t.Fatal("npm still found on the emptied PATH")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := b.runMCP(ctx); err != nil {
		t.Fatalf("a missing npm failed the run: %v", err)
	}
	rep := b.result.MCP
	const why = "@modelcontextprotocol/server-memory not compared: npm is not installed, so the registry cannot be reached"
	if rep.PeerSkipped != why {
		t.Errorf("PeerSkipped %q, want %q", rep.PeerSkipped, why)
	}
	if len(rep.Servers) != 1 || rep.Servers[0].Name != "memsvc-mcp" || rep.StoreRatio != 0 || rep.SearchRatio != 0 {
		t.Errorf("MCP report %+v", rep)
	}
	md := b.result.markdown()
	if !strings.Contains(md, "The peer did not run: "+why+".") || strings.Contains(md, "Ratio ") {
		t.Errorf("report:\n%s", md)
	}
	if _, err := os.Stat(b.cfg.peerDir); !os.IsNotExist(err) {
		t.Errorf("peer directory created without npm: %v", err)
	}
}

// fakeNPM puts first on PATH an npm that runs script (sh) with the
// arguments npm would get; the rest of PATH stays for the commands the
// script uses.
func fakeNPM(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "npm"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestEnsurePeer covers what npm can do to the peer install without the
// network: refuse for lack of a registry (skip), fail otherwise (error),
// or install a package whose "bin" names the program to run.
func TestEnsurePeer(t *testing.T) {
	newB := func(t *testing.T) *bench {
		return &bench{cfg: &config{peerDir: filepath.Join(t.TempDir(), "npm"), peerPackage: "fake-peer"}, log: io.Discard, begin: time.Now()}
	}
	t.Run("registry unreachable", func(t *testing.T) {
		fakeNPM(t, "echo 'npm error code ENOTFOUND' >&2\necho 'npm error request to https://registry.npmjs.org/fake-peer failed' >&2\nexit 1\n")
		_, _, err := newB(t).ensurePeer(t.Context())
		skip, ok := err.(*skipError)
		if !ok || !strings.Contains(skip.msg, "fake-peer not compared: npm cannot reach the registry (npm error request to https://registry.npmjs.org/fake-peer failed)") {
			t.Fatalf("got %T %v, want a skip naming the registry failure", err, err)
		}
	})
	t.Run("other npm failure", func(t *testing.T) {
		fakeNPM(t, "echo 'npm error code E404: fake-peer is not in this registry' >&2\nexit 1\n")
		_, _, err := newB(t).ensurePeer(t.Context())
		if _, ok := err.(*skipError); ok || err == nil || !strings.Contains(err.Error(), "npm install") || !strings.Contains(err.Error(), "E404") {
			t.Fatalf("got %T %v, want an npm install error with npm's output", err, err)
		}
	})
	for _, bin := range []struct{ name, json, want string }{
		{"bin as a path", `"dist/index.js"`, "dist/index.js"},
		{"bin as a map", `{"zz-peer":"dist/zz.js","fake-peer":"dist/index.js"}`, "dist/index.js"},
	} {
		t.Run(bin.name, func(t *testing.T) {
			// npm install --prefix DIR ... PACKAGE: $3 is the prefix.
			fakeNPM(t, `mkdir -p "$3/node_modules/fake-peer" && printf '%s' '{"name":"fake-peer","version":"1.2.3","bin":`+bin.json+`}' > "$3/node_modules/fake-peer/package.json"`+"\n")
			b := newB(t)
			entry, version, err := b.ensurePeer(t.Context())
			want := filepath.Join(b.cfg.peerDir, "node_modules", "fake-peer", filepath.FromSlash(bin.want))
			if err != nil || entry != want || version != "1.2.3" {
				t.Fatalf("got %q %q %v, want %q 1.2.3", entry, version, err, want)
			}
			// Installed now: a second call does not run npm at all.
			t.Setenv("PATH", t.TempDir())
			if entry2, _, err := b.ensurePeer(t.Context()); err != nil || entry2 != want {
				t.Fatalf("second call: %q %v", entry2, err)
			}
		})
	}
}
