package mcpproxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/client"
)

// downTransport fails every request, as a stopped server does, without
// touching the network.
type downTransport struct{}

func (downTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("connection refused (fuzz)")
}

// FuzzStdio feeds arbitrary bytes to the proxy's stdin, with a message
// limit of its own, and checks the framing: Serve ends cleanly at the end
// of the input; stdout holds only whole JSON-RPC 2.0 answers, one a line;
// no message is answered twice; a line over the limit (terminator not
// counted) is answered with one invalid-request error and a line within it
// is never refused as too long; and every well-formed request (an object
// with "jsonrpc":"2.0", a method, a string or integer id and no result)
// gets an answer carrying its id. Tool calls reach a server that is down.
func FuzzStdio(f *testing.F) {
	c, err := client.New("http://127.0.0.1:9", client.Options{HTTPClient: &http.Client{Transport: downTransport{}}})
	if err != nil {
		f.Fatal(err)
	}
	p := New(c, Options{ServerURL: c.URL(), Version: "fuzz"})
	for _, s := range []struct {
		in    string
		limit uint16
	}{
		{initializeMsg + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n", 0},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"stats","arguments":{}}}` + "\r\n\n  \n" + `{"jsonrpc":"2.0","id":3,"method":"ping"}`, 0},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + strings.Repeat("x", 50) + "\n{not json\n", 40},
		{`{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n", 40}, // exactly the limit
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":null,"method":"ping"}` + "\n" + `[1,2]` + "\n" + `{"jsonrpc":"2.0","id":1,"result":{}}`, 0},
		{`{"jsonrpc":"2.0","id":-12,"method":"tools/call","params":{"name":"recall","arguments":{"query":"x"}}}` + "\n" + `{"jsonrpc":"2.0","id":1.5,"method":"nope"}`, 0},
	} {
		f.Add([]byte(s.in), s.limit)
	}
	f.Fuzz(func(t *testing.T, in []byte, limit uint16) {
		if len(in) > 64<<10 {
			return
		}
		lim := int(limit)
		if lim == 0 {
			lim = maxMessageBytes
		}
		p.maxMessage = lim
		var out bytes.Buffer
		if err := p.Serve(t.Context(), bytes.NewReader(in), &out); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		answers := parseAnswers(t, out.Bytes())
		msgs, tooLong := 0, 0
		want := map[string]int{} // well-formed requests by id
		for _, line := range inputLines(in) {
			if len(line) > lim {
				tooLong++
				continue
			}
			if len(trimSpace(line)) == 0 {
				continue
			}
			msgs++
			if id, ok := requestID(trimSpace(line)); ok {
				want[id]++
			}
		}
		if len(answers) > msgs+tooLong {
			t.Fatalf("%d answers to %d messages and %d over-long lines:\n%s", len(answers), msgs, tooLong, out.Bytes())
		}
		got := map[string]int{}
		refused := 0
		tooLongMsg := fmt.Sprintf("message longer than the limit of %d bytes", lim)
		for _, a := range answers {
			if a.Error != nil && a.Error.Message == tooLongMsg && a.Error.Code == -32600 && string(a.ID) == "null" {
				refused++
			}
			if id, ok := normalID(a.ID); ok {
				got[id]++
			}
		}
		if refused != tooLong {
			t.Fatalf("%d over-long lines, %d refused as too long:\n%s", tooLong, refused, out.Bytes())
		}
		for id, n := range want {
			if got[id] < n {
				t.Fatalf("%d requests with id %s, %d answers:\n%s", n, id, got[id], out.Bytes())
			}
		}
	})
}

// inputLines splits stdin into lines without their "\n"; a last line may
// lack it.
func inputLines(in []byte) [][]byte {
	var out [][]byte
	for len(in) > 0 {
		i := bytes.IndexByte(in, '\n')
		if i < 0 {
			return append(out, in)
		}
		out = append(out, in[:i])
		in = in[i+1:]
	}
	return out
}

// answer is one line of stdout.
type answer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// parseAnswers requires every line of out to be one JSON-RPC 2.0 answer.
func parseAnswers(t *testing.T, out []byte) []answer {
	t.Helper()
	var all []answer
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var a answer
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		if err := dec.Decode(&a); err != nil || dec.More() || a.JSONRPC != "2.0" || len(a.ID) == 0 || (a.Result == nil) == (a.Error == nil) {
			t.Fatalf("stdout line is not one JSON-RPC 2.0 answer: %q", sc.Bytes())
		}
		all = append(all, a)
	}
	if len(out) > 0 && out[len(out)-1] != '\n' {
		t.Fatalf("stdout ends in a partial line: %q", out)
	}
	return all
}

// integerID is an integer id that reads back as itself.
var integerID = regexp.MustCompile(`^(0|-?[1-9][0-9]{0,17})$`)

// requestID returns the id of a well-formed request, normalised.
func requestID(msg []byte) (string, bool) {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}
	if json.Unmarshal(msg, &m) != nil || m.JSONRPC != "2.0" || m.Method == "" || m.Result != nil {
		return "", false
	}
	return normalID(m.ID)
}

// normalID renders a string or integer id the same way whatever its
// spelling.
func normalID(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if integerID.Match(raw) {
		return "n" + string(raw), true
	}
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return "s" + s, true
	}
	return "", false
}
