// Package hooks holds the coding-agent hook helpers that
// `memsvc-recorder install-hook <agent>` writes into a project: a POSIX sh
// script that queues each hook payload with `memsvc-recorder hook <agent>
// --queue-only` and sends the queue with `memsvc-recorder flush` in the
// background, and an example JSON file showing how to register that script
// for the agent's hook events (for Codex it is a complete .codex/hooks.json).
// The templates are the *.tmpl files of this directory, embedded into the
// recorder binary.
//
// The registered command never holds an absolute path: Claude Code runs it
// with $CLAUDE_PROJECT_DIR set to the project, and Codex runs it in the
// session's working directory inside the project's work tree, so a
// registration checked into the repository works in every clone.
package hooks

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"path/filepath"
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
	Agent     string // "claude" or "codex"
	AgentName string // "Claude Code" or "Codex"
	ServerURL string // baked into the script
	Namespace string // baked into the script as MEMSVC_NAMESPACE
	Command   string // what the registration runs (see Command)
}

// Command is the command line the agent's hook registration runs for
// agent. It finds the script relative to the project, never by an absolute
// path:
//
//	claude  sh "$CLAUDE_PROJECT_DIR"/.claude/hooks/memsvc-recorder-claude-hook.sh
//	codex   sh "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"/SUB/.codex/hooks/memsvc-recorder-codex-hook.sh
//
// sub is the project directory relative to the top of its git work tree
// ("" when it is the top, or not in a work tree), for Codex only: Codex
// runs hooks in the session's directory, which may be below the project.
func Command(agent, sub string) (string, error) {
	if err := checkAgent(agent); err != nil {
		return "", err
	}
	rel := "/." + agent + "/hooks/" + ScriptName(agent)
	if agent == "claude" {
		return `sh "$CLAUDE_PROJECT_DIR"` + rel, nil
	}
	top := `"$(git rev-parse --show-toplevel 2>/dev/null || pwd)"`
	if sub = strings.Trim(filepath.ToSlash(sub), "/"); sub != "" && sub != "." {
		top += "/" + shellQuote(sub)
	}
	return "sh " + top + rel, nil
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

func checkAgent(agent string) error {
	if agent == "" || strings.ContainsAny(agent, "/\\ '\"$`") {
		return fmt.Errorf("hook template: bad agent name %q", agent)
	}
	return nil
}

func render(name string, p Params) ([]byte, error) {
	if err := checkAgent(p.Agent); err != nil {
		return nil, err
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
