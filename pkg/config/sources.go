package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Environment variables of the MEMSVC_ namespace that are not configuration
// keys: they belong to the client commands and companions.
var clientEnv = []string{
	"MEMSVC_SERVER_URL",
	"MEMSVC_SERVER_API_KEY",
	"MEMSVC_NAMESPACE",
	"MEMSVC_RECORDER_SPOOL_DIR",
	"MEMSVC_RECORDER_BIN",
}

// Environment variables that set list keys from a comma list.
var listEnv = map[string]string{
	"MEMSVC_AUTH_API_KEYS":             "auth.api_keys",
	"MEMSVC_AUTH_KEYS":                 "auth.keys",
	"MEMSVC_HTTP_TRUSTED_PROXY_CIDRS":  "http.trusted_proxy_cidrs",
	"MEMSVC_HTTP__TRUSTED_PROXY_CIDRS": "http.trusted_proxy_cidrs",
}

func unmarshalTOML(b []byte, v any) error { return toml.Unmarshal(b, v) }

func (c *Config) loadFile(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Error{Msg: fmt.Sprintf("config file %s does not exist (check the --config path)", path)}
	}
	if err != nil {
		return &Error{Msg: fmt.Sprintf("read config file: %v", err)}
	}
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return &Error{Msg: fmt.Sprintf("config file %s: line %d, column %d: %v", path, row, col, de)}
		}
		return &Error{Msg: fmt.Sprintf("config file %s: %v", path, err)}
	}
	flat := map[string]any{}
	flatten("", doc, flat)
	names := make([]string, 0, len(flat))
	for name := range flat {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		k := lookup(name)
		if k == nil {
			return &Error{Key: name, Source: path, Msg: "unknown key" + suggest(name)}
		}
		if err := k.set(c, flat[name], path); err != nil {
			return err
		}
	}
	c.File = path
	return nil
}

// flatten turns nested tables into dotted keys. Tables that are values of
// known list or scalar keys are left for set to reject.
func flatten(prefix string, m map[string]any, out map[string]any) {
	for k, v := range m {
		name := k
		if prefix != "" {
			name = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok && lookup(name) == nil {
			flatten(name, sub, out)
			continue
		}
		out[name] = v
	}
}

// envName is the environment variable of a key: MEMSVC_HTTP__PORT.
func envName(key string) string {
	return "MEMSVC_" + strings.ToUpper(strings.ReplaceAll(key, ".", "__"))
}

func (c *Config) loadEnv(environ []string) error {
	vars := map[string]string{}
	var names []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(strings.ToUpper(name), "MEMSVC_") {
			continue
		}
		if _, dup := vars[name]; dup {
			continue // the first entry wins, as for os.Getenv
		}
		vars[name] = value
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		value := vars[name]
		upper := strings.ToUpper(name)
		if slices.Contains(clientEnv, upper) {
			continue
		}
		if key, ok := listEnv[upper]; ok {
			if err := lookup(key).setString(c, value, name); err != nil {
				return err
			}
			continue
		}
		keyName := strings.ToLower(strings.ReplaceAll(upper[len("MEMSVC_"):], "__", "."))
		k := lookup(keyName)
		if k == nil {
			return &Error{Source: name, Msg: fmt.Sprintf("%s is not a memsvc configuration variable%s", name, suggestEnv(upper))}
		}
		if err := k.setString(c, value, name); err != nil {
			return err
		}
	}
	return nil
}

// suggest names a known key that differs only in section or spelling.
func suggest(name string) string {
	leaf := name[strings.LastIndex(name, ".")+1:]
	for i := range keys {
		k := keys[i].name
		if strings.HasSuffix(k, "."+leaf) || k == leaf {
			return fmt.Sprintf(" (did you mean %s?)", k)
		}
	}
	return "; see deploy-docs/memsvc.example.toml for every key"
}

// suggestEnv catches the common single-underscore mistake:
// MEMSVC_LOG_LEVEL for MEMSVC_LOG__LEVEL.
func suggestEnv(upper string) string {
	for i := range keys {
		want := envName(keys[i].name)
		if strings.ReplaceAll(want, "__", "_") == strings.ReplaceAll(upper, "__", "_") {
			return fmt.Sprintf(" (did you mean %s?)", want)
		}
	}
	return "; configuration variables are MEMSVC_<SECTION>__<KEY>, for example MEMSVC_HTTP__PORT"
}

// WriteExample renders the documented example configuration: every key with
// its documentation, set to its default, or commented out with an example
// value when it has no default.
func WriteExample(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# memsvc configuration reference.\n")
	b.WriteString("#\n")
	b.WriteString("# Every key is shown with its default value; keys without a default are\n")
	b.WriteString("# commented out. Pass the file with `memsvc --config <path> serve`. Each key\n")
	b.WriteString("# can also be set from the environment: a.b is MEMSVC_A__B. Precedence:\n")
	b.WriteString("# flags > environment > this file > defaults.\n")
	b.WriteString("#\n")
	b.WriteString("# A running `memsvc serve` watches this file and reloads it when it changes\n")
	b.WriteString("# (or on SIGHUP). Keys marked \"Live\" below are applied at once, all together,\n")
	b.WriteString("# to new requests and connections; a change to any other key is logged as\n")
	b.WriteString("# needing a restart and ignored until then. An edit that does not parse or\n")
	b.WriteString("# validate, or names a TLS certificate that does not load, is refused with one\n")
	b.WriteString("# log line and the running settings stay. Environment variables and flags keep\n")
	b.WriteString("# their precedence over this file when it is reloaded.\n")
	b.WriteString("#\n")
	b.WriteString("# This file is generated from pkg/config/keys.go (go test ./pkg/config -update).\n")
	section := ""
	d := Defaults()
	for i := range keys {
		k := &keys[i]
		sec, leaf := "", k.name
		if j := strings.LastIndex(k.name, "."); j >= 0 {
			sec, leaf = k.name[:j], k.name[j+1:]
		}
		if sec != section {
			fmt.Fprintf(&b, "\n[%s]\n", sec)
			section = sec
		}
		b.WriteString("\n")
		doc := k.doc
		if k.live {
			doc += " Live: a reload applies it without a restart."
		}
		for _, line := range wrap(doc, 76) {
			b.WriteString("# " + line + "\n")
		}
		fmt.Fprintf(&b, "# Environment: %s\n", envName(k.name))
		if k.def == nil {
			fmt.Fprintf(&b, "# %s = %s\n", leaf, k.example)
			continue
		}
		fmt.Fprintf(&b, "%s = %s\n", leaf, tomlValue(k.field(d)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func tomlValue(p any) string {
	switch v := p.(type) {
	case *string:
		return strconv.Quote(*v)
	case *bool:
		return strconv.FormatBool(*v)
	case *uint16:
		return strconv.FormatUint(uint64(*v), 10)
	case *uint32:
		return strconv.FormatUint(uint64(*v), 10)
	case *uint64:
		return strconv.FormatUint(*v, 10)
	case *int64:
		return strconv.FormatInt(*v, 10)
	case *float64:
		// A TOML float needs a fraction or exponent; 1 would read back as
		// an integer (which float keys accept, but the file should show
		// the type).
		f := strconv.FormatFloat(*v, 'g', -1, 64)
		if !strings.ContainsAny(f, ".e") {
			f += ".0"
		}
		return f
	case *[]string:
		q := make([]string, len(*v))
		for i, s := range *v {
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	panic(fmt.Sprintf("config: no TOML rendering for %T", p))
}

func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
