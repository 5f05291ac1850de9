package config

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// key declares one configuration key.
type key struct {
	name  string
	doc   string
	field func(*Config) any // pointer to the Config field
	def   any               // default value; nil leaves an optional key unset
	// example is shown (commented out) in the example file for keys whose
	// default is unset.
	example string
	// positive, for an unsigned field, refuses 0 and says what is wanted
	// instead: "want <positive> (got 0)".
	positive string
	// check returns a message when the value is not acceptable.
	check  func(*Config) string
	secret bool // the value is never shown in messages
	// live keys are applied by a running serve when its configuration is
	// reloaded (Diff); the others need a restart.
	live bool
}

func lookup(name string) *key {
	for i := range keys {
		if keys[i].name == name {
			return &keys[i]
		}
	}
	return nil
}

// Live reports whether a running serve applies key name when its
// configuration is reloaded, without a restart.
func Live(name string) bool {
	k := lookup(name)
	return k != nil && k.live
}

// Keys returns the names of every configuration key, in table order.
func Keys() []string {
	out := make([]string, len(keys))
	for i := range keys {
		out[i] = keys[i].name
	}
	return out
}

var (
	logLevels  = []string{"trace", "debug", "info", "warn", "error"}
	logFormats = []string{"pretty", "json"}
)

// keys is the configuration reference. Order is the order of the example
// file.
var keys = []key{
	{
		name:  "data_dir",
		doc:   "Directory of the embedded database. Exactly one memsvc process may use it at a time. A leading ~/ is expanded.",
		field: func(c *Config) any { return &c.DataDir },
		def:   "./data",
		check: func(c *Config) string { return notBlank(c.DataDir) },
	},
	{
		name: "max_import_bytes",
		doc: "Largest archive (after decryption) an import accepts, over HTTP, gRPC or the CLI. " +
			"An import is checked whole before anything is written, so the records of the archive are held in memory meanwhile. " +
			"An export with embeddings takes about 6 KiB per record.",
		field: func(c *Config) any { return &c.MaxImportBytes },
		def:   int64(2 << 30),
		check: func(c *Config) string {
			if c.MaxImportBytes < 1<<20 {
				return fmt.Sprintf("must be at least 1048576 bytes (1 MiB) (got %d)", c.MaxImportBytes)
			}
			return ""
		},
	},
	// Request bounds: answer size.
	{
		name: "max_response_bytes",
		doc: "Largest answer of the API, over HTTP and gRPC (estimated as JSON while records are gathered, then measured). " +
			"A larger answer is refused with 413 CONTENT_TOO_LARGE telling the client to ask for fewer records; lists also have fixed maximum limits " +
			"(recall and raw recall 1000, associate 256, timeline 1000, graph 1000 nodes). Archives from the streaming export are not bounded by it.",
		field: func(c *Config) any { return &c.MaxResponseBytes },
		def:   int64(64 << 20),
		check: func(c *Config) string {
			if c.MaxResponseBytes < 1<<20 {
				return fmt.Sprintf("must be at least 1048576 bytes (1 MiB) (got %d)", c.MaxResponseBytes)
			}
			return ""
		},
	},
	{
		name: "storage.min_free_bytes",
		doc: "Free-space floor, in the manner of etcd's NOSPACE alarm. While the file system of data_dir (or of the audit log) " +
			"has less free space than this, writes are refused with 507 INSUFFICIENT_STORAGE (gRPC RESOURCE_EXHAUSTED); " +
			"reads, export and forget keep working, and writes resume by themselves once space is freed. " +
			"Below half of it nothing is written at all and memsvc does not start, so the database never runs out of space. " +
			"0 turns the guard off.",
		field: func(c *Config) any { return &c.Storage.MinFreeBytes },
		def:   uint64(256 << 20),
	},
	{
		name:  "http.port",
		doc:   "TCP port of the HTTP API; 0 picks a free port (printed at start).",
		field: func(c *Config) any { return &c.HTTP.Port },
		def:   uint16(8420),
	},
	{
		name: "http.bind_address",
		doc: "Address the HTTP API (and gRPC) listens on: an IP literal or \"localhost\". " +
			"A non-loopback address requires auth.enabled = true; put a TLS-terminating reverse proxy in front.",
		field: func(c *Config) any { return &c.HTTP.BindAddress },
		def:   "127.0.0.1",
		check: func(c *Config) string {
			a := c.HTTP.BindAddress
			if a == "localhost" {
				return ""
			}
			if _, err := netip.ParseAddr(a); err != nil {
				return fmt.Sprintf("want an IP address such as 127.0.0.1, 0.0.0.0 or ::1, or \"localhost\" (got %q)", a)
			}
			return ""
		},
	},
	{
		name:  "http.cors_origins",
		doc:   "Browser origins allowed to call the API (exact match, e.g. \"https://app.example.com\"); \"*\" reflects any origin. Empty sends no CORS headers.",
		field: func(c *Config) any { return &c.HTTP.CORSOrigins },
		def:   []string{},
	},
	{
		name: "http.trusted_proxy_cidrs",
		doc: "Networks of reverse proxies whose X-Forwarded-For / X-Real-IP headers are believed when " +
			"identifying clients for rate limiting, e.g. [\"10.0.0.0/8\"]. Env: MEMSVC_HTTP__TRUSTED_PROXY_CIDRS (comma list).",
		field: func(c *Config) any { return &c.HTTP.TrustedProxyCIDRs },
		def:   []string{},
		check: func(c *Config) string {
			for _, s := range c.HTTP.TrustedProxyCIDRs {
				if _, err := netip.ParsePrefix(s); err != nil {
					return fmt.Sprintf("%q is not a network in CIDR form such as 10.0.0.0/8 or fd00::/8", s)
				}
			}
			return ""
		},
	},
	{
		name:  "http.metrics_enabled",
		doc:   "Serve Prometheus metrics at GET /metrics (behind auth when auth is enabled).",
		field: func(c *Config) any { return &c.HTTP.MetricsEnabled },
		def:   false,
	},
	{
		name:  "http.max_body_bytes",
		doc:   "Largest accepted request body; bigger bodies are refused with 413.",
		field: func(c *Config) any { return &c.HTTP.MaxBodyBytes },
		def:   int64(64 << 20),
		check: func(c *Config) string {
			if c.HTTP.MaxBodyBytes < 1<<10 {
				return fmt.Sprintf("must be at least 1024 bytes (got %d)", c.HTTP.MaxBodyBytes)
			}
			return ""
		},
	},
	{
		name:     "http.shutdown_timeout_secs",
		doc:      "On SIGINT/SIGTERM, how long in-flight requests may run before they are cut off.",
		field:    func(c *Config) any { return &c.HTTP.ShutdownTimeoutSecs },
		def:      uint32(10),
		positive: "a number of seconds of at least 1",
	},
	{
		name:     "http.read_header_timeout_secs",
		doc:      "A client must send a request's headers within this many seconds of starting it.",
		field:    func(c *Config) any { return &c.HTTP.ReadHeaderTimeoutSecs },
		def:      uint32(10),
		positive: "a number of seconds of at least 1",
	},
	{
		name: "http.body_timeout_secs",
		doc: "A client must send a request's body within this many seconds, plus one second for every " +
			"http.body_min_bytes_per_sec bytes it has sent (as Apache's mod_reqtimeout): a client that trickles its body is cut off, " +
			"a large import at a sane rate is not.",
		field:    func(c *Config) any { return &c.HTTP.BodyTimeoutSecs },
		def:      uint32(30),
		positive: "a number of seconds of at least 1",
	},
	{
		name:  "http.body_min_bytes_per_sec",
		doc:   "Slowest body upload rate that extends http.body_timeout_secs; 0 makes that timeout fixed.",
		field: func(c *Config) any { return &c.HTTP.BodyMinBytesPerSec },
		def:   uint64(16 << 10),
	},
	{
		name:     "http.idle_timeout_secs",
		doc:      "A kept-alive connection with no request for this many seconds is closed.",
		field:    func(c *Config) any { return &c.HTTP.IdleTimeoutSecs },
		def:      uint32(120),
		positive: "a number of seconds of at least 1",
	},
	{
		name: "http.max_connections",
		doc: "Most HTTP connections open at once (kept-alive ones count); further clients wait in the listen queue " +
			"until one closes.",
		field:    func(c *Config) any { return &c.HTTP.MaxConnections },
		def:      uint32(1024),
		positive: "a number of connections of at least 1",
	},
	{
		name: "http.ui_enabled",
		doc: "Serve the memory inspector, a read-only web page, at /ui/ (its files need no key; every data call it makes does, " +
			"with the key the user types in). Default: on while http.bind_address is loopback, off otherwise.",
		field:   func(c *Config) any { return &c.HTTP.UIEnabled },
		example: "true",
	},
	{
		name:    "grpc.port",
		doc:     "TCP port of the optional gRPC API (same bind address as HTTP; 0 picks a free port). Unset disables gRPC; `serve --grpc-port` also enables it. TLS is required when auth is enabled or the address is not loopback.",
		field:   func(c *Config) any { return &c.GRPC.Port },
		example: "8421",
	},
	{
		name: "grpc.tls_cert_path",
		live: true,
		doc: "PEM certificate for gRPC TLS. Required when auth is enabled or the bind address is not loopback. " +
			"serve also watches the certificate and key files and, on every reload, reads them again: renewed files at the same paths " +
			"are served to new connections (open ones keep theirs). TLS itself cannot be turned on or off without a restart.",
		field:   func(c *Config) any { return &c.GRPC.TLSCertPath },
		example: `"/etc/memsvc/tls/server.crt"`,
		check:   func(c *Config) string { return optNotBlank(c.GRPC.TLSCertPath) },
	},
	{
		name:    "grpc.tls_key_path",
		live:    true,
		doc:     "PEM private key for gRPC TLS; set together with grpc.tls_cert_path.",
		field:   func(c *Config) any { return &c.GRPC.TLSKeyPath },
		example: `"/etc/memsvc/tls/server.key"`,
		check:   func(c *Config) string { return optNotBlank(c.GRPC.TLSKeyPath) },
	},
	{
		name:     "grpc.handshake_timeout_secs",
		doc:      "A new gRPC connection must finish its TLS and HTTP/2 handshake within this many seconds.",
		field:    func(c *Config) any { return &c.GRPC.HandshakeTimeoutSecs },
		def:      uint32(10),
		positive: "a number of seconds of at least 1",
	},
	{
		name:     "grpc.idle_timeout_secs",
		doc:      "A gRPC connection with no call in progress for this many seconds is closed (the client reconnects when it next calls).",
		field:    func(c *Config) any { return &c.GRPC.IdleTimeoutSecs },
		def:      uint32(120),
		positive: "a number of seconds of at least 1",
	},
	{
		name: "grpc.keepalive_secs",
		doc: "A gRPC connection silent for this many seconds is pinged; one whose ping goes unanswered for " +
			"grpc.keepalive_timeout_secs is closed, so a vanished client does not hold it.",
		field:    func(c *Config) any { return &c.GRPC.KeepaliveSecs },
		def:      uint32(60),
		positive: "a number of seconds of at least 1",
	},
	{
		name:     "grpc.keepalive_timeout_secs",
		doc:      "How long a keepalive ping (see grpc.keepalive_secs) may go unanswered before the connection is closed.",
		field:    func(c *Config) any { return &c.GRPC.KeepaliveTimeoutSecs },
		def:      uint32(20),
		positive: "a number of seconds of at least 1",
	},
	{
		name: "grpc.max_connections",
		doc: "Most gRPC connections open at once; further clients wait in the listen queue until one closes. " +
			"Each connection carries any number of calls.",
		field:    func(c *Config) any { return &c.GRPC.MaxConnections },
		def:      uint32(1024),
		positive: "a number of connections of at least 1",
	},
	{
		name:  "auth.enabled",
		doc:   "Require `Authorization: Bearer <key>` on the API (not on /health and /readiness).",
		field: func(c *Config) any { return &c.Auth.Enabled },
		def:   false,
	},
	{
		name: "auth.api_keys",
		live: true,
		doc: "Accepted API keys. Prefer the environment variable MEMSVC_AUTH_API_KEYS (comma-separated) " +
			"over writing keys into a file; while it is set, it overrides the file, on reload too. " +
			"A reload logs how many keys came and went, never a key.",
		field:  func(c *Config) any { return &c.Auth.APIKeys },
		def:    []string{},
		secret: true,
		check: func(c *Config) string {
			for i, k := range c.Auth.APIKeys {
				if strings.TrimSpace(k) == "" {
					return fmt.Sprintf("key %d is blank; remove it", i+1)
				}
			}
			return ""
		},
	},
	{
		name: "auth.keys",
		live: true,
		doc: "API keys confined to namespaces, one [[auth.keys]] table each: key, and namespaces, the namespaces the key may use " +
			"(names such as \"project-a\", or [\"*\"] for every namespace). A request that names a namespace the key may not use gets 403 FORBIDDEN; " +
			"one that names none acts in the key's namespace when it has exactly one, else in \"default\". " +
			"Keys bound to namespaces may not read /metrics or stats totalled over all namespaces. The keys of auth.api_keys may use every namespace. " +
			"From the environment: MEMSVC_AUTH_KEYS=\"KEY=NS[+NS...],KEY2=*\" (the namespaces follow the last '=' of each entry), or a TOML array of tables; " +
			"while it is set, it overrides the file, on reload too. A reload logs how many keys came, went or changed namespaces, never a key.",
		field:   func(c *Config) any { return &c.Auth.Keys },
		example: `[{ key = "use-the-environment-variable-instead", namespaces = ["project-a"] }]`,
		secret:  true,
		check:   func(c *Config) string { return checkKeyBindings(c.Auth.APIKeys, c.Auth.Keys) },
	},
	{
		name: "security.store_encryption_passphrase",
		doc: "Encrypt records written from now on with a key derived from this passphrase; existing plaintext " +
			"records stay readable. Prefer MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE.",
		field:   func(c *Config) any { return &c.Security.StoreEncryptionPassphrase },
		example: `"use the environment variable instead"`,
		secret:  true,
		check:   func(c *Config) string { return optNotBlank(c.Security.StoreEncryptionPassphrase) },
	},
	{
		name: "security.store_kdf_memory_mib",
		doc: "Argon2id memory, in MiB, of the key derived from the store passphrase; with store_kdf_iterations and store_kdf_parallelism it applies " +
			"only when encryption starts in a data directory (the first start with a passphrase): the parameters are written in the directory's " +
			"encryption header and every later open uses those, whatever these keys say then. The defaults (19 MiB, 2 passes, 1 lane) are OWASP's " +
			"recommended Argon2id setting and cost about 30 ms of one core each time the directory is opened, which every embedded CLI command does. " +
			"Higher values make each passphrase guess dearer for someone who has a copy of the data directory, and make every open (every embedded command, every start) " +
			"slower by as much: 64 MiB with 3 passes costs about 5 times the default. Accepted: 19 to 1024.",
		field: func(c *Config) any { return &c.Security.StoreKDF.MemoryMiB },
		def:   uint32(19),
		check: func(c *Config) string { return between(c.Security.StoreKDF.MemoryMiB, 19, 1024, "MiB") },
	},
	{
		name:  "security.store_kdf_iterations",
		doc:   "Argon2id passes over the memory for a data directory where encryption starts (see store_kdf_memory_mib). Accepted: 2 to 64.",
		field: func(c *Config) any { return &c.Security.StoreKDF.Iterations },
		def:   uint32(2),
		check: func(c *Config) string { return between(c.Security.StoreKDF.Iterations, 2, 64, "passes") },
	},
	{
		name: "security.store_kdf_parallelism",
		doc: "Argon2id lanes for a data directory where encryption starts (see store_kdf_memory_mib). More lanes let an open use more cores " +
			"for the same memory and passes; an attacker's cost stays the same. Accepted: 1 to 64.",
		field: func(c *Config) any { return &c.Security.StoreKDF.Parallelism },
		def:   uint32(1),
		check: func(c *Config) string { return between(c.Security.StoreKDF.Parallelism, 1, 64, "lanes") },
	},
	{
		name:    "security.persist_search_indexes",
		doc:     "Keep search indexes (derived text) on disk in plaintext, so a start need not rebuild them. Default: true, or false while store encryption is on; an encrypted store keeps them sealed under the store key either way, unless this is set to false explicitly: then nothing derived is kept on disk, sealed or not, and every start rebuilds them in memory.",
		field:   func(c *Config) any { return &c.Security.PersistSearchIndexes },
		example: "true",
	},
	{
		name:  "security.audit_log_enabled",
		doc:   "Append a hash-chained entry to the audit log for every state change.",
		field: func(c *Config) any { return &c.Security.AuditLogEnabled },
		def:   true,
	},
	{
		name:    "security.audit_log_path",
		doc:     "Audit log location. Default: <data_dir>/audit.jsonl.",
		field:   func(c *Config) any { return &c.Security.AuditLogPath },
		example: `"/var/lib/memsvc/audit.jsonl"`,
		check:   func(c *Config) string { return optNotBlank(c.Security.AuditLogPath) },
	},
	{
		name:  "llm.provider",
		doc:   "memsvc needs no LLM for anything. Only \"none\" is accepted; the llm.* keys exist so shared configuration files load.",
		field: func(c *Config) any { return &c.LLM.Provider },
		def:   "none",
		check: func(c *Config) string {
			switch c.LLM.Provider {
			case "none":
				return ""
			case "openai", "claude", "anthropic", "gemini", "google":
				return fmt.Sprintf("provider %q is not available: memsvc works without an LLM; set llm.provider = \"none\" or remove the key", c.LLM.Provider)
			}
			return fmt.Sprintf("unknown provider %q: the only accepted value is \"none\"", c.LLM.Provider)
		},
	},
	{
		name:    "llm.api_key",
		doc:     "Accepted for compatibility and ignored.",
		field:   func(c *Config) any { return &c.LLM.APIKey },
		example: `""`,
		secret:  true,
		check:   func(c *Config) string { return optNotBlank(c.LLM.APIKey) },
	},
	{
		name:    "llm.model",
		doc:     "Accepted for compatibility and ignored.",
		field:   func(c *Config) any { return &c.LLM.Model },
		example: `""`,
		check:   func(c *Config) string { return optNotBlank(c.LLM.Model) },
	},
	{
		name:    "llm.base_url",
		doc:     "Accepted for compatibility and ignored.",
		field:   func(c *Config) any { return &c.LLM.BaseURL },
		example: `""`,
		check:   func(c *Config) string { return optNotBlank(c.LLM.BaseURL) },
	},
	{
		name:     "decay.background_interval_secs",
		doc:      "How often `serve` advances the decay clock of every record by the real time elapsed.",
		field:    func(c *Config) any { return &c.Decay.BackgroundIntervalSecs },
		def:      uint64(3600),
		positive: "a number of seconds of at least 1",
	},
	{
		name: "decay.prune_below",
		doc: "Delete a record at a decay tick once its fidelity score is under this value; every deletion is audited. " +
			"0 never deletes: a faded record becomes dormant instead (hidden from human-mode recall, still found by perfect-mode recall and inspect). " +
			"At most 0.05, the dormant threshold, so nothing human-mode recall can still return is ever deleted. " +
			"A neutral episodic record with the default stability falls under 0.05 after about 400 days without recall.",
		field: func(c *Config) any { return &c.Decay.PruneBelow },
		def:   float64(0),
		check: func(c *Config) string {
			v := c.Decay.PruneBelow
			if math.IsNaN(v) || v < 0 || v > MaxPruneBelow {
				return fmt.Sprintf("want a score between 0 (never prune) and %v, the dormant threshold (got %v)", MaxPruneBelow, v)
			}
			return ""
		},
	},
	{
		name: "decay.stability_days.episodic",
		doc: "Initial stability S, in days, of new episodic records. After t days without recall a record's fidelity is " +
			"(1+t/(S*A))^-0.5, where A = 1 + 2*emotion_intensity: a neutral record is at 0.71 after S days and dormant after " +
			"about 400*S days. Each spaced recall doubles a record's S. Records already stored keep theirs.",
		field: func(c *Config) any { return &c.Decay.StabilityDays.Episodic },
		def:   float64(1),
		check: func(c *Config) string { return positiveDays(c.Decay.StabilityDays.Episodic) },
	},
	{
		name:  "decay.stability_days.semantic",
		doc:   "Initial stability S, in days, of new semantic records (facts fade over months).",
		field: func(c *Config) any { return &c.Decay.StabilityDays.Semantic },
		def:   float64(30),
		check: func(c *Config) string { return positiveDays(c.Decay.StabilityDays.Semantic) },
	},
	{
		name:  "decay.stability_days.procedural",
		doc:   "Initial stability S, in days, of new procedural records (skills fade over seasons).",
		field: func(c *Config) any { return &c.Decay.StabilityDays.Procedural },
		def:   float64(90),
		check: func(c *Config) string { return positiveDays(c.Decay.StabilityDays.Procedural) },
	},
	{
		name:  "decay.stability_days.emotional",
		doc:   "Initial stability S, in days, of new emotional records (feelings fade over weeks).",
		field: func(c *Config) any { return &c.Decay.StabilityDays.Emotional },
		def:   float64(14),
		check: func(c *Config) string { return positiveDays(c.Decay.StabilityDays.Emotional) },
	},
	{
		name:     "dream.background_interval_secs",
		doc:      "How often `serve` summarises pending raw journal entries into curated memories.",
		field:    func(c *Config) any { return &c.Dream.BackgroundIntervalSecs },
		def:      uint64(86400),
		positive: "a number of seconds of at least 1",
	},
	{
		name:     "rate_limit.requests_per_second",
		live:     true,
		doc:      "Sustained requests per second allowed per API key (or per client address without auth).",
		field:    func(c *Config) any { return &c.RateLimit.RequestsPerSecond },
		def:      uint64(100),
		positive: "a rate of at least 1",
	},
	{
		name:     "rate_limit.burst",
		live:     true,
		doc:      "Requests a client may make at once before the rate applies.",
		field:    func(c *Config) any { return &c.RateLimit.Burst },
		def:      uint32(50),
		positive: "a burst of at least 1",
	},
	// Rate limits that fit the deployment.
	{
		name: "rate_limit.limit_loopback",
		live: true,
		doc: "Also rate limit clients on this host (loopback addresses) while auth is off. By default they are not limited: " +
			"they are the agents, proxies and tools of the machine the server runs on, which would otherwise all share one bucket. " +
			"A request that a reverse proxy on this host forwards (it carries X-Forwarded-For, X-Real-IP or Forwarded) is limited as coming from the client the proxy names when the proxy is in http.trusted_proxy_cidrs, else from the proxy. " +
			"With auth on, every key has its own bucket wherever it calls from.",
		field: func(c *Config) any { return &c.RateLimit.LimitLoopback },
		def:   false,
	},
	{
		name:  "log.level",
		live:  true,
		doc:   "Least severe log level written to stderr: trace, debug, info, warn or error.",
		field: func(c *Config) any { return &c.Log.Level },
		def:   "info",
		check: func(c *Config) string { return oneOf(c.Log.Level, logLevels) },
	},
	{
		name:  "log.format",
		doc:   "Log line format on stderr: pretty (human-readable text) or json.",
		field: func(c *Config) any { return &c.Log.Format },
		def:   "pretty",
		check: func(c *Config) string { return oneOf(c.Log.Format, logFormats) },
	},
	{
		name:  "working.capacity",
		doc:   "Records the volatile working store holds; storing one more moves the least recently used one to the episodic store.",
		field: func(c *Config) any { return &c.Working.Capacity },
		def:   uint32(7),
		check: func(c *Config) string {
			if c.Working.Capacity < 1 || c.Working.Capacity > 10000 {
				return fmt.Sprintf("want a capacity between 1 and 10000 (got %d)", c.Working.Capacity)
			}
			return ""
		},
	},
}

// MaxPruneBelow is the highest accepted decay.prune_below: the engine's
// dormant threshold (engine.DormantBelow; this package does not import the
// engine, and a server test keeps the two equal). Pruning above it would
// delete records that human-mode recall still returns.
const MaxPruneBelow = 0.05

// positiveDays checks a stability: a positive, finite number of days.
func positiveDays(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return fmt.Sprintf("want a positive number of days such as 1, 0.5 or 30 (got %v)", v)
	}
	return ""
}

// between checks that v lies in [lo, hi], in unit.
func between(v, lo, hi uint32, unit string) string {
	if v < lo || v > hi {
		return fmt.Sprintf("want %d to %d %s (got %d)", lo, hi, unit, v)
	}
	return ""
}

func notBlank(s string) string {
	if strings.TrimSpace(s) == "" {
		return "must not be blank"
	}
	return ""
}

func optNotBlank(s *string) string {
	if s != nil && strings.TrimSpace(*s) == "" {
		return "must not be blank when set; remove the key instead"
	}
	return ""
}

// validate returns a message when c's value of k is not acceptable.
func (k *key) validate(c *Config) string {
	if k.positive != "" {
		var v uint64
		switch p := k.field(c).(type) {
		case *uint32:
			v = uint64(*p)
		case *uint64:
			v = *p
		default:
			panic(fmt.Sprintf("config: key %s: positive on a %T field", k.name, p))
		}
		if v == 0 {
			return "want " + k.positive + " (got 0)"
		}
	}
	if k.check != nil {
		return k.check(c)
	}
	return ""
}

func oneOf(v string, allowed []string) string {
	if slices.Contains(allowed, v) {
		return ""
	}
	return fmt.Sprintf("want one of %s (got %q)", strings.Join(allowed, ", "), v)
}

func (k *key) applyDefault(c *Config) {
	if k.def == nil {
		return
	}
	switch p := k.field(c).(type) {
	case *string:
		*p = k.def.(string)
	case *bool:
		*p = k.def.(bool)
	case *uint16:
		*p = k.def.(uint16)
	case *uint32:
		*p = k.def.(uint32)
	case *uint64:
		*p = k.def.(uint64)
	case *int64:
		*p = k.def.(int64)
	case *float64:
		*p = k.def.(float64)
	case *[]string:
		*p = slices.Clone(k.def.([]string))
	default:
		panic(fmt.Sprintf("config: key %s has a default for unsupported field type %T", k.name, p))
	}
}

// set stores a value decoded from TOML (string, bool, int64, float64 or
// []any) in the key's field.
func (k *key) set(c *Config, v any, source string) error {
	bad := func(want string) error {
		return &Error{Key: k.name, Source: source, Msg: fmt.Sprintf("want %s, got %s", want, k.describe(v))}
	}
	switch p := k.field(c).(type) {
	case *string, **string:
		s, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		if pp, ok := p.(**string); ok {
			*pp = &s
		} else {
			*p.(*string) = s
		}
	case *bool, **bool:
		b, ok := v.(bool)
		if !ok {
			return bad("true or false")
		}
		if pp, ok := p.(**bool); ok {
			*pp = &b
		} else {
			*p.(*bool) = b
		}
	case *uint16, **uint16, *uint32, *uint64, *int64:
		n, ok := v.(int64)
		if !ok {
			return bad("a whole number")
		}
		var max uint64
		switch p.(type) {
		case *uint16, **uint16:
			max = 1<<16 - 1
		case *uint32:
			max = 1<<32 - 1
		default:
			max = 1<<63 - 1
		}
		if n < 0 || uint64(n) > max {
			return &Error{Key: k.name, Source: source, Msg: fmt.Sprintf("want a whole number between 0 and %d, got %d", max, n)}
		}
		switch p := p.(type) {
		case *uint16:
			*p = uint16(n)
		case **uint16:
			u := uint16(n)
			*p = &u
		case *uint32:
			*p = uint32(n)
		case *uint64:
			*p = uint64(n)
		case *int64:
			*p = n
		}
	case *float64:
		switch n := v.(type) {
		case float64:
			*p = n
		case int64:
			*p = float64(n)
		default:
			return bad("a number")
		}
	case *[]KeyBinding:
		bindings, err := keyBindings(v)
		if err != nil {
			return &Error{Key: k.name, Source: source, Msg: err.Error()}
		}
		*p = bindings
	case *[]string:
		list, ok := v.([]any)
		if !ok {
			return bad("a list of strings")
		}
		out := make([]string, 0, len(list))
		for _, item := range list {
			s, ok := item.(string)
			if !ok {
				return bad("a list of strings")
			}
			out = append(out, s)
		}
		*p = out
	default:
		panic(fmt.Sprintf("config: key %s has unsupported field type %T", k.name, p))
	}
	c.Sources[k.name] = source
	return nil
}

// setString stores a value given as text (environment variable or flag),
// parsing it according to the key's type.
func (k *key) setString(c *Config, s, source string) error {
	var v any
	switch k.field(c).(type) {
	case *string, **string:
		v = s
		if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
			if u, err := strconv.Unquote(s); err == nil {
				v = u
			}
		}
	case *bool, **bool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return &Error{Key: k.name, Source: source, Msg: fmt.Sprintf("want true or false, got %q", s)}
		}
		v = b
	case *uint16, **uint16, *uint32, *uint64, *int64:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return &Error{Key: k.name, Source: source, Msg: fmt.Sprintf("want a whole number, got %q", s)}
		}
		v = n
	case *float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return &Error{Key: k.name, Source: source, Msg: fmt.Sprintf("want a number such as 0.5, got %q", s)}
		}
		v = f
	case *[]string:
		list, err := parseList(s)
		if err != nil {
			msg := err.Error()
			if !k.secret {
				msg += fmt.Sprintf(", got %q", s)
			}
			return &Error{Key: k.name, Source: source, Msg: msg}
		}
		v = list
	case *[]KeyBinding:
		list, err := parseKeyBindings(s)
		if err != nil {
			return &Error{Key: k.name, Source: source, Msg: err.Error()}
		}
		v = list
	}
	return k.set(c, v, source)
}

// parseList reads a TOML array of strings ("[\"a\", \"b\"]") or a comma
// list ("a, b"); blank items of a comma list are dropped.
func parseList(s string) ([]any, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "[") {
		var doc struct{ V []any }
		if err := unmarshalTOML([]byte("V = "+t), &doc); err != nil {
			return nil, errors.New("want a comma-separated list or a TOML array of strings")
		}
		return doc.V, nil
	}
	out := []any{}
	for _, item := range strings.Split(t, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out, nil
}

func (k *key) describe(v any) string {
	if k.secret {
		return fmt.Sprintf("a %T value", v)
	}
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%v", v)
}
