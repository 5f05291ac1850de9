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
//     masterkey, hmackey, accountkey, authorization, cookie(s) or
//     credential(s) — so prefixed names such as github_token, MY_API_KEY,
//     db_password, aws_secret_access_key and sessionCookie are secret; or
//   - is exactly auth.
//
// Deliberate exceptions: token counts and tokenizer vocabulary are not
// secrets, and LLM tooling is full of them. "tokens", "max_tokens",
// "input_tokens" and "token_count" do not end with "token"; the special-token
// names eos_token, bos_token, pad_token, unk_token, mask_token, sep_token,
// cls_token, stop_token, start_token, end_token, special_token, max_token,
// min_token and num_token are listed as not secret. PWD and OLDPWD are the
// shell's working directories. session_id is not secret: it is the capture
// event's own conversation id.
func IsSecretKey(name string) bool {
	return classifyKey(name) != keyPlain
}

func classifyKey(name string) keyClass {
	var buf [maxKeyNorm]byte
	k, whole := normKey(name, buf[:])
	if len(k) < 3 {
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
		}
	}
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
		"encryptionkey", "masterkey", "hmackey", "accountkey",
	} {
		if hasSuffix(k, suf) {
			return keySecret
		}
	}
	return keyPlain
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
