package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// config is the validated command line.
type config struct {
	args        []string // as given, for the report
	sizes       []int
	quick       bool
	embeddings  bool
	memsvcBin   string
	mcpBin      string
	skipMCP     bool
	skipPeer    bool
	mcpNotes    int
	mcpSearches int
	peerDir     string
	peerPackage string
	jsonPath    string
	timeout     time.Duration
	memoryQuiet time.Duration // idleness before a memory reading
	seed        uint64
	counts      counts
	// targets and sections configure the targets subcommand.
	targets  *targetScale
	sections map[string]bool
}

// counts is how many operations each section times.
type counts struct {
	store, batch, rawBatch, recall, associate, timeline int
	decay, dream, export, imports, restarts             int
}

// fullCounts and quickCounts are the two profiles.
func fullCounts() counts {
	return counts{store: 200, batch: 30, rawBatch: 10, recall: 200, associate: 200, timeline: 50,
		decay: 10, dream: 10, export: 3, imports: 3, restarts: 3}
}

func quickCounts() counts {
	return counts{store: 20, batch: 5, rawBatch: 3, recall: 20, associate: 20, timeline: 5,
		decay: 2, dream: 2, export: 1, imports: 1, restarts: 1}
}

const (
	dims          = 384 // embedding dimensions with --embeddings
	maxSize       = 1_000_000
	minSize       = 100
	loadBatch     = 1000 // records per request while loading
	batchStoreLen = 100  // records per measured batch store
	rawBatchLen   = 1000 // entries per measured raw batch
	rawSessionLen = 50   // raw entries per journal session
)

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := newFlagSet("memsvc-bench", "Usage: memsvc-bench [flags]\n       memsvc-bench targets [flags]\n       memsvc-bench recall-quality --dataset FILE [flags]\n\n"+
		"Start fresh memsvc servers on temporary directories, load generated corpora and\n"+
		"report latency percentiles, throughput, start-up time and memory per record as\n"+
		"Markdown on stdout; run the same MCP workload against memsvc-mcp and\n"+
		"@modelcontextprotocol/server-memory. Run it from the repository (it builds the\n"+
		"binaries with `go build` unless --memsvc-bin and --mcp-bin name them).\n"+
		"targets measures recall, store, concurrency, consolidation, cold start and MCP\n"+
		"search against their targets and prints a verdict for each; see\n"+
		"`memsvc-bench targets --help`.\n"+
		"recall-quality scores what recall finds on a dataset of conversations; see\n"+
		"`memsvc-bench recall-quality --help`.\n\nFlags:\n", stderr)
	var (
		cfg   = config{args: args}
		sizes = fs.String("sizes", "1000,10000,100000", "comma-separated corpus sizes (curated memories), each from 100 to 1000000")
		seed  = fs.Uint64("seed", 42, "seed of the generated corpus, embeddings and queries")
	)
	fs.BoolVar(&cfg.quick, "quick", false, "time far fewer operations per section (a smoke run, not a measurement)")
	fs.BoolVar(&cfg.embeddings, "embeddings", false, "give every memory a 384-dimension embedding and time vector and hybrid recall")
	cfg.addSharedFlags(fs)
	fs.BoolVar(&cfg.skipMCP, "skip-mcp", false, "skip the MCP comparison altogether")
	fs.BoolVar(&cfg.skipPeer, "skip-peer", false, "run the MCP workload against memsvc-mcp only, not against the npm peer")
	fs.IntVar(&cfg.mcpNotes, "mcp-notes", 0, "notes the MCP workload stores (default 500, 50 with --quick)")
	fs.IntVar(&cfg.mcpSearches, "mcp-searches", 0, "searches the MCP workload runs (default 200, 20 with --quick)")
	fs.DurationVar(&cfg.timeout, "timeout", 2*time.Hour, "bound on the whole run")
	fs.DurationVar(&cfg.memoryQuiet, "memory-quiet", memoryQuiet, "idleness before each memory reading, --quick included (shorter reads memory the server has not yet returned to the OS)")
	if help, err := parseCommandLine(fs, args); help || err != nil {
		return nil, err
	}
	cfg.seed = *seed
	if cfg.memoryQuiet <= 0 {
		return nil, &usageError{fmt.Errorf("--memory-quiet %v: must be positive", cfg.memoryQuiet)}
	}
	var err error
	if cfg.sizes, err = parseSizes(*sizes); err != nil {
		return nil, &usageError{err}
	}
	if cfg.timeout <= 0 {
		return nil, &usageError{fmt.Errorf("--timeout %v: must be positive", cfg.timeout)}
	}
	cfg.counts = fullCounts()
	notes, searches := 500, 200
	if cfg.quick {
		cfg.counts = quickCounts()
		notes, searches = 50, 20
	}
	if cfg.mcpNotes == 0 {
		cfg.mcpNotes = notes
	}
	if cfg.mcpSearches == 0 {
		cfg.mcpSearches = searches
	}
	if cfg.mcpNotes < 1 || cfg.mcpNotes > 100_000 || cfg.mcpSearches < 1 || cfg.mcpSearches > 100_000 {
		return nil, &usageError{fmt.Errorf("--mcp-notes %d, --mcp-searches %d: each must be from 1 to 100000", cfg.mcpNotes, cfg.mcpSearches)}
	}
	if err := cfg.resolvePaths(); err != nil {
		return nil, &usageError{err}
	}
	return &cfg, nil
}

// newFlagSet returns a flag set named name that reports to stderr and
// answers -h with usage followed by the flags.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseCommandLine parses args, where every setting is a flag. help is
// true after -h (the usage has been printed); a wrong flag or a stray
// argument is a usageError.
func parseCommandLine(fs *flag.FlagSet, args []string) (help bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, nil
		}
		return false, &usageError{err}
	}
	if fs.NArg() > 0 {
		return false, &usageError{fmt.Errorf("unexpected argument %q; every setting is a flag", fs.Arg(0))}
	}
	return false, nil
}

// addSharedFlags defines the flags the default run and targets share: the
// binaries to run, where and what the npm peer is, and the JSON file.
func (cfg *config) addSharedFlags(fs *flag.FlagSet) {
	cacheDir, err := os.UserCacheDir()
	if err != nil {
		cacheDir = os.TempDir()
	}
	fs.StringVar(&cfg.memsvcBin, "memsvc-bin", "", "memsvc binary to run (default: go build ./cmd/memsvc)")
	fs.StringVar(&cfg.mcpBin, "mcp-bin", "", "memsvc-mcp binary to run (default: go build ./cmd/memsvc-mcp)")
	fs.StringVar(&cfg.peerDir, "peer-dir", filepath.Join(cacheDir, "memsvc-bench", "npm"), "npm prefix where the peer MCP server is installed when missing")
	fs.StringVar(&cfg.peerPackage, "peer-package", "@modelcontextprotocol/server-memory", "npm package of the peer MCP server")
	fs.StringVar(&cfg.jsonPath, "json", "", "also write the results as JSON to this file")
}

// resolvePaths makes the binaries given and the peer directory absolute,
// and checks that each binary given is a file.
func (cfg *config) resolvePaths() error {
	var err error
	for _, p := range []*string{&cfg.memsvcBin, &cfg.mcpBin} {
		if *p == "" {
			continue
		}
		if *p, err = filepath.Abs(*p); err != nil {
			return err
		}
		if st, err := os.Stat(*p); err != nil || st.IsDir() {
			return fmt.Errorf("binary %s: not a file", *p)
		}
	}
	cfg.peerDir, err = filepath.Abs(cfg.peerDir)
	return err
}

// parseSizes reads "1000,10000" into sizes in increasing order, each once.
func parseSizes(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(strings.ReplaceAll(f, "_", "")))
		if err != nil || n < minSize || n > maxSize {
			return nil, fmt.Errorf("--sizes %q: want comma-separated numbers from %d to %d", s, minSize, maxSize)
		}
		for _, m := range out {
			if m >= n {
				return nil, fmt.Errorf("--sizes %q: give each size once, in increasing order", s)
			}
		}
		out = append(out, n)
	}
	return out, nil
}
