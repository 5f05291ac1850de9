// Package redacttest generates the corpus the redaction tests run on:
// secrets of every shape and context the redactor must catch, and
// look-alikes it must leave alone, embedded in realistic capture events and
// hook payloads.
//
// Everything is generated from fixed seeds, so the corpus is the same on
// every run, and nothing in the repository looks like a live credential to
// a secret scanner: every random body is made at run time.
package redacttest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Secret is one generated secret and the text that carries it.
type Secret struct {
	Family string // the kind of secret, for reports
	Value  string // the secret: no part of it may survive redaction
	Line   string // the text it appears in
}

// Secrets returns the secret corpus: every token family in several neutral
// contexts, every keyed provider family in several syntaxes, and every
// context family (command lines, variables, URLs, netrc, code, Kubernetes
// secrets) in each of its forms.
func Secrets() []Secret {
	g := newGen(1)
	var out []Secret
	n := 0
	for _, f := range tokenFamilies() {
		for range 3 {
			v := f.make(g)
			out = append(out, Secret{f.name, v, fill(neutralContexts[n%len(neutralContexts)], v)})
			n++
		}
	}
	for _, f := range urlTokenFamilies() {
		for _, tmpl := range []string{"POST {} 200 OK", `{"webhook": "{}"}`, "notify: {}/send"} {
			v := f.make(g)
			out = append(out, Secret{f.name, v, fill(tmpl, f.prefix+v)})
		}
	}
	for _, f := range keyedFamilies() {
		for _, tmpl := range keyedLines {
			v := f.make(g)
			out = append(out, Secret{f.name, v, fill(strings.ReplaceAll(tmpl, "{k}", f.key), v)})
		}
	}
	for _, f := range contextFamilies() {
		for _, tmpl := range f.lines {
			v := f.make(g)
			out = append(out, Secret{f.name, v, fill(tmpl, v)})
		}
	}
	out = append(out, kubernetesSecrets(g)...)
	return out
}

// kubernetesSecrets are `kubectl get secret -o yaml` outputs: every value
// under data is a secret whatever its key is called.
func kubernetesSecrets(g *gen) []Secret {
	var out []Secret
	for i := range 4 {
		conn := b64Of("Server=db;Database=app;User Id=sa;Password=" + g.password(14))
		cfg := b64Of(`{"auths":{"registry.example.com":{"auth":"` + b64Of("bot:"+g.password(12)) + `"}}}`)
		pw := b64Of(g.password(16))
		doc := "apiVersion: v1\ndata:\n  .dockerconfigjson: " + cfg + "\n  connection: " + conn + "\n  password: " + pw +
			"\nkind: Secret\nmetadata:\n  name: app-" + fmt.Sprint(i) + "\n  namespace: default\ntype: Opaque\n"
		if i == 3 {
			doc = `{"apiVersion":"v1","data":{".dockerconfigjson":"` + cfg + `","connection":"` + conn + `","password":"` + pw +
				`"},"kind":"Secret","metadata":{"name":"app","namespace":"default"},"type":"Opaque"}`
		} else if i%2 == 1 {
			doc = "kind: Secret\napiVersion: v1\nmetadata:\n  name: app\nstringData:\n  token: " + pw + "\ndata:\n  connection: " + conn + "\n  .dockerconfigjson: " + cfg + "\n"
		}
		for _, v := range []string{cfg, conn, pw} {
			out = append(out, Secret{"kubernetes-secret", v, doc})
		}
	}
	return out
}

// Event is one capture event of the corpus, as a JSON line for
// memsvc-recorder ingest.
type Event struct {
	Line []byte
	// Texts are the corpus strings it carries: secrets for SecretEvents,
	// the look-alike for LookAlikeEvents.
	Texts []string
}

// eventOf embeds text in the i-th kind of event: a user message, a tool
// call, a tool result, the metadata of an event or its meta-memory.
func eventOf(i int, text string) []byte {
	ev := map[string]any{"session_id": fmt.Sprintf("corpus-%d", i/5), "turn_id": fmt.Sprintf("t%d", i)}
	switch i % 5 {
	case 0:
		ev["event_type"], ev["content"] = "user_message", text
	case 1:
		ev["event_type"] = "tool_call"
		ev["content"] = map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": text, "description": "run the step"}}
	case 2:
		ev["event_type"] = "tool_result"
		ev["content"] = map[string]any{"stdout": "starting\n" + text + "\ndone\n", "stderr": "", "exit_code": 0}
	case 3:
		ev["event_type"], ev["content"] = "command", "ran the deploy step"
		ev["metadata"] = map[string]any{"cwd": "/home/dev/app", "note": text, "lines": []string{text}}
	default:
		ev["event_type"], ev["content"] = "assistant_message", "decision recorded"
		ev["meta"] = map[string]any{"schema_version": 1, "capture_status": "provided", "intent": text, "goals": []string{text}}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return b
}

// SecretEvents embeds every secret of Secrets in a capture event.
func SecretEvents() []Event {
	var out []Event
	for i, s := range Secrets() {
		out = append(out, Event{Line: eventOf(i, s.Line), Texts: []string{s.Value}})
	}
	return out
}

// LookAlikeEvents embeds every look-alike in a capture event.
func LookAlikeEvents() []Event {
	var out []Event
	for i, s := range LookAlikes() {
		out = append(out, Event{Line: eventOf(i, s), Texts: []string{s}})
	}
	return out
}

// HookPayload returns a Claude Code PostToolUse payload that runs line as a
// Bash command and prints it back.
func HookPayload(i int, line string) []byte {
	b, err := json.Marshal(map[string]any{
		"session_id":      fmt.Sprintf("3fa85f64-5717-4562-b3fc-%012d", i),
		"transcript_path": "/home/dev/.claude/projects/app/session.jsonl",
		"cwd":             "/home/dev/app",
		"hook_event_name": "PostToolUse",
		"tool_name":       "Bash",
		"tool_input":      map[string]any{"command": line, "description": "run it"},
		"tool_response":   map[string]any{"stdout": line + "\n", "stderr": "", "interrupted": false, "isImage": false},
		"tool_use_id":     fmt.Sprintf("toolu_%04d", i),
	})
	if err != nil {
		panic(err)
	}
	return b
}

// Leaks reports whether a part of secret survives in out: the whole
// secret, or any run of 12 of its bytes (any run of 8 for secrets under 16
// bytes, the whole of one under 8 bytes), in plain form or JSON-escaped.
func Leaks(out, secret string) bool { return len(Leaked(out, []string{secret})) > 0 }

// Leaked returns the secrets of which a part survives in out (see Leaks).
// It indexes out once, so checking many secrets against a large output
// stays cheap.
func Leaked(out string, secrets []string) []string {
	idx := map[string]bool{}
	for _, w := range []int{8, 12} {
		for i := 0; i+w <= len(out); i++ {
			idx[out[i:i+w]] = true
		}
	}
	var bad []string
	for _, secret := range secrets {
		if leaks(out, secret, idx) {
			bad = append(bad, secret)
		}
	}
	return bad
}

func leaks(out, secret string, idx map[string]bool) bool {
	for _, s := range []string{secret, jsonEscaped(secret)} {
		if len(s) < 8 {
			if strings.Contains(out, s) {
				return true
			}
			continue
		}
		w := 12
		if len(s) < 16 {
			w = 8
		}
		for i := 0; i+w <= len(s); i++ {
			if idx[s[i:i+w]] {
				return true
			}
		}
	}
	return false
}

func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
