package redact

import (
	"slices"
	"strings"
)

const (
	// maxCmdWords bounds the words of one command that are looked at.
	maxCmdWords = 48
	// maxCmdQuoted bounds a quoted argument, and maxCmdLookahead what is
	// read of the command a pipe feeds, so that the work per program name
	// stays bounded.
	maxCmdQuoted    = 1024
	maxCmdLookahead = 1024
)

// cmdWord is a word of a command line: s[start:end] as written, quotes
// included.
type cmdWord struct{ start, end int }

// cmdSpan is a part of the text to replace.
type cmdSpan struct{ start, end int }

// redactCommandLines replaces passwords that command-line programs take as
// arguments, where nothing but the program and the flag says that the
// argument is a password:
//
//	curl -u user:PW, --user user:PW, -U / --proxy-user user:PW
//	mysql, mysqldump, mariadb, ... -pPW        sshpass -p PW, -pPW
//	docker, podman, helm, ... login -p PW      az login -p PW
//	vault login TOKEN                          htpasswd -b[n] [file] user PW
//	redis-cli -a PW      ldapsearch, ldapadd, ... -w PW
//	sqlcmd, bcp -P PW    zip, unzip -P PW      7z -pPW
//	openssl -k PW, -pass/-passin/-passout pass:PW
//	keytool -storepass PW, -keypass PW, ...    mongo, mongosh, ... -p PW
//	smbclient -U user%PW lftp -u user,PW       sqlplus user/PW@db
//	rabbitmqctl add_user / change_password user PW
//	ConvertTo-SecureString "PW" -AsPlainText
//	gh secret set NAME -b / --body VALUE       kubectl ... --from-literal=K=V
//	set [-gx] NAME VALUE, setenv NAME VALUE (fish, csh, launchctl) and
//	npm/yarn/git/aws ... config set NAME VALUE, when NAME names a secret
//	echo PW | ... --password-stdin, | sudo -S, | chpasswd (user:PW)
//
// A program is a word at the start of the text or after white space or one
// of ; | & ( ` ' " $ = / (a path), followed by white space. Its arguments
// run to the end of the line or to ; | & ) ` or a backslash; a quoted
// argument keeps its quotes. The password must look like one (see
// credentialLike, 4 bytes or more) and must not be a placeholder, so prose
// ("docker login -p is insecure", "mysql -p prompts") and variables
// ("-p $DB_PASSWORD") stay.
func redactCommandLines(s string) string {
	e := editor{src: s}
	var words [maxCmdWords]cmdWord
	var spans []cmdSpan
	last := 0
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) && s[i] != '7' {
			continue
		}
		if i > 0 && !isCmdBoundary(s[i-1]) {
			continue
		}
		j := i
		for j < len(s) && (isKeyChar(s[j]) || s[j] == '/') {
			j++
		}
		if j >= len(s) || !isBlank(s[j]) {
			i = j
			continue
		}
		prog := s[i:j]
		if k := strings.LastIndexByte(prog, '/'); k >= 0 {
			prog = prog[k+1:]
		}
		h := cmdHandler(prog)
		if h == nil {
			i = j
			continue
		}
		n, end := cmdWords(s, j, &words)
		spans = h(s, words[:n], end, spans[:0])
		slices.SortFunc(spans, func(a, b cmdSpan) int { return a.start - b.start })
		for _, sp := range spans {
			if sp.start >= last && sp.end > sp.start {
				e.replace(sp.start, sp.end, Marker)
				last = sp.end
			}
		}
		// The arguments are not programs: go on after them, which keeps
		// the scan linear.
		i = max(j, end-1)
	}
	return e.String()
}

// isCmdBoundary reports the bytes a program name may follow.
func isCmdBoundary(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', ';', '|', '&', '(', '`', '\'', '"', '$', '=':
		return true
	}
	return false
}

// cmdWords reads the arguments that start after i, up to the end of the
// command, into words and returns their number and the end of the command.
func cmdWords(s string, i int, words *[maxCmdWords]cmdWord) (int, int) {
	n := 0
	for i < len(s) && n < maxCmdWords {
		for i < len(s) && isBlank(s[i]) {
			i++
		}
		if i >= len(s) || isCmdEnd(s[i]) {
			break
		}
		start := i
		closed := true
		for i < len(s) && !isBlank(s[i]) && !isCmdEnd(s[i]) {
			if q := s[i]; q == '"' || q == '\'' {
				// A quote opens an argument (or the value glued to a
				// flag); any other quote closes the string the command
				// is in.
				if i > start && s[start] != '-' && s[i-1] != '=' && s[i-1] != ':' {
					closed = false
					break
				}
				k := strings.IndexByte(s[i+1:min(len(s), i+1+maxCmdQuoted)], q)
				if k < 0 || strings.ContainsAny(s[i+1:i+1+k], "\n\r") {
					closed = false
					break
				}
				i += k + 2
				continue
			}
			i++
		}
		if i > start {
			words[n] = cmdWord{start, i}
			n++
		}
		if !closed {
			break
		}
	}
	return n, i
}

// isCmdEnd reports the bytes that end a command.
func isCmdEnd(c byte) bool {
	return isEOL(c) || strings.IndexByte(";&|)`\\", c) >= 0
}

// cmdHandler returns the handler of a program, or nil.
func cmdHandler(prog string) func(s string, w []cmdWord, end int, out []cmdSpan) []cmdSpan {
	switch prog {
	case "curl":
		return curlArgs
	case "mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck", "mysqlpump",
		"mysqlbinlog", "mariadb", "mariadb-dump", "mariadb-admin", "mariadb-import", "mariadb-check":
		return gluedFlag("-p")
	case "7z", "7za", "7zr":
		return gluedFlag("-p")
	case "sshpass":
		return joinHandlers(gluedFlag("-p"), nextAfter("-p"))
	case "docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras", "crane", "finch", "az":
		return afterWord("login", nextAfter("-p"))
	case "vault":
		return afterWord("login", firstPositional)
	case "htpasswd":
		return htpasswdArgs
	case "redis-cli":
		return nextAfter("-a")
	case "ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldappasswd", "ldapcompare",
		"ldapmodrdn", "ldapexop":
		return nextAfter("-w")
	case "sqlcmd", "bcp", "osql", "zip", "unzip", "zipcloak":
		return nextAfter("-P")
	case "openssl":
		return joinHandlers(nextAfter("-k"), opensslPass)
	case "keytool":
		return nextAfter("-storepass", "-keypass", "-srcstorepass", "-deststorepass", "-srckeypass", "-destkeypass", "-new")
	case "mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport", "mongostat", "mongotop":
		return nextAfter("-p")
	case "smbclient", "rpcclient", "smbcacls", "smbget":
		return userPassAfter('%', "-U", "--user")
	case "lftp":
		return userPassAfter(',', "-u")
	case "sqlplus", "sqlldr", "exp", "imp", "expdp", "impdp", "rman":
		return oracleLogon
	case "rabbitmqctl":
		return rabbitArgs
	case "ConvertTo-SecureString", "convertto-securestring":
		return secureStringArgs
	case "gh":
		return afterWord("set", nextAfter("-b", "--body"))
	case "kubectl", "oc":
		return fromLiteral
	case "set", "setenv":
		return setArgs
	case "echo", "printf":
		return echoArgs
	}
	return nil
}

// wordText returns the word as written.
func wordText(s string, w cmdWord) string { return s[w.start:w.end] }

// valueSpan returns the span of a value that starts at from inside the
// word, without one level of surrounding quotes.
func valueSpan(s string, from, end int) (int, int) {
	if end-from >= 2 && (s[from] == '"' || s[from] == '\'') && s[end-1] == s[from] {
		return from + 1, end - 1
	}
	return from, end
}

// secretSpan appends the span when its text looks like a password.
func secretSpan(s string, start, end int, out []cmdSpan) []cmdSpan {
	start, end = valueSpan(s, start, end)
	v := s[start:end]
	if !credentialLike(v, 4) || isPlaceholder(v) || isPlaceholderWord(v) || strings.HasPrefix(v, "$") {
		return out
	}
	return append(out, cmdSpan{start, end})
}

func joinHandlers(hs ...func(string, []cmdWord, int, []cmdSpan) []cmdSpan) func(string, []cmdWord, int, []cmdSpan) []cmdSpan {
	return func(s string, w []cmdWord, end int, out []cmdSpan) []cmdSpan {
		for _, h := range hs {
			out = h(s, w, end, out)
		}
		return out
	}
}

// nextAfter redacts the word after any of the flags.
func nextAfter(flags ...string) func(string, []cmdWord, int, []cmdSpan) []cmdSpan {
	return func(s string, w []cmdWord, _ int, out []cmdSpan) []cmdSpan {
		for k := 0; k+1 < len(w); k++ {
			if slices.Contains(flags, wordText(s, w[k])) {
				out = secretSpan(s, w[k+1].start, w[k+1].end, out)
				k++
			}
		}
		return out
	}
}

// gluedFlag redacts the value glued to a short flag: -pPASSWORD.
func gluedFlag(flag string) func(string, []cmdWord, int, []cmdSpan) []cmdSpan {
	return func(s string, w []cmdWord, _ int, out []cmdSpan) []cmdSpan {
		for _, x := range w {
			if t := wordText(s, x); len(t) > len(flag) && strings.HasPrefix(t, flag) {
				out = secretSpan(s, x.start+len(flag), x.end, out)
			}
		}
		return out
	}
}

// afterWord applies h to the words after the first word sub (a
// subcommand: docker login, gh secret set).
func afterWord(sub string, h func(string, []cmdWord, int, []cmdSpan) []cmdSpan) func(string, []cmdWord, int, []cmdSpan) []cmdSpan {
	return func(s string, w []cmdWord, end int, out []cmdSpan) []cmdSpan {
		for k, x := range w {
			if wordText(s, x) == sub {
				return h(s, w[k+1:], end, out)
			}
		}
		return out
	}
}

// firstPositional redacts the first argument that is neither a flag nor a
// key=value pair: vault login TOKEN.
func firstPositional(s string, w []cmdWord, _ int, out []cmdSpan) []cmdSpan {
	for _, x := range w {
		t := wordText(s, x)
		if strings.HasPrefix(t, "-") {
			continue
		}
		if strings.IndexByte(t, '=') < 0 {
			out = secretSpan(s, x.start, x.end, out)
		}
		break
	}
	return out
}

// curlArgs redacts the password of curl's -u, --user, -U and --proxy-user.
func curlArgs(s string, w []cmdWord, _ int, out []cmdSpan) []cmdSpan {
	pass := func(start, end int) {
		start, end = valueSpan(s, start, end)
		if c := strings.IndexByte(s[start:end], ':'); c >= 0 {
			out = secretSpan(s, start+c+1, end, out)
		}
	}
	for k := 0; k < len(w); k++ {
		t := wordText(s, w[k])
		switch {
		case t == "-u" || t == "--user" || t == "-U" || t == "--proxy-user":
			if k+1 < len(w) {
				pass(w[k+1].start, w[k+1].end)
				k++
			}
		case strings.HasPrefix(t, "--user=") || strings.HasPrefix(t, "--proxy-user="):
			pass(w[k].start+strings.IndexByte(t, '=')+1, w[k].end)
		case len(t) > 2 && (strings.HasPrefix(t, "-u") || strings.HasPrefix(t, "-U")):
			pass(w[k].start+2, w[k].end)
		}
	}
	return out
}

// htpasswdArgs redacts the password argument of htpasswd -b (batch mode):
// htpasswd -b file user PW, htpasswd -nb user PW.
func htpasswdArgs(s string, w []cmdWord, _ int, out []cmdSpan) []cmdSpan {
	batch, noFile := false, false
	var pos []cmdWord
	for _, x := range w {
		t := wordText(s, x)
		if len(t) > 1 && t[0] == '-' && len(pos) == 0 {
			batch = batch || strings.IndexByte(t, 'b') > 0
			noFile = noFile || strings.IndexByte(t, 'n') > 0
			continue
		}
		pos = append(pos, x)
	}
	want := 2
	if noFile {
		want = 1
	}
	if batch && len(pos) > want {
		out = secretSpan(s, pos[want].start, pos[want].end, out)
	}
	return out
}

// opensslPass redacts pass:PW after -pass, -passin, -passout and -password.
func opensslPass(s string, w []cmdWord, _ int, out []cmdSpan) []cmdSpan {
	for k := 0; k+1 < len(w); k++ {
		switch wordText(s, w[k]) {
		case "-pass", "-passin", "-passout", "-password":
			start, end := valueSpan(s, w[k+1].start, w[k+1].end)
			if strings.HasPrefix(s[start:end], "pass:") {
				out = secretSpan(s, start+5, end, out)
			}
			k++
		}
	}
	return out
}

// userPassAfter redacts what follows sep in the user argument of the flags:
// smbclient -U user%PW, lftp -u user,PW.
func userPassAfter(sep byte, flags ...string) func(string, []cmdWord, int, []cmdSpan) []cmdSpan {
	return func(s string, w []cmdWord, _ int, out []cmdSpan) []cmdSpan {
		for k := 0; k < len(w); k++ {
			t := wordText(s, w[k])
			start, end := -1, w[k].end
			switch {
			case slices.Contains(flags, t) && k+1 < len(w):
				k++
				start, end = w[k].start, w[k].end
			case strings.HasPrefix(t, "--user="):
				start = w[k].start + len("--user=")
			}
			if start < 0 {
				continue
			}
			start, end = valueSpan(s, start, end)
			if c := strings.IndexByte(s[start:end], sep); c >= 0 {
				out = secretSpan(s, start+c+1, end, out)
			}
		}
		return out
	}
}

// oracleLogon redacts the password of an Oracle logon argument:
// sqlplus user/PW@db.
func oracleLogon(s string, w []cmdWord, _ int, out []cmdSpan) []cmdSpan {
	for _, x := range w {
		t := wordText(s, x)
		if strings.HasPrefix(t, "-") {
			continue
		}
		slash := strings.IndexByte(t, '/')
		if slash <= 0 || t[0] == '@' {
			break
		}
		end := x.end
		if at := strings.LastIndexByte(t, '@'); at > slash {
			end = x.start + at
		}
		return secretSpan(s, x.start+slash+1, end, out)
	}
	return out
}

// rabbitArgs redacts rabbitmqctl add_user NAME PW and change_password NAME PW.
func rabbitArgs(s string, w []cmdWord, _ int, out []cmdSpan) []cmdSpan {
	for k := 0; k+2 < len(w); k++ {
		switch wordText(s, w[k]) {
		case "add_user", "change_password":
			return secretSpan(s, w[k+2].start, w[k+2].end, out)
		}
	}
	return out
}

// secureStringArgs redacts the plain text of ConvertTo-SecureString.
func secureStringArgs(s string, w []cmdWord, _ int, out []cmdSpan) []cmdSpan {
	for k := 0; k < len(w); k++ {
		t := wordText(s, w[k])
		if strings.EqualFold(t, "-String") && k+1 < len(w) {
			return secretSpan(s, w[k+1].start, w[k+1].end, out)
		}
		if !strings.HasPrefix(t, "-") {
			return secretSpan(s, w[k].start, w[k].end, out)
		}
	}
	return out
}

// fromLiteral redacts the value of kubectl create secret --from-literal=K=V.
func fromLiteral(s string, w []cmdWord, _ int, out []cmdSpan) []cmdSpan {
	for _, x := range w {
		t := wordText(s, x)
		if !strings.HasPrefix(t, "--from-literal=") {
			continue
		}
		rest := t[len("--from-literal="):]
		start := x.start + len("--from-literal=")
		if len(rest) > 1 && (rest[0] == '"' || rest[0] == '\'') {
			start, _ = valueSpan(s, start, x.end)
			rest = s[start:x.end]
		}
		if eq := strings.IndexByte(rest, '='); eq > 0 {
			v0, v1 := start+eq+1, x.end
			if s[v1-1] == '"' || s[v1-1] == '\'' {
				v1--
			}
			out = secretSpan(s, v0, v1, out)
		}
	}
	return out
}

// setArgs redacts VALUE in set [-flags] NAME VALUE and setenv NAME VALUE
// when NAME names a secret.
func setArgs(s string, w []cmdWord, _ int, out []cmdSpan) []cmdSpan {
	k := 0
	for k < len(w) && strings.HasPrefix(wordText(s, w[k]), "-") {
		k++
	}
	if k+1 >= len(w) {
		return out
	}
	name := wordText(s, w[k])
	if strings.IndexByte(name, '=') >= 0 || !isName(name) {
		return out
	}
	switch classifyKey(name) {
	case keyPlain:
		return out
	case keyRandom:
		if a, b := valueSpan(s, w[k+1].start, w[k+1].end); !randomish(s[a:b]) {
			return out
		}
	}
	return secretSpan(s, w[k+1].start, w[k+1].end, out)
}

// isName reports a variable or setting name: letters, digits, _ - . / :.
func isName(v string) bool {
	for i := 0; i < len(v); i++ {
		if !isKeyChar(v[i]) && v[i] != '/' && v[i] != ':' {
			return false
		}
	}
	return v != ""
}

// echoArgs redacts what echo or printf pipes into a program that reads a
// password from its input: --password-stdin, sudo -S, chpasswd (user:PW).
func echoArgs(s string, w []cmdWord, end int, out []cmdSpan) []cmdSpan {
	if end >= len(s) || s[end] != '|' || end+1 < len(s) && s[end+1] == '|' {
		return out
	}
	line := s[end+1 : min(len(s), end+1+maxCmdLookahead)]
	if k := strings.IndexAny(line, "\n\r;"); k >= 0 {
		line = line[:k]
	}
	chpasswd := strings.Contains(line, "chpasswd")
	if !chpasswd && !strings.Contains(line, "--password-stdin") && !strings.Contains(line, "sudo -S") &&
		!strings.Contains(line, "passwd --stdin") {
		return out
	}
	for k, x := range w {
		t := wordText(s, x)
		if strings.HasPrefix(t, "-") || k == 0 && len(w) > 1 && strings.IndexByte(t, '%') >= 0 {
			continue // flags, a printf format
		}
		start, stop := valueSpan(s, x.start, x.end)
		if chpasswd {
			if c := strings.IndexByte(s[start:stop], ':'); c >= 0 {
				out = secretSpan(s, start+c+1, stop, out)
			}
			continue
		}
		out = secretSpan(s, x.start, x.end, out)
	}
	return out
}
