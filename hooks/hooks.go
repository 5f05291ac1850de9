// Package hooks holds the coding-agent hook helpers that
// `memsvc-recorder install-hook <agent>` writes into a project: a POSIX sh
// script that hands each hook payload to `memsvc-recorder hook <agent>`,
// and an example JSON file showing how to register that script for the
// agent's hook events. The templates are the *.tmpl files of this
// directory, embedded into the recorder binary.
package hooks

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
)

//go:embed hook.sh.tmpl claude.example.json.tmpl codex.example.json.tmpl
var templates embed.FS

// ExampleName is the file name of the example configuration.
const ExampleName = "memsvc-recorder.example.json"

// ScriptName is the file name of the helper script for agent.
func ScriptName(agent string) string { return "memsvc-recorder-" + agent + "-hook.sh" }

// Params fill the templates.
type Params struct {
	Agent      string // "claude" or "codex"
	AgentName  string // "Claude Code" or "Codex"
	ServerURL  string // baked into the script
	Namespace  string // baked into the script as MEMSVC_NAMESPACE
	ScriptPath string // absolute path of the installed script
}

// Script renders the helper script.
func Script(p Params) ([]byte, error) {
	return render("hook.sh.tmpl", p)
}

// Example renders the example configuration for p.Agent; the result is
// valid JSON.
func Example(p Params) ([]byte, error) {
	out, err := render(p.Agent+".example.json.tmpl", p)
	if err != nil {
		return nil, err
	}
	if !json.Valid(out) {
		return nil, fmt.Errorf("hook example for %s: rendered JSON is not valid", p.Agent)
	}
	return out, nil
}

func render(name string, p Params) ([]byte, error) {
	if p.Agent == "" || strings.ContainsAny(p.Agent, "/\\ '\"") {
		return nil, fmt.Errorf("hook template: bad agent name %q", p.Agent)
	}
	t, err := template.New(name).Funcs(template.FuncMap{
		"sh":   shellQuote,
		"json": jsonString,
	}).ParseFS(templates, name)
	if err != nil {
		return nil, fmt.Errorf("hook template %s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, p); err != nil {
		return nil, fmt.Errorf("hook template %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// shellQuote quotes s for POSIX sh: inside single quotes, where each
// single quote of s ends the quoting, is escaped and restarts it.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// jsonString is s as a JSON string literal.
func jsonString(s string) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}
