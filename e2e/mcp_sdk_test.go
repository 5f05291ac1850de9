package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"memsvc.dev/memsvc/internal/testkit"
)

// The official MCP client libraries against memsvc-mcp: every tool is
// called through each, and each sees structuredContent that validates
// against the tool's outputSchema. The TypeScript SDK checks that itself
// when it calls a tool; for the Go SDK (which does not) the test does.

const (
	// mcpSDKPackage is the official TypeScript SDK, pinned so that a new
	// release cannot change the test under us.
	mcpSDKPackage = "@modelcontextprotocol/sdk"
	mcpSDKVersion = "1.32.2"
	// npmInstallTimeout bounds installing it.
	npmInstallTimeout = 5 * time.Minute
)

// npmUnreachableRE matches npm's complaints about a registry it cannot
// reach (the same classification as memsvc-bench's peer install).
var npmUnreachableRE = regexp.MustCompile(`(?i)\bE(NOTFOUND|AI_AGAIN|CONNREFUSED|CONNRESET|TIMEDOUT|NETUNREACH|HOSTUNREACH)\b|network|fetch failed|request to \S+ failed`)

// npmPackage returns an npm prefix holding pkg@version: the user's cache
// directory's memsvc-e2e/npm (memsvc-bench keeps its npm peer the same
// way), installed there with npm when missing. Without npm or the registry
// the test fails and says what is needed; it is not skipped.
func npmPackage(t *testing.T, pkg, version string) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	prefix := filepath.Join(base, "memsvc-e2e", "npm")
	if npmVersion(prefix, pkg) != version {
		t.Logf("installing %s@%s into %s with npm", pkg, version, prefix)
	}
	if err := npmInstall(t.Context(), prefix, pkg, version); err != nil {
		t.Fatal(err)
	}
	return prefix
}

// npmVersion is the version of pkg installed under prefix, or "".
func npmVersion(prefix, pkg string) string {
	var m struct{ Version string }
	b, err := os.ReadFile(filepath.Join(prefix, "node_modules", filepath.FromSlash(pkg), "package.json"))
	if err != nil || json.Unmarshal(b, &m) != nil {
		return ""
	}
	return m.Version
}

// npmInstall installs pkg@version under prefix with npm unless it is
// there. Its errors say what is missing: npm, the registry, or a working
// install.
func npmInstall(ctx context.Context, prefix, pkg, version string) error {
	if npmVersion(prefix, pkg) == version {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("npm is not installed: this test installs %s@%s with npm (Node.js 20 or later and npm are needed)", pkg, version)
	}
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, npmInstallTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel", "error", pkg+"@"+version).CombinedOutput()
	switch {
	case err != nil && (ctx.Err() != nil || npmUnreachableRE.Match(out)):
		return fmt.Errorf("npm cannot reach the registry to install %s@%s into %s (%v): this test needs the npm registry, "+
			"or that directory filled beforehand with `npm install --prefix %s %s@%s`\n%s", pkg, version, prefix, err, prefix, pkg, version, out)
	case err != nil:
		return fmt.Errorf("npm install %s@%s into %s: %w\n%s", pkg, version, prefix, err, out)
	case npmVersion(prefix, pkg) != version:
		return fmt.Errorf("npm installed %s into %s, but it reports version %q, want %s\n%s", pkg, prefix, npmVersion(prefix, pkg), version, out)
	}
	return nil
}

// TestNPMInstallFailsClearly: when npm is missing or cannot reach the
// registry, installing the SDK fails with a message that says so (the SDK
// test then fails; it is never skipped).
func TestNPMInstallFailsClearly(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	prefix := filepath.Join(t.TempDir(), "npm")
	err := npmInstall(t.Context(), prefix, mcpSDKPackage, mcpSDKVersion)
	if err == nil || !strings.Contains(err.Error(), "npm is not installed") {
		t.Fatalf("without npm: %v", err)
	}
	// An npm that cannot reach the registry, as npm reports it.
	script := "#!/bin/sh\necho 'npm error code ENOTFOUND' >&2\necho 'npm error request to https://registry.npmjs.org/@modelcontextprotocol%2fsdk failed' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	err = npmInstall(t.Context(), prefix, mcpSDKPackage, mcpSDKVersion)
	if err == nil || !strings.Contains(err.Error(), "npm cannot reach the registry to install "+mcpSDKPackage+"@"+mcpSDKVersion) || !strings.Contains(err.Error(), "ENOTFOUND") {
		t.Fatalf("registry unreachable: %v", err)
	}
	// An npm that fails otherwise.
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte("#!/bin/sh\necho 'npm error code E403' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = npmInstall(t.Context(), prefix, mcpSDKPackage, mcpSDKVersion)
	if err == nil || !strings.Contains(err.Error(), "npm install "+mcpSDKPackage+"@"+mcpSDKVersion) || !strings.Contains(err.Error(), "E403") {
		t.Fatalf("npm failing: %v", err)
	}
}

// toolCaller calls one tool through a client library; it fails the test
// unless the call succeeds, and returns the structuredContent the library
// received, as JSON.
type toolCaller func(tool string, args map[string]any) json.RawMessage

// sdkScenario calls every tool once or more, with the argument forms the
// schemas declare (arrays and objects), and checks what comes back. It
// returns the names of the tools it called.
func sdkScenario(t *testing.T, exportDir string, call toolCaller) []string {
	t.Helper()
	var called []string
	do := func(tool string, args map[string]any, v any) {
		t.Helper()
		called = append(called, tool)
		if err := json.Unmarshal(call(tool, args), v); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
	}
	type stored struct {
		RecordID string `json:"record_id"`
		Store    string `json:"store"`
	}
	var rec stored
	do("store", map[string]any{"content": "the deploy key rotates on Fridays", "store": "semantic", "emotion": "trust",
		"meta_json": map[string]any{"intent": "remember the rotation", "tags": []string{"ops"}, "alternatives": []any{map[string]any{"option": "monthly", "chosen": false}}}}, &rec)
	if rec.Store != "semantic" || rec.RecordID == "" {
		t.Fatalf("store: %+v", rec)
	}
	var raw struct {
		SessionID    string `json:"session_id"`
		SecrecyLevel string `json:"secrecy_level"`
	}
	do("store_raw", map[string]any{"content": "user: when do keys rotate?", "session_id": "s1", "topic_id": "keys", "meta_json": map[string]any{"intent": "ask"}}, &raw)
	if raw.SessionID != "s1" || raw.SecrecyLevel != "public" {
		t.Fatalf("store_raw: %+v", raw)
	}
	var batch struct {
		Results              []stored `json:"results"`
		AssociationsInferred int      `json:"associations_inferred"`
	}
	do("batch_store", map[string]any{"records": []any{
		map[string]any{"content": "release step one: build"},
		map[string]any{"content": "release step two: deploy", "store": "procedural", "meta_json": map[string]any{"rationale": "order matters"}},
	}}, &batch)
	if len(batch.Results) != 2 || batch.AssociationsInferred != 2 || batch.Results[1].Store != "procedural" {
		t.Fatalf("batch_store: %+v", batch)
	}
	var rawBatch struct {
		Results []struct {
			SessionID string `json:"session_id"`
		} `json:"results"`
	}
	do("batch_store_raw", map[string]any{"records": []any{
		map[string]any{"content": "assistant: every Friday", "session_id": "s1", "speaker": "assistant", "topic_id": "keys"},
	}}, &rawBatch)
	if len(rawBatch.Results) != 1 || rawBatch.Results[0].SessionID != "s1" {
		t.Fatalf("batch_store_raw: %+v", rawBatch)
	}
	var upd struct {
		RecordID string   `json:"record_id"`
		Updated  []string `json:"updated"`
	}
	do("update", map[string]any{"record_id": rec.RecordID, "content": "the deploy key rotates every Friday", "emotion": "joy",
		"meta_json": map[string]any{"rationale": "the policy changed", "evidence": []any{map[string]any{"label": "policy", "uri": "https://example.invalid/policy"}}}}, &upd)
	if upd.RecordID != rec.RecordID || !slices.Equal(upd.Updated, []string{"content", "emotion", "meta_json"}) {
		t.Fatalf("update: %+v", upd)
	}
	var recalled struct {
		Memories []struct {
			RecordID string  `json:"record_id"`
			Text     string  `json:"text"`
			Emotion  *string `json:"emotion"`
		} `json:"memories"`
		QueryMetadata struct {
			StoresSearched []string `json:"stores_searched"`
		} `json:"query_metadata"`
	}
	do("recall", map[string]any{"query": "deploy key rotation", "stores": []string{"semantic", "episodic"}, "limit": 5}, &recalled)
	if len(recalled.Memories) == 0 || recalled.Memories[0].RecordID != rec.RecordID || recalled.Memories[0].Text != "the deploy key rotates every Friday" ||
		recalled.Memories[0].Emotion == nil || *recalled.Memories[0].Emotion != "joy" || !slices.Equal(recalled.QueryMetadata.StoresSearched, []string{"semantic", "episodic"}) {
		t.Fatalf("recall: %+v", recalled)
	}
	var rawRecalled struct {
		Records []struct {
			Text    string `json:"text"`
			Speaker string `json:"speaker"`
		} `json:"records"`
		TotalCandidates int `json:"total_candidates"`
	}
	do("recall_raw", map[string]any{"session_id": "s1", "secrecy_levels": []string{"public", "sensitive"}}, &rawRecalled)
	if rawRecalled.TotalCandidates != 2 || len(rawRecalled.Records) != 2 {
		t.Fatalf("recall_raw: %+v", rawRecalled)
	}
	var tl struct {
		Buckets []struct {
			Count int `json:"count"`
		} `json:"buckets"`
	}
	do("timeline", map[string]any{"granularity": "day"}, &tl)
	if len(tl.Buckets) != 1 || tl.Buckets[0].Count != 3 {
		t.Fatalf("timeline: %+v", tl)
	}
	var assoc struct {
		Memories []struct {
			Record struct {
				ID string `json:"id"`
			} `json:"record"`
		} `json:"memories"`
	}
	do("associate", map[string]any{"record_id": batch.Results[0].RecordID}, &assoc)
	if len(assoc.Memories) == 0 || assoc.Memories[0].Record.ID != batch.Results[1].RecordID {
		t.Fatalf("associate: %+v", assoc)
	}
	var inspected struct {
		Version int `json:"version"`
		Meta    struct {
			Rationale *string `json:"rationale"`
		} `json:"meta"`
	}
	do("inspect", map[string]any{"record_id": rec.RecordID}, &inspected)
	if inspected.Version != 2 || inspected.Meta.Rationale == nil || *inspected.Meta.Rationale != "the policy changed" {
		t.Fatalf("inspect: %+v", inspected)
	}
	var dreamt struct {
		RawRecordsProcessed int `json:"raw_records_processed"`
	}
	do("dream_tick", map[string]any{"session_id": "s1", "secrecy_levels": []string{"public"}}, &dreamt)
	if dreamt.RawRecordsProcessed != 2 {
		t.Fatalf("dream_tick: %+v", dreamt)
	}
	var consolidated struct {
		RecordsProcessed *int `json:"records_processed"`
	}
	do("consolidate", map[string]any{"strategy": "full", "dry_run": true}, &consolidated)
	if consolidated.RecordsProcessed == nil {
		t.Fatalf("consolidate: %+v", consolidated)
	}
	var stats struct {
		RawJournalRecords int `json:"raw_journal_records"`
	}
	do("stats", map[string]any{}, &stats)
	if stats.RawJournalRecords != 2 {
		t.Fatalf("stats: %+v", stats)
	}
	var exported struct {
		Path        string `json:"path"`
		SizeBytes   int64  `json:"size_bytes"`
		RecordCount int    `json:"record_count"`
	}
	do("export", map[string]any{"output_path": "sdk.cma"}, &exported)
	if st, err := os.Stat(exported.Path); err != nil || exported.Path != filepath.Join(exportDir, "sdk.cma") || st.Size() != exported.SizeBytes || exported.RecordCount == 0 {
		t.Fatalf("export: %+v (%v)", exported, err)
	}
	var forgot struct {
		RecordsDeleted int `json:"records_deleted"`
	}
	do("forget", map[string]any{"record_ids": []string{rec.RecordID}, "confirm": true}, &forgot)
	if forgot.RecordsDeleted != 1 {
		t.Fatalf("forget: %+v", forgot)
	}
	return called
}

// checkAllCalled requires the scenario to have called every listed tool.
func checkAllCalled(t *testing.T, listed, called []string) {
	t.Helper()
	for _, name := range listed {
		if !slices.Contains(called, name) {
			t.Errorf("tool %s was never called", name)
		}
	}
	if len(listed) != 15 {
		t.Errorf("%d tools listed, want 15: %v", len(listed), listed)
	}
}

// sdkBridge is testdata/mcp-sdk-client.mjs running the TypeScript SDK's
// client against an MCP server command.
type sdkBridge struct {
	*lineProcess
	t      *testing.T
	nextID int
}

// sdkAnswer is the bridge's answer to one call.
type sdkAnswer struct {
	ID     int
	Error  *string // the SDK threw: refused the answer, or a protocol error
	Result *struct {
		Content []struct {
			Type, Text string
		}
		StructuredContent json.RawMessage
		IsError           bool
	}
}

// startSDKBridge starts the bridge with the SDK installed under prefix and
// waits until it has connected to the server and listed its tools.
func startSDKBridge(t *testing.T, prefix string, server ...string) (*sdkBridge, []map[string]any) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: this test runs the MCP TypeScript SDK (Node.js 20 or later): %v", err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "mcp-sdk-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, append([]string{script, prefix}, server...)...)
	cmd.Env = cleanEnv(t)
	b := &sdkBridge{lineProcess: startLines(t, cmd), t: t}
	var ready struct {
		Ready struct {
			Tools []map[string]any
		}
	}
	if line := b.next(t, "the tool list"); json.Unmarshal(line, &ready) != nil || ready.Ready.Tools == nil {
		t.Fatalf("first line from the SDK client: %s\n%s", line, b.log())
	}
	return b, ready.Ready.Tools
}

// call calls tool through the SDK and returns the bridge's answer.
func (b *sdkBridge) call(tool string, args map[string]any) sdkAnswer {
	b.t.Helper()
	b.nextID++
	req, err := json.Marshal(map[string]any{"id": b.nextID, "tool": tool, "arguments": args})
	if err != nil {
		b.t.Fatal(err)
	}
	if _, err := b.stdin.Write(append(req, '\n')); err != nil {
		b.t.Fatalf("write to the SDK client: %v\n%s", err, b.log())
	}
	var ans sdkAnswer
	line := b.next(b.t, tool+" answer")
	if err := json.Unmarshal(line, &ans); err != nil || ans.ID != b.nextID || (ans.Error == nil) == (ans.Result == nil) {
		b.t.Fatalf("%s: answer %s (%v)", tool, line, err)
	}
	return ans
}

// TestMCPTypeScriptSDK drives memsvc-mcp, against a real server, with the
// official TypeScript SDK's client (installed from npm): it lists the
// tools and calls every one, and the SDK validates each structuredContent
// against the tool's outputSchema (ajv, with formats) as it receives it.
func TestMCPTypeScriptSDK(t *testing.T) {
	prefix := npmPackage(t, mcpSDKPackage, mcpSDKVersion)

	// The check is live: an answer that does not match its outputSchema
	// is refused by the SDK, and the bridge reports it.
	t.Run("refuses a wrong answer", func(t *testing.T) {
		node, _ := exec.LookPath("node")
		fake, err := filepath.Abs(filepath.Join("testdata", "mcp-wrong-answer-server.mjs"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := startSDKBridge(t, prefix, node, fake)
		ans := b.call("count", map[string]any{})
		if ans.Error == nil || !strings.Contains(*ans.Error, "does not match the tool's output schema") {
			t.Fatalf("the SDK accepted a structuredContent that does not match the outputSchema: %+v", ans)
		}
		b.closeAndWait(t)
	})

	srv := startServer(t, t.TempDir())
	out := t.TempDir()
	b, tools := startSDKBridge(t, prefix, filepath.Join(binDir, "memsvc-mcp"), "--server-url", srv.url(""), "--export-dir", out)
	schemas := outputSchemas(t, tools)
	var listed []string
	for _, tl := range tools {
		listed = append(listed, tl["name"].(string))
	}
	call := func(tool string, args map[string]any) json.RawMessage {
		t.Helper()
		ans := b.call(tool, args)
		switch {
		case ans.Error != nil:
			t.Fatalf("%s: the TypeScript SDK refused the answer: %s", tool, *ans.Error)
		case ans.Result.IsError || len(ans.Result.Content) != 1 || ans.Result.Content[0].Type != "text":
			t.Fatalf("%s %v: %+v", tool, args, ans.Result)
		}
		checkStructured(t, schemas, tool, ans.Result.StructuredContent, ans.Result.Content[0].Text)
		return ans.Result.StructuredContent
	}
	checkAllCalled(t, listed, sdkScenario(t, out, call))

	// A failed call is an error result without structuredContent, which
	// the SDK passes on.
	ans := b.call("inspect", map[string]any{"record_id": "0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f"})
	if ans.Error != nil || !ans.Result.IsError || ans.Result.StructuredContent != nil {
		t.Fatalf("inspect of a missing record: %+v", ans)
	}
	b.closeAndWait(t)
	if !strings.Contains(b.log(), "MCP proxy serving on stdio") {
		t.Errorf("memsvc-mcp's log did not reach the SDK client's stderr:\n%s", b.log())
	}
	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

// TestMCPGoSDK drives memsvc-mcp, against a real server, with the official
// Go SDK's client: it lists the tools and calls every one, and checks each
// structuredContent against the tool's outputSchema.
func TestMCPGoSDK(t *testing.T) {
	srv := startServer(t, t.TempDir())
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	cmd := binCmd(t, "memsvc-mcp", nil, "--server-url", srv.url(""), "--export-dir", out)
	var log testkit.SyncBuffer
	cmd.Stderr = &log
	stderr := log.String
	client := mcp.NewClient(&mcp.Implementation{Name: "memsvc-e2e", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr())
	}
	defer session.Close()
	if info := session.InitializeResult().ServerInfo; info == nil || info.Name != "memsvc" {
		t.Fatalf("serverInfo %+v", info)
	}

	list, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The tool list as plain JSON, as any client decodes it.
	b, err := json.Marshal(list.Tools)
	if err != nil {
		t.Fatal(err)
	}
	var tools []map[string]any
	if err := json.Unmarshal(b, &tools); err != nil {
		t.Fatal(err)
	}
	schemas := outputSchemas(t, tools)
	var listed []string
	for _, tl := range list.Tools {
		listed = append(listed, tl.Name)
	}

	call := func(tool string, args map[string]any) json.RawMessage {
		t.Helper()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v\n%s", tool, err, stderr())
		}
		var text string
		if len(res.Content) == 1 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		if res.IsError || text == "" || res.StructuredContent == nil {
			t.Fatalf("%s %v: error %v, text %q, structured %v", tool, args, res.IsError, text, res.StructuredContent)
		}
		structured, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		checkStructured(t, schemas, tool, structured, text)
		return structured
	}
	called := sdkScenario(t, out, call)
	checkAllCalled(t, listed, called)

	// A failed call is an error result without structuredContent.
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "inspect", Arguments: map[string]any{"record_id": "0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f"}})
	if err != nil || !res.IsError || res.StructuredContent != nil {
		t.Fatalf("inspect of a missing record: %+v %v", res, err)
	}

	if err := session.Close(); err != nil && !errors.Is(err, io.EOF) {
		t.Errorf("close: %v", err)
	}
	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}
