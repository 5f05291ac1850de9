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
//     https://x-access-token:[REDACTED]@github.com/...). The password may
//     hold any byte but white space, quotes, '<', '>' and '\' — '/', '#',
//     '@' and ':' included: it ends at the '@' followed by a host, an
//     optional port and the end of the authority (see redactURLCredentials).
//  3. Token shapes, anywhere, case-sensitive, on a word boundary: the
//     provider formats of a mainstream secret scanner's default rules, and
//     a few more. Each has a fixed prefix or structure, an alphabet and a
//     length range, so random text does not match:
//     AWS (AKIA, ASIA, ABIA, ACCA, A3T), Google (AIza, GOCSPX-, ya29.),
//     GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), GitLab (glpat- and
//     routable glpat-...., gldt-, glrt-, glptt-, glft-, glcbt-, glsoat-,
//     glffct-, glimt-, glagent-, gloas-, GR1348941), Slack (xoxb-, xoxa-,
//     xoxp-, xoxr-, xoxs-, xoxe-, xoxo-, xoxe.xoxp-, xapp-, webhook paths),
//     Discord and Microsoft Teams webhook paths, Stripe (sk_ and rk_ live,
//     test and prod keys, whsec_), OpenAI and Anthropic (sk-...), JWTs and
//     base64-encoded JWTs, npm_, Hugging Face (hf_, api_org_), Vault (hvs.,
//     hvb., hvr., legacy s.), PyPI, Docker Hub, SendGrid (SG.), DigitalOcean,
//     Shopify (shpat_, shpca_, shppa_, shpss_), age, 1Password (A3- secret
//     keys, ops_ service accounts), Adobe (p8e-), Alibaba (LTAI),
//     Artifactory (AKCp, cmVmd), Atlassian (ATATT3), Authress, Azure AD
//     client secrets (Q~ in fifth place), ClickHouse (4b1d), Clojars,
//     Cloudflare origin CA keys (v1.0-), Databricks (dapi), Defined
//     Networking (dnkey-), Doppler (dp.pt., dp.st., ...), Duffel, Dynatrace
//     (dt0c01.), EasyPost (EZAK, EZTK), Facebook (EAAC, EAAM, app tokens),
//     Flutterwave, Fly.io, Frame.io, Grafana (eyJrIjoi, glc_, glsa_),
//     Harness (pat., sat.), Terraform Cloud (.atlasv1.), Heroku (HRKU-AA),
//     Infracost, 42 Intra, Linear (lin_api_), Lob, Mailchimp (-usNN),
//     Mailgun (key-, pubkey-, signing keys), Mapbox (sk., tk.), MaxMind
//     (_mmk), New Relic (NRAK-, NRII-, NRJS-, NRAA-, ...NRAL), Notion (ntn_,
//     secret_), Octopus Deploy (API-), OpenShift (sha256~), Perplexity,
//     Plaid (access-...), PlanetScale (pscale_), Postman (PMAK-), Prefect,
//     Pulumi (pul-), ReadMe, RubyGems, Scalingo, Brevo (xkeysib-), Sentry
//     (sntryu_, sntrys_), SettleMint, Shippo, SonarQube (squ_, sqp_, sqa_),
//     Sourcegraph (sgp_), Square (EAAA, sq0atp-, sq0csp-), Telegram bot
//     tokens (also in api.telegram.org/bot URLs), Twilio (SK, AC), Twitter
//     app bearer tokens, Typeform, Yandex (AQVN, t1.), Vercel (vcp_ ...),
//     LangSmith, Groq, Cast AI, Chief Tools, Braintree, LaunchDarkly,
//     Airtable, Django insecure keys and Claude Code session URLs. The
//     tables are in tokens.go, the structured shapes in shapes.go.
//  4. Auth schemes: the credential after "Bearer" and "Basic" wherever they
//     appear, when it looks like a credential: a Bearer token of 8 or more
//     token68 bytes with a digit, a symbol or mixed case; a Basic credential
//     that decodes to "user:password" or is an opaque base64 run of 16 or
//     more bytes with a digit or symbol.
//  5. .netrc entries: the password (and account) of "machine HOST login
//     USER password PW" and "default ..." entries, on one line or several,
//     when the entry follows the netrc grammar.
//  6. Kubernetes Secrets: every value under data: and stringData: of a
//     manifest with kind: Secret, in YAML or JSON.
//  7. Command lines: passwords that programs take as arguments — curl -u
//     user:PW, mysql -pPW, docker/podman/helm login -p PW, sshpass -p PW,
//     vault login TOKEN, htpasswd -b ... PW, redis-cli -a, ldapsearch -w,
//     sqlcmd -P, zip -P, 7z -p, openssl pass:PW, keytool -storepass,
//     mongosh -p, smbclient -U user%PW, lftp -u user,PW, sqlplus user/PW@db,
//     rabbitmqctl add_user, ConvertTo-SecureString, gh secret set -b,
//     kubectl --from-literal=K=V, set/setenv NAME VALUE and config set NAME
//     VALUE for secret names, and what echo pipes into --password-stdin,
//     sudo -S or chpasswd. See redactCommandLines.
//  8. Assignments whose key names a secret (IsSecretKey), in every common
//     syntax: KEY=value (env, shell, URL query, INI, libpq and ADO.NET
//     connection strings), key: value (YAML, HTTP headers such as
//     Authorization, X-Api-Key, Cookie, Set-Cookie), "key": "value" and
//     'key': 'value' (JSON, Python, JS), \"key\": \"value\" (JSON encoded in
//     a string), KEY := value, KEY ?= value, key => value, --key value and
//     -key value (command-line flags), <key>value</key> (XML), bracketed
//     keys in environment-access code (os.environ['API_KEY'] = '...',
//     ENV["TOKEN"] = ..., $_ENV['X'] = ...) and calls whose first argument
//     names a secret and whose second is a string (os.Setenv("TOKEN",
//     "..."), define('AUTH_KEY', '...'), env('APP_KEY', '...')). Prefixed
//     and qualified names count: github_token, MY_API_KEY, db_password,
//     SMTP_PASS, SECRET_KEY_BASE, APP_KEY, api_key_prod, PASSWORD_2.
//     Names that hold a secret only sometimes — a provider's name
//     (DISCORD_CLIENT_ID, HEROKU_KEY, JIRA_API), a word for a secret
//     followed by other words (auth_code, token_cache_value), key after
//     primary, client, session, ... — have their value redacted only when
//     it looks machine-made (see randomish): 12 or more bytes with digits
//     and eight distinct bytes, or a 14-digit number, and not a path, URL,
//     version, date or host name.
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
//     than passwords. Lockfile hashes (integrity, checksum, h1:), digests,
//     docker ids and public keys stay.
//   - Words that stand for a password in documentation, as a URL password
//     or a command-line password: postgres://user:password@host,
//     https://user:token@host.
//   - Command-line prose and prompts: "mysql -p" (prompts), "docker login
//     -p is insecure", "vault login -method=oidc", "-p $DB_PASSWORD"; a
//     command-line password must look like one (4 bytes or more, with a
//     digit, a symbol or mixed case).
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
// built to make scanners backtrack (see BenchmarkTextAdversarial, which has
// an input for every rule). A 4 KiB event costs tens of microseconds.
//
// # Corpus
//
// The rules are held to a generated corpus (package redacttest): over 600
// secrets of every provider format and context above, embedded in capture
// events and hook payloads, must not leave any 12-byte run behind, and over
// 200 look-alikes (commit ids, UUIDs, lockfile hashes, base64 of prose,
// paths, versions, prose and code about secrets) must come out byte for
// byte.
package redact
