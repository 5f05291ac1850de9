package redact

import "strings"

// redactKubeSecrets replaces the values under data: and stringData: of
// Kubernetes Secret manifests (kubectl get secret -o yaml or -o json):
// every value there is a secret, whatever its key is called.
//
// In YAML, the manifest is the "---"-separated document that holds a line
// "kind: Secret"; the values are those of the "key: value" lines indented
// under a "data:" or "stringData:" line (block scalars included). In JSON,
// the text must hold "kind": "Secret" and the values are the strings of the
// flat objects after "data": and "stringData":.
func redactKubeSecrets(s string) string {
	if !strings.Contains(s, "Secret") {
		return s
	}
	yaml := strings.Contains(s, "kind: Secret")
	json := strings.Contains(s, `"kind": "Secret"`) || strings.Contains(s, `"kind":"Secret"`)
	if !yaml && !json {
		return s
	}
	e := editor{src: s}
	if yaml {
		kubeYAML(s, &e)
	}
	if json && !e.used {
		kubeJSON(s, &e)
	}
	return e.String()
}

// kubeYAML redacts the data of the YAML documents that are Secrets.
func kubeYAML(s string, e *editor) {
	for docStart := 0; docStart < len(s); {
		docEnd := len(s)
		if k := strings.Index(s[docStart:], "\n---"); k >= 0 {
			docEnd = docStart + k + 1
		}
		doc := s[docStart:docEnd]
		if hasLine(doc, "kind: Secret") {
			kubeYAMLDoc(s, docStart, docEnd, e)
		}
		docStart = docEnd + 3
	}
}

// hasLine reports whether a line of doc, trimmed, is want.
func hasLine(doc, want string) bool {
	for doc != "" {
		line, rest, _ := strings.Cut(doc, "\n")
		if strings.TrimSpace(line) == want {
			return true
		}
		doc = rest
	}
	return false
}

// kubeYAMLDoc redacts the values under data: and stringData: in s[from:to].
func kubeYAMLDoc(s string, from, to int, e *editor) {
	dataIndent := -1 // indentation of the data: line we are under, or -1
	block := -1      // indentation of a block scalar's key, or -1
	for p := from; p < to; {
		end := to
		if k := strings.IndexByte(s[p:to], '\n'); k >= 0 {
			end = p + k
		}
		line := s[p:end]
		ind := 0
		for ind < len(line) && line[ind] == ' ' {
			ind++
		}
		body := strings.TrimRight(line[ind:], " \r")
		switch {
		case body == "":
		case block >= 0 && ind > block:
			if v := p + ind; v >= e.last && !isPlaceholder(body) {
				e.replace(v, v+len(body), Marker)
			}
		case dataIndent >= 0 && ind > dataIndent:
			block = -1
			if c := strings.Index(body, ": "); c > 0 && isKubeKey(body[:c]) {
				v := strings.TrimSpace(body[c+2:])
				switch {
				case v == "|" || v == ">" || v == "|-" || v == ">-":
					block = ind
				case v != "" && !isPlaceholder(v) && !isPlaceholder(strings.Trim(v, `"'`)):
					vs := p + ind + c + 2 + strings.Index(body[c+2:], v)
					if strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "'") {
						vs++
						v = v[1 : len(v)-1]
					}
					if vs >= e.last && v != "" {
						e.replace(vs, vs+len(v), Marker)
					}
				}
			}
		default:
			dataIndent, block = -1, -1
			if body == "data:" || body == "stringData:" {
				dataIndent = ind
			}
		}
		p = end + 1
	}
}

// isKubeKey reports a Secret data key: letters, digits, '-', '_' and '.'.
func isKubeKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if !isKeyChar(k[i]) {
			return false
		}
	}
	return k != ""
}

// kubeJSON redacts the string values of the flat objects after "data": and
// "stringData": in a JSON Secret.
func kubeJSON(s string, e *editor) {
	for i := 0; ; {
		k, n := strings.Index(s[i:], `"data"`), len(`"data"`)
		if k2 := strings.Index(s[i:], `"stringData"`); k2 >= 0 && (k < 0 || k2 < k) {
			k, n = k2, len(`"stringData"`)
		}
		if k < 0 {
			return
		}
		p := i + k + n
		i = p
		for p < len(s) && isSpace(s[p]) {
			p++
		}
		if p >= len(s) || s[p] != ':' {
			continue
		}
		p++
		for p < len(s) && isSpace(s[p]) {
			p++
		}
		if p >= len(s) || s[p] != '{' {
			continue
		}
		i = kubeJSONObject(s, p+1, e)
	}
}

// kubeJSONObject redacts the values of "key": "value" members from p to the
// closing brace and returns where it stopped.
func kubeJSONObject(s string, p int, e *editor) int {
	for p < len(s) {
		for p < len(s) && (isSpace(s[p]) || s[p] == ',') {
			p++
		}
		if p >= len(s) || s[p] != '"' {
			return p
		}
		ke, ok := closingQuote(s, p+1, '"', false)
		if !ok {
			return p
		}
		p = ke + 1
		for p < len(s) && isSpace(s[p]) {
			p++
		}
		if p >= len(s) || s[p] != ':' {
			return p
		}
		p++
		for p < len(s) && isSpace(s[p]) {
			p++
		}
		if p >= len(s) || s[p] != '"' {
			return p
		}
		ve, ok := closingQuote(s, p+1, '"', false)
		if !ok {
			return p
		}
		if v := s[p+1 : ve]; v != "" && !isPlaceholder(v) && p+1 >= e.last {
			e.replace(p+1, ve, Marker)
		}
		p = ve + 1
	}
	return p
}
