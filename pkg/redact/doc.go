// Package redact removes secrets from text and JSON before they are recorded.
//
// The recorder (memsvc-recorder) turns coding-agent events — prompts, tool
// calls, shell commands and their output, HTTP logs, environment dumps, code
// — into raw journal entries, and runs every event through this package
// before it is sent or spooled. Text handles free text, JSON handles a JSON
// document structurally, Value handles values already decoded from JSON and
// IsSecretKey says whether a key names a secret. Everything is pure,
// stdlib-only and safe for concurrent use.
//
// # Marker
//
// A redacted secret becomes "[REDACTED]" (Marker); a PEM private key block
// becomes "[REDACTED PRIVATE KEY]" (PrivateKeyMarker). Only the secret is
// replaced: a header keeps its name and scheme ("Authorization: Bearer
// [REDACTED]"), a URL keeps its user and host, a quoted value keeps its
// quotes. Redaction is idempotent — Text(Text(s)) == Text(s) and
// JSON(JSON(d)) == JSON(d) — so redacting an event again (a spool replay, a
// second pass over re-serialised content) changes nothing.
//
// # Rules of Text, in the order they run
//
//  1. Private keys: PEM blocks "-----BEGIN ... PRIVATE KEY-----" through the
//     matching END line, for every key type (RSA, EC, DSA, OPENSSH,
//     ENCRYPTED, PKCS#8, PGP PRIVATE KEY BLOCK), also when the newlines are
//     \n escapes, when the block sits on one line, and when the END line was
//     cut off (then through the end of the base64 body).
//  2. URL credentials: the password of scheme://user:password@host
//     (postgres://app:[REDACTED]@db/app, redis://:[REDACTED]@cache,
//     https://x-access-token:[REDACTED]@github.com/...).
//  3. Token shapes, anywhere, case-sensitive, on a word boundary: AWS access
//     key ids (AKIA, ASIA), Google API keys (AIza) and OAuth secrets and
//     tokens (GOCSPX-, ya29.), GitHub (ghp_, gho_, ghu_, ghs_, ghr_,
//     github_pat_), GitLab (glpat- and kin), Slack tokens (xoxb-, xoxa-,
//     xoxp-, xoxr-, xoxs-, xoxe-, xapp-) and webhook paths, Discord webhook
//     paths, Stripe secret, restricted and webhook keys (sk_live_, sk_test_,
//     rk_live_, rk_test_, whsec_), OpenAI and Anthropic keys (sk-, sk-proj-,
//     sk-ant-), JWTs (eyJ...), npm (npm_), Hugging Face (hf_), PyPI, Docker
//     Hub (dckr_pat_), SendGrid (SG.), DigitalOcean (dop_v1_), Shopify
//     (shpat_), HashiCorp Vault (hvs.) and age identities (AGE-SECRET-KEY-1).
//     Each has a fixed prefix, alphabet and length range, so random text
//     does not match.
//  4. Auth schemes: the credential after "Bearer" and "Basic" wherever they
//     appear, when it looks like a credential: a Bearer token of 8 or more
//     token68 bytes with a digit, a symbol or mixed case; a Basic credential
//     that decodes to "user:password" or is an opaque base64 run of 16 or
//     more bytes with a digit or symbol.
//  5. Assignments whose key names a secret (IsSecretKey), in every common
//     syntax: KEY=value (env, shell, URL query, INI, libpq and ADO.NET
//     connection strings), key: value (YAML, HTTP headers such as
//     Authorization, X-Api-Key, Cookie, Set-Cookie), "key": "value" and
//     'key': 'value' (JSON, Python, JS), \"key\": \"value\" (JSON encoded in
//     a string), KEY := value, KEY ?= value, key => value, --key value
//     (command-line flags) and <key>value</key> (XML). Prefixed names count:
//     github_token, MY_API_KEY, db_password, aws_secret_access_key.
//
// # What is deliberately not redacted
//
// Redaction that eats ordinary words makes the journal useless, and agents
// talk about secrets all the time. So:
//
//   - Words after Bearer and Basic that are words: "Basic understanding",
//     "basic authentication", "bearer of bad news", "Bearer tokens".
//   - Token counts and tokenizer vocabulary: tokens, max_tokens,
//     input_tokens, token_count, eos_token, pad_token and friends are not
//     secret keys (see IsSecretKey), nor is session_id (the capture event's
//     conversation id) or PWD/OLDPWD (working directories).
//   - References instead of values: placeholders ($TOKEN, ${DB_PASSWORD},
//     $(gh auth token), {{ secrets.X }}, %(password)s, <your-token>, ****),
//     code (os.Getenv("TOKEN"), getpass(), token = self.token,
//     password=password, Token: accessToken, Config{Token: tokens},
//     password: PasswordType | None = None, SO_COOKIE = 0x39), keywords and
//     types (None, null, true, str, string, read, write), file paths
//     (PASSWORD_FILE=/run/secrets/db,
//     GOOGLE_APPLICATION_CREDENTIALS=/home/me/key.json).
//   - A bare word without digits after a spaced " = " or after ":=": in code
//     that is a variable (self.token = nextchar). The price is that the INI
//     line "password = supersecret" is kept; "password = hunter2",
//     "PASSWORD=supersecret", "password: supersecret" and every quoted value
//     are redacted.
//   - After a quote that is not closed on its line, only the first word: the
//     quote may close a string the key was in ("shlex: token=" + x).
//   - Prose after a colon ("Password: required for login.", "the access
//     token: expired") and unquoted values shorter than 4 bytes.
//   - Values of the weak keys auth and credentials that do not look like
//     credentials (fetch's credentials: "include").
//   - Stripe publishable keys (pk_live_, pk_test_): they are designed to be
//     public.
//   - Hashes, UUIDs, commit ids, base64 blobs and other high-entropy strings
//     without a known prefix or a secret key next to them: telling a
//     password from a checksum by entropy alone redacts far more checksums
//     than passwords.
//
// The price of keeping prose is that a secret written as plain prose ("the
// password is hunter2") or as a lone bare word after a colon followed by
// more words is not recognised. JSON and Value do not have that weakness
// for object members: the value of a secret key is redacted whatever it
// looks like.
//
// # JSON
//
// JSON keeps the document as written — member order, duplicate keys, white
// space, number spelling and string escapes — and changes only what it
// redacts; see JSON for the rules. Value applies the same rules to decoded
// values.
//
// # Cost
//
// Every rule is a single left-to-right scan with bounded look-around and no
// regular expressions, so Text is linear in its input, including inputs
// built to make scanners backtrack (see BenchmarkTextAdversarial). A 4 KiB
// event costs tens of microseconds.
package redact
