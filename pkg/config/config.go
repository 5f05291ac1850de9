// Package config loads the configuration of the memsvc server and its data
// commands.
//
// Every key is declared once, in the table in keys.go, with its type,
// default, validation and documentation. That table drives everything:
// reading a TOML file, reading MEMSVC_* environment variables, applying
// command-line flags, validating, and rendering the documented example file
// (deploy-docs/memsvc.example.toml).
//
// Sources, lowest precedence first: defaults, the TOML file given with
// --config, the environment, command-line flags. A TOML key a.b is the
// environment variable MEMSVC_A__B (upper case, double underscore between
// levels). List values from the environment may be comma-separated or TOML
// arrays; MEMSVC_AUTH_API_KEYS is the comma-separated key list and
// MEMSVC_AUTH_KEYS the keys bound to namespaces (see auth.keys).
//
// Mistakes are errors that name the key, where the value came from and what
// is accepted: a missing config file, an unknown key in the file or in a
// MEMSVC_ variable, a value of the wrong type, a value out of range.
package config

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
)

// Config is the validated configuration.
type Config struct {
	DataDir        string
	MaxImportBytes int64
	// MaxResponseBytes bounds one answer of the API (request bounds).
	MaxResponseBytes int64
	Storage          Storage
	HTTP             HTTP
	GRPC             GRPC
	Auth             Auth
	Security         Security
	LLM              LLM
	Decay            Decay
	Dream            Dream
	RateLimit        RateLimit
	Log              Log
	Working          Working

	// File is the config file that was read, or "" for none.
	File string
	// Sources maps each key that was set to where it came from: the
	// file path, "MEMSVC_..." or "--flag".
	Sources map[string]string
}

// Storage is the [storage] table.
type Storage struct {
	// MinFreeBytes is the free-space floor under which writes are
	// refused; 0 turns the guard off.
	MinFreeBytes uint64
}

// HTTP is the [http] table.
type HTTP struct {
	Port                uint16
	BindAddress         string
	CORSOrigins         []string
	TrustedProxyCIDRs   []string
	MetricsEnabled      bool
	MaxBodyBytes        int64
	ShutdownTimeoutSecs uint32
	// ReadHeaderTimeoutSecs bounds the time to receive a request's
	// headers.
	ReadHeaderTimeoutSecs uint32
	// BodyTimeoutSecs and BodyMinBytesPerSec bound the time to receive a
	// request's body: BodyTimeoutSecs, plus one second for every
	// BodyMinBytesPerSec bytes received.
	BodyTimeoutSecs    uint32
	BodyMinBytesPerSec uint64
	// IdleTimeoutSecs closes a kept-alive connection idle that long.
	IdleTimeoutSecs uint32
	// MaxConnections caps the open HTTP connections; more wait to be
	// accepted.
	MaxConnections uint32
	// UIEnabled serves the memory inspector at /ui/; nil means "when
	// bound to loopback" (Config.UIEnabled).
	UIEnabled *bool
}

// GRPC is the [grpc] table. Nil pointer fields are unset.
type GRPC struct {
	Port        *uint16
	TLSCertPath *string
	TLSKeyPath  *string
	// HandshakeTimeoutSecs bounds the TLS and HTTP/2 handshake of a new
	// connection.
	HandshakeTimeoutSecs uint32
	// IdleTimeoutSecs closes a connection without a call in progress for
	// that long.
	IdleTimeoutSecs uint32
	// KeepaliveSecs and KeepaliveTimeoutSecs: a connection silent for
	// KeepaliveSecs is pinged, and closed when the ping goes unanswered
	// for KeepaliveTimeoutSecs (a vanished peer).
	KeepaliveSecs        uint32
	KeepaliveTimeoutSecs uint32
	// MaxConnections caps the open gRPC connections; more wait to be
	// accepted.
	MaxConnections uint32
}

// Auth is the [auth] table.
type Auth struct {
	Enabled bool
	// APIKeys may use every namespace.
	APIKeys []string
	// Keys are API keys confined to namespaces ([[auth.keys]]).
	Keys []KeyBinding
}

// KeyBinding is one [[auth.keys]] entry: an API key and the namespaces it
// may use, or ["*"] for all of them.
type KeyBinding struct {
	Key        string
	Namespaces []string
}

// Security is the [security] table. Nil fields are unset.
type Security struct {
	StoreEncryptionPassphrase *string
	// StoreKDF is the Argon2id cost a data directory gets when store
	// encryption starts in it; directories already encrypted keep theirs.
	StoreKDF             StoreKDF
	PersistSearchIndexes *bool
	AuditLogEnabled      bool
	AuditLogPath         *string
}

// StoreKDF holds the security.store_kdf_* keys: Argon2id memory (MiB),
// passes and lanes.
type StoreKDF struct {
	MemoryMiB   uint32
	Iterations  uint32
	Parallelism uint32
}

// LLM is the [llm] table. memsvc needs no LLM; only provider "none" is
// accepted, and the other keys exist so configuration files written for
// other deployments load.
type LLM struct {
	Provider string
	APIKey   *string
	Model    *string
	BaseURL  *string
}

// Decay is the [decay] table.
type Decay struct {
	BackgroundIntervalSecs uint64
	// PruneBelow is the score under which a decay tick deletes a record;
	// 0 never deletes.
	PruneBelow    float64
	StabilityDays StabilityDays
}

// StabilityDays is the [decay.stability_days] table: the initial stability
// S, in days, of a new record in each store that decays.
type StabilityDays struct {
	Episodic   float64
	Semantic   float64
	Procedural float64
	Emotional  float64
}

// Dream is the [dream] table.
type Dream struct {
	BackgroundIntervalSecs uint64
}

// RateLimit is the [rate_limit] table.
type RateLimit struct {
	RequestsPerSecond uint64
	Burst             uint32
	// LimitLoopback limits clients on this host when auth is off.
	LimitLoopback bool
}

// Log is the [log] table.
type Log struct {
	Level  string
	Format string
}

// Working is the [working] table.
type Working struct {
	Capacity uint32
}

// Error is a configuration problem with one key.
type Error struct {
	Key    string // "http.port"; empty for file-level problems
	Source string // where the bad value came from
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("invalid configuration: ")
	if e.Key != "" {
		b.WriteString(e.Key)
		if e.Source != "" && e.Source != "default" {
			b.WriteString(" (from " + e.Source + ")")
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrInvalid matches every *Error.
var ErrInvalid = errors.New("invalid configuration")

func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Override is a value given on the command line.
type Override struct {
	Key   string // "data_dir", "http.port", ...
	Value string
	Flag  string // "--data-dir", for messages
}

// LoadOptions say where to read configuration from.
type LoadOptions struct {
	// File is the --config path; empty means no file.
	File string
	// Environ is the environment as os.Environ returns it.
	Environ []string
	// Overrides are command-line flags, applied last.
	Overrides []Override
}

// Load reads, merges and validates the configuration.
func Load(o LoadOptions) (*Config, error) {
	c := Defaults()
	if o.File != "" {
		if err := c.loadFile(o.File); err != nil {
			return nil, err
		}
	}
	if err := c.loadEnv(o.Environ); err != nil {
		return nil, err
	}
	for _, ov := range o.Overrides {
		k := lookup(ov.Key)
		if k == nil {
			return nil, &Error{Key: ov.Key, Source: ov.Flag, Msg: "not a configuration key"}
		}
		if err := k.setString(c, ov.Value, ov.Flag); err != nil {
			return nil, err
		}
	}
	c.DataDir = expandHome(c.DataDir, o.Environ)
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Defaults returns the configuration with every default applied.
func Defaults() *Config {
	c := &Config{Sources: map[string]string{}}
	for i := range keys {
		keys[i].applyDefault(c)
	}
	return c
}

func (c *Config) source(key string) string {
	if s, ok := c.Sources[key]; ok {
		return s
	}
	return "default"
}

func (c *Config) invalid(key, format string, args ...any) error {
	return &Error{Key: key, Source: c.source(key), Msg: fmt.Sprintf(format, args...)}
}

// Validate checks every key and the rules that relate keys to each other.
func (c *Config) Validate() error {
	for i := range keys {
		if msg := keys[i].validate(c); msg != "" {
			return c.invalid(keys[i].name, "%s", msg)
		}
	}
	if c.GRPC.Port != nil && *c.GRPC.Port == c.HTTP.Port && c.HTTP.Port != 0 {
		return c.invalid("grpc.port", "must differ from http.port (%d)", c.HTTP.Port)
	}
	if (c.GRPC.TLSCertPath == nil) != (c.GRPC.TLSKeyPath == nil) {
		return c.invalid("grpc.tls_cert_path", "grpc.tls_cert_path and grpc.tls_key_path must be set together")
	}
	if c.Auth.Enabled && len(c.Auth.APIKeys) == 0 && len(c.Auth.Keys) == 0 {
		return c.invalid("auth.api_keys", "auth is enabled but no API key is configured: set auth.api_keys or MEMSVC_AUTH_API_KEYS (or auth.keys for keys bound to namespaces)")
	}
	return nil
}

// AuditLogPath is where the audit log lives: the configured path or
// <data_dir>/audit.jsonl.
func (c *Config) AuditLogPath() string {
	if c.Security.AuditLogPath != nil {
		return *c.Security.AuditLogPath
	}
	return filepath.Join(c.DataDir, "audit.jsonl")
}

// PersistSearchIndexes reports whether derived search indexes may be kept on
// disk: as configured, else only while store encryption is off.
func (c *Config) PersistSearchIndexes() bool {
	if c.Security.PersistSearchIndexes != nil {
		return *c.Security.PersistSearchIndexes
	}
	return c.Security.StoreEncryptionPassphrase == nil
}

// IndexSnapshotsForbidden reports whether security.persist_search_indexes
// is set to false explicitly: then nothing derived from the records is
// kept on disk, not even sealed under the store key.
func (c *Config) IndexSnapshotsForbidden() bool {
	return c.Security.PersistSearchIndexes != nil && !*c.Security.PersistSearchIndexes
}

// UIEnabled reports whether serve offers the memory inspector at /ui/: as
// configured, else only while the HTTP API listens on loopback.
func (c *Config) UIEnabled() bool {
	if c.HTTP.UIEnabled != nil {
		return *c.HTTP.UIEnabled
	}
	return IsLoopback(c.HTTP.BindAddress)
}

// IsLoopback reports whether addr (an IP literal or "localhost") is a
// loopback address.
func IsLoopback(addr string) bool {
	if strings.EqualFold(addr, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(addr, "[]"))
	return err == nil && ip.IsLoopback()
}

func expandHome(p string, environ []string) string {
	if !strings.HasPrefix(p, "~/") {
		return p
	}
	home := envValue(environ, "HOME")
	if home == "" {
		home = envValue(environ, "USERPROFILE")
	}
	if home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			home = h
		}
	}
	if home == "" {
		return p
	}
	return filepath.Join(home, p[2:])
}

func envValue(environ []string, name string) string {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}
