package redact

// keyClass says what a key name tells about its value.
type keyClass uint8

const (
	// keyPlain names no secret.
	keyPlain keyClass = iota
	// keySecret names a secret: password, token, api key, client secret, ...
	keySecret
	// keyWeak is a name that holds a credential only sometimes (auth,
	// credentials: fetch's credentials: "include" is not a secret); free
	// text redacts its value only when the value looks like a credential.
	keyWeak
	// keyAuthorization is an Authorization header: a scheme word, then the
	// credential.
	keyAuthorization
	// keyCookie is a Cookie or Set-Cookie header: name=value pairs.
	keyCookie
	// keyRandom is a name that holds a secret only when the value looks
	// machine-made (see randomish): names with a provider's name
	// (DISCORD_CLIENT_ID) or a word for a secret before other words
	// (auth_code).
	keyRandom
)

// maxKeyNorm bounds the normalised key; only its tail decides the class.
const maxKeyNorm = 64

// IsSecretKey reports whether an object key, header name or variable name
// names a secret, so that its value must not be recorded.
//
// The name is normalised first: ASCII letters and digits are kept and
// lower-cased, everything else is dropped, so "X-Api-Key", "x_api_key" and
// "xApiKey" are all "xapikey". The name is secret when the normalised form
//
//   - ends with password(s), passwd, passphrase, pwd, secret(s), token,
//     apikey(s), accesskey, secretkey, privatekey, signingkey, encryptionkey,
//     masterkey, hmackey, accountkey, salt, authorization, cookie(s) or
//     credential(s) — so prefixed names such as github_token, MY_API_KEY,
//     db_password, aws_secret_access_key and sessionCookie are secret; or
//   - is exactly auth, or a session cookie name (PHPSESSID, JSESSIONID,
//     _gitlab_session, connect.sid).
//
// The name is also split into words (at separators and at camelCase
// humps: "accessTokenProd" is access, token, prod) and is secret when
//
//   - its last word is pass, pw or pwd (SMTP_PASS, MYSQL_ROOT_PW, DB_PWD;
//     not bypass or compass);
//   - its last word is key or keys after a word that makes it a credential:
//     app, auth, license, consumer, shared, sas, subscription, ingest,
//     deploy, integration, webhook, jwt, crypto, cipher, aes, enc,
//     decryption, wrapping, nonce, or with a first word x (APP_KEY,
//     X-Gateway-Key; not sort_key or public_key);
//   - it is secret once trailing qualifier words are dropped: base, value,
//     val, prod, production, dev, development, staging, stage, test, live,
//     local, old, new, current, prev, previous, next, primary, secondary,
//     backup, b64, base64, hex, raw, plain, plaintext, enc, encoded, main,
//     numbers and v1, v2, ... (SECRET_KEY_BASE, api_key_prod, PASSWORD_2,
//     token_value).
//
// Deliberate exceptions: token counts and tokenizer vocabulary are not
// secrets, and LLM tooling is full of them. "tokens", "max_tokens",
// "input_tokens" and "token_count" do not end with "token"; the special-token
// names eos_token, bos_token, pad_token, unk_token, mask_token, sep_token,
// cls_token, stop_token, start_token, end_token, special_token, max_token,
// min_token and num_token are listed as not secret. PWD and OLDPWD are the
// shell's working directories. session_id is not secret: it is the capture
// event's own conversation id.
//
// Some names hold a secret only when the value looks machine-made (see
// the package documentation): key after client, storage, session, service,
// server, admin, write, root, function, host, primary or secondary
// (primary_key: "id" is a column name), names that contain a word for a
// secret before other words (auth_code, token_cache_value) and names that
// contain a provider's name (DISCORD_CLIENT_ID, HEROKU_KEY). IsSecretKey reports
// false for them; their values are judged one by one.
func IsSecretKey(name string) bool {
	switch classifyKey(name) {
	case keyPlain, keyRandom:
		return false
	}
	return true
}

func classifyKey(name string) keyClass {
	var buf [maxKeyNorm]byte
	k, whole := normKey(name, buf[:])
	if len(k) < 2 {
		return keyPlain
	}
	if whole {
		switch string(k) {
		case "pwd", "oldpwd",
			"eostoken", "bostoken", "padtoken", "unktoken", "masktoken", "septoken", "clstoken",
			"stoptoken", "starttoken", "endtoken", "specialtoken", "maxtoken", "mintoken", "numtoken":
			return keyPlain
		case "auth":
			return keyWeak
		case "pw", "phpsessid", "jsessionid", "gitlabsession", "connectsid":
			return keySecret
		}
	}
	if c := classifyNorm(k); c != keyPlain {
		return c
	}
	var segs [maxKeySegs]span
	n := splitKey(name, &segs)
	if n == 0 {
		return keyPlain
	}
	last := name[segs[n-1].a:segs[n-1].b]
	switch {
	case foldIn(last, "pass", "pw", "pwd"):
		return keySecret
	case n >= 2 && foldIn(last, "key", "keys"):
		prev := name[segs[n-2].a:segs[n-2].b]
		switch q := keyQualifier(prev); {
		case q == 2 || foldIn(name[segs[0].a:segs[0].b], "x"):
			return keySecret
		case q == 1:
			return keyRandom
		}
	}
	// Drop trailing qualifier words and look again.
	m := n
	for m > 1 && isQualifier(name[segs[m-1].a:segs[m-1].b]) {
		m--
	}
	if m < n {
		if c := classifyKey(name[:segs[m-1].b]); c != keyPlain && c != keyRandom {
			return c
		}
	}
	plainTail := isPlainTail(last)
	if !plainTail && (secretWordIn(name, segs[:n]) || hasSegment(name, segs[:n], "auth")) {
		return keyRandom
	}
	if plainTail && n >= 2 && foldIn(last, "id") && foldIn(name[segs[n-2].a:segs[n-2].b], "client", "app", "access") {
		plainTail = false // a provider's client id: DISCORD_CLIENT_ID
	}
	if !plainTail && hasProvider(name, segs[:n]) {
		return keyRandom
	}
	return keyPlain
}

// classifyNorm classifies a normalised name by its tail.
func classifyNorm(k []byte) keyClass {
	switch {
	case hasSuffix(k, "authorization"):
		return keyAuthorization
	case hasSuffix(k, "cookie"), hasSuffix(k, "cookies"):
		return keyCookie
	case hasSuffix(k, "credential"), hasSuffix(k, "credentials"):
		return keyWeak
	}
	for _, suf := range [...]string{
		"password", "passwords", "passwd", "passphrase", "pwd", "secret", "secrets", "token",
		"apikey", "apikeys", "accesskey", "secretkey", "privatekey", "signingkey",
		"encryptionkey", "masterkey", "hmackey", "accountkey", "salt",
	} {
		if hasSuffix(k, suf) {
			return keySecret
		}
	}
	return keyPlain
}

// keyQualifier reports the words before "key" that make it a credential
// (2) or one when the value looks machine-made (1): primary_key: "id" is a
// column, PrimaryKey: "k3J9..." an Azure key.
func keyQualifier(w string) int {
	var buf [24]byte
	if len(w) > len(buf) {
		return 0
	}
	switch string(appendLower(buf[:0], w)) {
	case "app", "auth", "license", "licence", "consumer", "shared", "sas", "subscription", "ingest",
		"deploy", "integration", "webhook", "jwt", "crypto", "cipher", "aes", "enc", "decryption",
		"wrapping", "nonce":
		return 2
	case "client", "storage", "session", "service", "server", "admin", "write", "root", "function",
		"host", "primary", "secondary":
		return 1
	}
	return 0
}

// isQualifier reports words that qualify a name without changing what it
// names: SECRET_KEY_BASE, api_key_prod, PASSWORD_2.
func isQualifier(w string) bool {
	if allDigits(w) {
		return true
	}
	if len(w) >= 2 && (w[0] == 'v' || w[0] == 'V') && allDigits(w[1:]) {
		return true
	}
	var buf [24]byte
	if len(w) > len(buf) {
		return false
	}
	switch string(appendLower(buf[:0], w)) {
	case "base", "value", "val", "prod", "production", "dev", "development", "staging",
		"stage", "test", "live", "local", "old", "new", "current", "prev", "previous", "next",
		"primary", "secondary", "backup", "b64", "base64", "hex", "raw", "plain", "plaintext",
		"enc", "encoded", "main":
		return true
	}
	return false
}

// isPlainTail reports last words that make a name describe a secret
// rather than hold one: token_type, secret_name, password_file,
// SENTRY_ENVIRONMENT, DISCORD_CHANNEL_ID.
func isPlainTail(w string) bool {
	var buf [24]byte
	if len(w) > len(buf) {
		return false
	}
	switch string(appendLower(buf[:0], w)) {
	case "id", "ids", "name", "names", "type", "types", "kind", "url", "uri", "urls",
		"endpoint", "host", "hostname", "domain", "path", "file", "files", "dir", "ttl", "expiry",
		"expires", "expiration", "lifetime", "count", "length", "len", "size", "limit", "max",
		"min", "version", "format", "header", "prefix", "field", "hash", "policy", "rotation",
		"label", "description", "status", "mode", "method", "provider", "scope", "scopes",
		"pattern", "env", "environment", "source", "ref", "enabled", "required", "hint",
		"prompt", "strength", "reset", "created", "updated", "at", "date", "time", "timestamp",
		"region", "site", "release", "project", "org", "organization", "team", "user",
		"username", "email", "channel", "chat", "guild", "workspace", "port", "timeout",
		"level", "location", "manager", "store", "regex", "issue", "ticket",
		"traceid", "spanid", "requestid", "eventid", "chatid", "channelid":
		return true
	}
	return false
}

// secretWordIn reports whether a word of the name, or two adjacent words
// joined, is a word for a secret: password, passwd, passphrase, secret,
// token, credential, creds, apikey, accesskey, privatekey.
func secretWordIn(name string, segs []span) bool { return anyWord(name, segs, false) }

func isSecretWord(w []byte) bool {
	switch string(w) {
	case "password", "passwords", "passwd", "passphrase", "secret", "secrets", "token",
		"credential", "credentials", "creds", "apikey", "accesskey", "privatekey":
		return true
	}
	return false
}

// hasProvider reports whether a word of the name, or two adjacent words
// joined, names a service whose keys secret scanners look for near a value
// of the right shape (DATADOG_APP, NEW_RELIC_API, sendBirdAppId).
func hasProvider(name string, segs []span) bool { return anyWord(name, segs, true) }

func isProviderWord(w []byte) bool {
	switch string(w) {
	case "adafruit", "adobe", "airtable", "algolia", "alibaba", "asana", "atlassian", "confluence",
		"jira", "beamer", "bitbucket", "bittrex", "meraki", "cloudflare", "codecov", "cohere",
		"coinbase", "confluent", "contentful", "datadog", "discord", "droneci", "dropbox", "etsy",
		"facebook", "fastly", "finicity", "finnhub", "flickr", "freshbooks", "gitter",
		"gocardless", "heroku", "hubspot", "intercom", "jfrog", "artifactory", "bintray", "xray",
		"kraken", "kucoin", "launchdarkly", "linear", "linkedin", "lob", "mailchimp", "mailgun",
		"mapbox", "mattermost", "messagebird", "netlify", "newrelic", "nytimes", "okta", "plaid",
		"privateai", "rapidapi", "sendbird", "sentry", "snyk", "sonar", "sourcegraph",
		"squarespace", "sumo", "telegram", "travis", "twitch", "twitter", "typeform", "yandex",
		"zendesk", "vercel", "looker", "twilio", "sendgrid", "contribsys":
		return true
	}
	return false
}

// anyWord reports whether a word of the name, lower-cased, or two adjacent
// words joined, is a provider's name (provider) or a word for a secret.
func anyWord(name string, segs []span, provider bool) bool {
	match := func(b []byte) bool {
		if provider {
			return isProviderWord(b)
		}
		return isSecretWord(b)
	}
	var buf [40]byte
	for k, sg := range segs {
		if sg.b-sg.a > 20 {
			continue
		}
		b := appendLower(buf[:0], name[sg.a:sg.b])
		if match(b) {
			return true
		}
		if k+1 < len(segs) && segs[k+1].b-segs[k+1].a <= 20 && match(appendLower(b, name[segs[k+1].a:segs[k+1].b])) {
			return true
		}
	}
	return false
}

func appendLower(dst []byte, w string) []byte {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// span is a word of a name: name[a:b].
type span struct{ a, b int }

// maxKeySegs bounds the words of a name that are looked at: the last ones.
const maxKeySegs = 12

// splitKey splits name into words of ASCII letters and digits, at every
// other byte and at camelCase humps (accessToken, APIKey), and stores the
// last maxKeySegs of them in segs.
func splitKey(name string, segs *[maxKeySegs]span) int {
	n := 0
	add := func(a, b int) {
		if n == maxKeySegs {
			copy(segs[:], segs[1:])
			n--
		}
		segs[n] = span{a, b}
		n++
	}
	start := -1
	for i := 0; i <= len(name); i++ {
		if i == len(name) || !isAlnum(name[i]) {
			if start >= 0 {
				add(start, i)
				start = -1
			}
			continue
		}
		if start >= 0 && isUpper(name[i]) && (isLower(name[i-1]) || isUpper(name[i-1]) && i+1 < len(name) && isLower(name[i+1])) {
			add(start, i)
			start = i
		}
		if start < 0 {
			start = i
		}
	}
	return n
}

func hasSegment(name string, segs []span, w string) bool {
	for _, sg := range segs {
		if foldIn(name[sg.a:sg.b], w) {
			return true
		}
	}
	return false
}

// foldIn reports whether w equals one of the lower-case words, ignoring
// ASCII case.
func foldIn(w string, words ...string) bool {
	for _, x := range words {
		if len(w) == len(x) && hasFoldPrefix(w, x) {
			return true
		}
	}
	return false
}

func allDigits(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		if !isDigit(w[i]) {
			return false
		}
	}
	return true
}

// normKey writes the last len(buf) letters and digits of name, lower-cased,
// into the tail of buf and returns them; whole is false when name had more.
func normKey(name string, buf []byte) (k []byte, whole bool) {
	n := 0
	for i := len(name) - 1; i >= 0; i-- {
		c := name[i]
		switch {
		case isLower(c), isDigit(c):
		case isUpper(c):
			c += 'a' - 'A'
		default:
			continue
		}
		if n == len(buf) {
			return buf, false
		}
		n++
		buf[len(buf)-n] = c
	}
	return buf[len(buf)-n:], true
}

func hasSuffix(b []byte, suf string) bool {
	return len(b) >= len(suf) && string(b[len(b)-len(suf):]) == suf
}
