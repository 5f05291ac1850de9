package redact_test

import (
	"bufio"
	"os"
	"reflect"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/redact"
)

// Fixtures that look like live credentials are assembled at run time from
// these cycles, so that no file in the repository trips a secret scanner.
const (
	mixed   = "Zx9Qm2Lk7Vb4Np1Rt8Hy3Wc6Ju5Fd0Gs"
	upper   = "QZ7X2M4K9W3R8T5V6N1P"
	hexLow  = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
	b64url  = "Ab3_Cd5-Ef7gH9iJ1kL"
	jwtDemo = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." +
		"eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ." +
		"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

// fake returns n bytes cycled from chars.
func fake(chars string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteByte(chars[i%len(chars)])
	}
	return b.String()
}

// pemBody is a plausible base64 body: lines of 64 bytes.
func pemBody(lines int) string {
	var b strings.Builder
	for i := 0; i < lines; i++ {
		b.WriteString(fake(mixed+"+/", 64))
		b.WriteByte('\n')
	}
	return b.String()
}

type textCase struct {
	name string
	in   string
	want string
}

// checkText asserts the exact output, that redacting the output again
// changes nothing, and that valid UTF-8 stays valid.
func checkText(t *testing.T, cases []textCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := redact.Text(tc.in)
			if got != tc.want {
				t.Fatalf("Text(%q)\n got: %q\nwant: %q", tc.in, got, tc.want)
			}
			if again := redact.Text(got); again != got {
				t.Fatalf("not idempotent: Text(%q) = %q", got, again)
			}
		})
	}
}

func privateKeyCases() []textCase {
	body := pemBody(3)
	return []textCase{
		{"rsa", "key:\n-----BEGIN RSA PRIVATE KEY-----\n" + body + "-----END RSA PRIVATE KEY-----\ndone",
			"key:\n[REDACTED PRIVATE KEY]\ndone"},
		{"pkcs8", "-----BEGIN PRIVATE KEY-----\n" + body + "-----END PRIVATE KEY-----",
			"[REDACTED PRIVATE KEY]"},
		{"openssh", "cat id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n" + body + "-----END OPENSSH PRIVATE KEY-----\n$ ",
			"cat id_ed25519\n[REDACTED PRIVATE KEY]\n$ "},
		{"ec", "-----BEGIN EC PRIVATE KEY-----\r\n" + strings.ReplaceAll(body, "\n", "\r\n") + "-----END EC PRIVATE KEY-----\r\n",
			"[REDACTED PRIVATE KEY]\r\n"},
		{"encrypted pkcs8", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + body + "-----END ENCRYPTED PRIVATE KEY-----",
			"[REDACTED PRIVATE KEY]"},
		{"legacy encrypted with headers", "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0F1E2D3C4B5A69788796A5B4C3D2E1F0\n\n" + body + "-----END RSA PRIVATE KEY-----",
			"[REDACTED PRIVATE KEY]"},
		{"pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n" + body + "=a1B2\n-----END PGP PRIVATE KEY BLOCK-----",
			"[REDACTED PRIVATE KEY]"},
		{"escaped in json", `{"key":"-----BEGIN PRIVATE KEY-----\n` + fake(mixed, 64) + `\n` + fake(mixed, 20) + `==\n-----END PRIVATE KEY-----\n","n":1}`,
			`{"key":"[REDACTED PRIVATE KEY]\n","n":1}`},
		{"one line", "KEY=-----BEGIN PRIVATE KEY----- " + fake(mixed, 64) + " " + fake(mixed, 12) + "= -----END PRIVATE KEY----- # prod",
			"KEY=[REDACTED PRIVATE KEY] # prod"},
		{"quoted assignment keeps the key marker", `PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\n` + fake(mixed, 64) + `\n-----END PRIVATE KEY-----"`,
			`PRIVATE_KEY="[REDACTED PRIVATE KEY]"`},
		{"yaml block scalar", "tls:\n  key: |\n    -----BEGIN EC PRIVATE KEY-----\n    " + fake(mixed, 64) + "\n    " + fake(mixed, 20) + "\n    -----END EC PRIVATE KEY-----\n  cert: cert.pem",
			"tls:\n  key: |\n    [REDACTED PRIVATE KEY]\n  cert: cert.pem"},
		{"truncated output", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + body + fake(mixed, 30) + "\n(output truncated)",
			"[REDACTED PRIVATE KEY]\n(output truncated)"},
		{"truncated inside a string", `{"k": "-----BEGIN RSA PRIVATE KEY-----\n` + fake(mixed, 64) + `", "n": 2}`,
			`{"k": "[REDACTED PRIVATE KEY]", "n": 2}`},
		{"two blocks", "-----BEGIN RSA PRIVATE KEY-----\n" + body + "-----END RSA PRIVATE KEY-----\nand\n-----BEGIN EC PRIVATE KEY-----\n" + body + "-----END EC PRIVATE KEY-----",
			"[REDACTED PRIVATE KEY]\nand\n[REDACTED PRIVATE KEY]"},
		{"header mention is kept", `if strings.HasPrefix(s, "-----BEGIN RSA PRIVATE KEY-----") {`,
			`if strings.HasPrefix(s, "-----BEGIN RSA PRIVATE KEY-----") {`},
		{"prose after a header is kept", "A file that starts with -----BEGIN OPENSSH PRIVATE KEY----- is a private key.",
			"A file that starts with -----BEGIN OPENSSH PRIVATE KEY----- is a private key."},
		{"public key is kept", "-----BEGIN PUBLIC KEY-----\n" + body + "-----END PUBLIC KEY-----",
			"-----BEGIN PUBLIC KEY-----\n" + body + "-----END PUBLIC KEY-----"},
		{"certificate is kept", "-----BEGIN CERTIFICATE-----\n" + body + "-----END CERTIFICATE-----",
			"-----BEGIN CERTIFICATE-----\n" + body + "-----END CERTIFICATE-----"},
	}
}

func TestTextPrivateKeys(t *testing.T) { checkText(t, privateKeyCases()) }

func urlCases() []textCase {
	return []textCase{
		{"postgres", "connecting to postgres://app:s3cr3t-Pa55@db.internal:5432/app?sslmode=require ...",
			"connecting to postgres://app:[REDACTED]@db.internal:5432/app?sslmode=require ..."},
		{"mongodb srv", "MONGO_URL=mongodb+srv://admin:Pa55w0rd@cluster0.ab1cd.mongodb.net/test?retryWrites=true",
			"MONGO_URL=mongodb+srv://admin:[REDACTED]@cluster0.ab1cd.mongodb.net/test?retryWrites=true"},
		{"redis without user", "redis://:hunter2@cache:6379/0",
			"redis://:[REDACTED]@cache:6379/0"},
		{"https basic", "GET https://bob:correct-horse@example.com/private HTTP/1.1",
			"GET https://bob:[REDACTED]@example.com/private HTTP/1.1"},
		{"git remote with token", "origin\thttps://x-access-token:abcdef0123456789@github.com/acme/api.git (fetch)",
			"origin\thttps://x-access-token:[REDACTED]@github.com/acme/api.git (fetch)"},
		{"at sign in password", "postgres://u:p@ss@host/db",
			"postgres://u:[REDACTED]@host/db"},
		{"amqp", "amqp://guest:guest@localhost:5672/",
			"amqp://guest:[REDACTED]@localhost:5672/"},
		{"mysql dsn in json", `{"dsn": "mysql://root:toor@tcp(127.0.0.1:3306)/app"}`,
			`{"dsn": "mysql://root:[REDACTED]@tcp(127.0.0.1:3306)/app"}`},
		{"placeholder is kept", "postgres://user:${DB_PASSWORD}@db/app",
			"postgres://user:${DB_PASSWORD}@db/app"},
		{"no password is kept", "https://user@example.com/repo.git and ssh://git@github.com:22/acme/api.git",
			"https://user@example.com/repo.git and ssh://git@github.com:22/acme/api.git"},
		{"port is not a password", "http://localhost:8420/v1/recall?next=a@b.example",
			"http://localhost:8420/v1/recall?next=a@b.example"},
	}
}

func TestTextURLCredentials(t *testing.T) { checkText(t, urlCases()) }

func tokenShapeCases() []textCase {
	return []textCase{
		{"aws access key id", "aws_access_key_id = AKIA" + fake(upper, 16) + "\nregion = eu-west-1",
			"aws_access_key_id = [REDACTED]\nregion = eu-west-1"},
		{"aws temporary key id", "(ASIA" + fake(upper, 16) + ")", "([REDACTED])"},
		{"aws docs example", "AKIAIOSFODNN7EXAMPLE", "[REDACTED]"},
		{"aws id glued to more letters is kept", "AKIA" + fake(upper, 16) + "Z", "AKIA" + fake(upper, 16) + "Z"},
		{"gcp api key", "key=AIza" + fake(b64url, 35) + "&q=x", "key=[REDACTED]&q=x"},
		{"github classic", "token ghp_" + fake(mixed, 36) + " expires", "token [REDACTED] expires"},
		{"github oauth", "gho_" + fake(mixed, 36), "[REDACTED]"},
		{"github user to server", "ghu_" + fake(mixed, 36), "[REDACTED]"},
		{"github server to server", "'ghs_" + fake(mixed, 36) + "'", "'[REDACTED]'"},
		{"github refresh", "ghr_" + fake(mixed, 36) + ".", "[REDACTED]."},
		{"github fine grained", "github_pat_11" + fake(mixed, 20) + "_" + fake(mixed, 59), "[REDACTED]"},
		{"gitlab", "PRIVATE-TOKEN glpat-" + fake(b64url, 20), "PRIVATE-TOKEN [REDACTED]"},
		{"slack bot", "xoxb-123456789012-1234567890123-" + fake(mixed, 24), "[REDACTED]"},
		{"slack user", "xoxp-" + fake("0123456789", 12) + "-" + fake(mixed, 20), "[REDACTED]"},
		{"slack webhook", "POST https://hooks.slack.com/services/T0" + fake(upper, 8) + "/B0" + fake(upper, 8) + "/" + fake(mixed, 24) + " 200",
			"POST https://hooks.slack.com/services/[REDACTED] 200"},
		{"discord webhook", "https://discord.com/api/webhooks/123456789012345678/" + fake(b64url, 68),
			"https://discord.com/api/webhooks/[REDACTED]"},
		{"stripe live secret", "stripe.api_key = 'sk_live_" + fake(mixed, 24) + "'", "stripe.api_key = '[REDACTED]'"},
		{"stripe test secret", "sk_test_" + fake(mixed, 24), "[REDACTED]"},
		{"stripe restricted", "rk_live_" + fake(mixed, 24), "[REDACTED]"},
		{"stripe webhook secret", "whsec_" + fake(mixed, 32), "[REDACTED]"},
		{"stripe publishable is kept", "pk_live_" + fake(mixed, 24), "pk_live_" + fake(mixed, 24)},
		{"openai legacy", "sk-" + fake(mixed, 48), "[REDACTED]"},
		{"openai project", "using sk-proj-" + fake(b64url, 60) + " now", "using [REDACTED] now"},
		{"anthropic", "x sk-ant-api03-" + fake(b64url, 90) + "-AA", "x [REDACTED]"},
		{"jwt", "id_token: " + jwtDemo, "id_token: [REDACTED]"},
		{"jwt followed by a period", "the token was " + jwtDemo + ".", "the token was [REDACTED]."},
		{"unsigned jwt", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJib2IifQ.", "[REDACTED]"},
		{"npm", "//registry.npmjs.org/:_authToken=npm_" + fake(mixed, 36), "//registry.npmjs.org/:_authToken=[REDACTED]"},
		{"hugging face", "HF hf_" + fake(mixed, 34), "HF [REDACTED]"},
		{"pypi", "password = pypi-AgEIcHlwaS5vcmc" + fake(b64url, 60), "password = [REDACTED]"},
		{"docker hub", "dckr_pat_" + fake(b64url, 27), "[REDACTED]"},
		{"sendgrid", "SG." + fake(b64url, 22) + "." + fake(b64url, 43), "[REDACTED]"},
		{"google oauth client secret", "GOCSPX-" + fake(b64url, 28), "[REDACTED]"},
		{"google oauth access token", "ya29." + fake(b64url, 120), "[REDACTED]"},
		{"digitalocean", "dop_v1_" + fake(hexLow, 64), "[REDACTED]"},
		{"shopify", "shpat_" + fake(hexLow, 32), "[REDACTED]"},
		{"age identity", "AGE-SECRET-KEY-1" + fake(upper, 58), "[REDACTED]"},
		{"ssh algorithm name is kept", `CertAlgoSKECDSA256v01 = "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com"`,
			`CertAlgoSKECDSA256v01 = "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com"`},
		{"glued to an identifier is kept", "my_ghp_" + fake(mixed, 36), "my_ghp_" + fake(mixed, 36)},
		{"two tokens", "ghp_" + fake(mixed, 36) + "," + "xoxb-1234567890-" + fake(mixed, 12), "[REDACTED],[REDACTED]"},
	}
}

func TestTextTokenShapes(t *testing.T) { checkText(t, tokenShapeCases()) }

func authSchemeCases() []textCase {
	return []textCase{
		{"bearer in curl", `curl -s -H "Authorization: Bearer 9f8e7d6c5b4a39281706" https://api.example.com/v1`,
			`curl -s -H "Authorization: Bearer [REDACTED]" https://api.example.com/v1`},
		{"bearer anywhere", "sent bearer abcDEFghiJKLmno to the proxy", "sent bearer [REDACTED] to the proxy"},
		{"bearer in code", `req.Header.Set("X", "Bearer tok_0123456789abcdef")`, `req.Header.Set("X", "Bearer [REDACTED]")`},
		{"bearer with padding", "Bearer abc+/def0123==, next", "Bearer [REDACTED], next"},
		{"basic user pass", "Basic dXNlcjpwYXNzd29yZA==", "Basic [REDACTED]"},
		{"basic unpadded", "auth Basic YWxhZGRpbjpvcGVuc2VzYW1l!", "auth Basic [REDACTED]!"},
		{"basic opaque", "BASIC 0a1b2c3d4e5f6a7b8c9d", "BASIC [REDACTED]"},
		{"basic understanding is kept", "Basic understanding of Go", "Basic understanding of Go"},
		{"basic authentication is kept", "basic authentication", "basic authentication"},
		{"basic settings is kept", "Basic settings live in the first tab", "Basic settings live in the first tab"},
		{"bearer of bad news is kept", "the bearer of bad news", "the bearer of bad news"},
		{"bearer authentication is kept", "Bearer Authentication.", "Bearer Authentication."},
		{"bearer variable is kept", `-H "Authorization: Bearer $TOKEN"`, `-H "Authorization: Bearer $TOKEN"`},
		{"challenge is kept", `WWW-Authenticate: Bearer authorization_uri="https://login.example.com", error="invalid_token"`,
			`WWW-Authenticate: Bearer authorization_uri="https://login.example.com", error="invalid_token"`},
	}
}

func TestTextAuthSchemes(t *testing.T) { checkText(t, authSchemeCases()) }

func headerCases() []textCase {
	return []textCase{
		{"authorization bearer", "Authorization: Bearer sk-test-123456789 api_key=\"abcdef123456\" password=supersecret123",
			"Authorization: Bearer [REDACTED] api_key=\"[REDACTED]\" password=[REDACTED]"},
		{"authorization token scheme", "Authorization: token 0123456789abcdef0123\nAccept: */*",
			"Authorization: token [REDACTED]\nAccept: */*"},
		{"authorization digest to end of line", "  authorization: Digest username=\"bob\", realm=\"api\", response=\"6629fae49393a05397450978507c4ef1\"\nHost: x",
			"  authorization: Digest [REDACTED]\nHost: x"},
		{"authorization aws sigv4", "Authorization: AWS4-HMAC-SHA256 Credential=AKIA" + fake(upper, 16) + "/20240501/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=" + fake(hexLow, 64),
			"Authorization: AWS4-HMAC-SHA256 [REDACTED]"},
		{"authorization bare credential", "Authorization: 0123456789abcdef", "Authorization: [REDACTED]"},
		{"proxy authorization", "Proxy-Authorization: Basic Ym9iOmh1bnRlcjI=", "Proxy-Authorization: Basic [REDACTED]"},
		{"authorization in encoded json", `{"cmd":"curl -H \"Authorization: Negotiate YIIGhgYGKwYBBQUCoIIGejCCBnag\" http://x"}`,
			`{"cmd":"curl -H \"Authorization: Negotiate [REDACTED]\" http://x"}`},
		{"x-api-key", "x-api-key: sk-abcdefghijklmnop1234", "x-api-key: [REDACTED]"},
		{"api-key", "api-key: 3f9a8b7c6d5e4f3a", "api-key: [REDACTED]"},
		{"x-auth-token in curl -v", "> X-Auth-Token: 0a1b2c3d4e5f\n> Accept: */*", "> X-Auth-Token: [REDACTED]\n> Accept: */*"},
		{"cookie", "Cookie: a=b; c=d", "Cookie: [REDACTED]"},
		{"set-cookie", "Set-Cookie: id=a3fWa; Expires=Thu, 21 Oct 2021 07:28:00 GMT; Secure; HttpOnly\nVary: Origin",
			"Set-Cookie: [REDACTED]\nVary: Origin"},
		{"cookie in curl", `curl -H "Cookie: session=abc123; theme=dark" https://x`, `curl -H "Cookie: [REDACTED]" https://x`},
		{"authorization prose is kept", "Authorization: the process of deciding what a user may do.",
			"Authorization: the process of deciding what a user may do."},
		{"cookie prose is kept", "Cookie: a small sweet baked good.", "Cookie: a small sweet baked good."},
	}
}

func TestTextHeaders(t *testing.T) { checkText(t, headerCases()) }

func assignmentCases() []textCase {
	return []textCase{
		{"env export", "export OPENAI_API_KEY=abc123def456 && run", "export OPENAI_API_KEY=[REDACTED] && run"},
		{"prefixed env", "MY_API_KEY=zzz999yyy888", "MY_API_KEY=[REDACTED]"},
		{"github_token", "github_token=abcdef0123456789", "github_token=[REDACTED]"},
		{"yaml prefixed", "db:\n  db_password: hunter2!\n  user: app", "db:\n  db_password: [REDACTED]\n  user: app"},
		{"password", "password=supersecret", "password=[REDACTED]"},
		{"client secret", "client_secret=secret-value-12345", "client_secret=[REDACTED]"},
		{"quoted", `api_key = "abcdef123456"`, `api_key = "[REDACTED]"`},
		{"single quoted", `token='abc 123 def'`, `token='[REDACTED]'`},
		{"backtick", "secret := `s3cr3t`", "secret := `[REDACTED]`"},
		{"go short declaration", `token := "abcdef123456"`, `token := "[REDACTED]"`},
		{"make", "PASSWORD ?= changeme123", "PASSWORD ?= [REDACTED]"},
		{"php array", `'password' => 'hunter2'`, `'password' => '[REDACTED]'`},
		{"query string", "GET /cb?code=xyz&access_token=abc123def&state=1", "GET /cb?code=xyz&access_token=[REDACTED]&state=1"},
		{"form body", "username=bob&password=hunter2&remember=1", "username=bob&password=[REDACTED]&remember=1"},
		{"ado connection string", "Server=db;Database=app;User Id=sa;Password=Str0ng!Pass;Encrypt=true",
			"Server=db;Database=app;User Id=sa;Password=[REDACTED];Encrypt=true"},
		{"libpq keywords", "host=db user=app password=pa55word dbname=app", "host=db user=app password=[REDACTED] dbname=app"},
		{"json string", `{"client_secret": "abc", "id": 7}`, `{"client_secret": "[REDACTED]", "id": 7}`},
		{"json number stays json", `{"token": 12345678, "n": 1}`, `{"token": "[REDACTED]", "n": 1}`},
		{"json escaped quote in value", `{"password": "pa\"ss", "n": 1}`, `{"password": "[REDACTED]", "n": 1}`},
		{"encoded json", `"{\"password\":\"hunter2\",\"user\":\"bob\"}"`, `"{\"password\":\"[REDACTED]\",\"user\":\"bob\"}"`},
		{"xml", "<password>hunter2</password>", "<password>[REDACTED]</password>"},
		{"xml maven", "  <server><id>repo</id><password> s3cret </password></server>", "  <server><id>repo</id><password> [REDACTED] </password></server>"},
		{"flag", "mysql --password hunter22 -u root", "mysql --password [REDACTED] -u root"},
		{"flag quoted", `tool --api-key "abc123def" run`, `tool --api-key "[REDACTED]" run`},
		{"flag with equals", "tool --token=abcdefgh run", "tool --token=[REDACTED] run"},
		{"aws secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [REDACTED]"},
		{"aws json output", `"SecretAccessKey": "` + fake(mixed+"/+", 40) + `",`, `"SecretAccessKey": "[REDACTED]",`},
		{"dotted key", "spring.datasource.password=secret99", "spring.datasource.password=[REDACTED]"},
		{"unterminated quote", `password="abc`, `password="[REDACTED]`},
		{"unterminated quote, first word only", `password="abc def`, `password="[REDACTED] def`},
		{"ini with spaces", "password = hunter2", "password = [REDACTED]"},
		{"go constant", `const apiToken = "abcdef123456"`, `const apiToken = "[REDACTED]"`},
		{"go struct literal", `Config{Token: "abcdef123456", Name: "x"}`, `Config{Token: "[REDACTED]", Name: "x"}`},
		{"weak auth key with credential", "auth: dXNlcjpwYXNzd29yZA==", "auth: [REDACTED]"},
		{"weak json auth", `{"auths":{"ghcr.io":{"auth":"Zm9vOmJhcjEyMw=="}}}`, `{"auths":{"ghcr.io":{"auth":"[REDACTED]"}}}`},
		{"inside code arguments", "connect(password=hunter22)", "connect(password=[REDACTED])"},
		{"prompt string then value", `echo "password: hunter22"`, `echo "password: [REDACTED]"`},
		{"vault token", "VAULT_TOKEN=hvs.CAESIJ" + fake(mixed, 20), "VAULT_TOKEN=[REDACTED]"},
		{"passphrase", "passphrase: correct-horse-battery-staple", "passphrase: [REDACTED]"},
		{"mysql pwd", "MYSQL_PWD=s3cret99", "MYSQL_PWD=[REDACTED]"},
		{"azure storage", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + fake(mixed+"+/", 86) + "==;EndpointSuffix=core.windows.net",
			"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[REDACTED];EndpointSuffix=core.windows.net"},
		{"several on a line", "token=aaaa1111 secret=bbbb2222 tokens=3", "token=[REDACTED] secret=[REDACTED] tokens=3"},
	}
}

func TestTextAssignments(t *testing.T) { checkText(t, assignmentCases()) }

// keptCases are values next to secret-looking keys that are not secrets.
func keptCases() []string {
	return []string{
		"password: str",
		"token = None",
		"secret: true",
		"password=password",
		"Token: accessToken,",
		"Secret: cfg.Secret,",
		`token := os.Getenv("GITHUB_TOKEN")`,
		`if password == "" {`,
		`if token != expected {`,
		"GOOGLE_APPLICATION_CREDENTIALS=/home/me/.config/gcloud/key.json",
		"PASSWORD=$DB_PASSWORD",
		"PASSWORD=%DB_PASSWORD%",
		`password: "{{ vault_db_password }}"`,
		"password: ${{ secrets.DB_PASSWORD }}",
		"password: !vault |",
		"password: *default",
		"api_key: ''",
		"password: '********'",
		"max_tokens: 4096",
		"input_tokens=1200 output_tokens=300",
		"token_count: 17",
		`"eos_token": "</s>"`,
		"PWD=/home/me/src",
		"OLDPWD=/home/me",
		"Password: required for login.",
		"the access token: expired",
		"credentials: 'same-origin'",
		"credentials: include",
		"auth: none",
		`headers = {"Authorization": "Bearer " + token}`,
		"headers: { Authorization: `Bearer ${token}` },",
		`read -rsp "Password: " password`,
		"docker login --password-stdin",
		"--token $GITHUB_TOKEN",
		"--password followed by the value",
		"user:pass",
		"token:abc",
		"secret = [REDACTED]",
		"self.token = nextchar",
		"self.token += nextchar",
		"auth = url_auth if any(url_auth) else None",
		"username, password = split",
		"Token = Ignore + PlainToken",
		"token := tok2",
		"new := &Line{Token: tokens}",
		"addedKey := &AddedKey{PrivateKey: priv, Certificate: cert}",
		"password: PasswordType | None = None,",
		"SO_COOKIE = 0x39",
		`print("shlex: token=" + repr(raw))`,
		"  id-token: write",
		`expected: []byte("multi:\n- <secret>\n- <secret>\n"),`,
		"token: [REDACTED PRIVATE KEY]",
	}
}

func TestTextKeepsReferencesAndProse(t *testing.T) {
	var cases []textCase
	for _, s := range keptCases() {
		cases = append(cases, textCase{s, s, s})
	}
	checkText(t, cases)
}

func allTextCases() []textCase {
	var all []textCase
	for _, set := range [][]textCase{privateKeyCases(), urlCases(), tokenShapeCases(), authSchemeCases(), headerCases(), assignmentCases()} {
		all = append(all, set...)
	}
	return all
}

func TestIsSecretKey(t *testing.T) {
	secret := []string{
		"password", "PASSWORD", "db_password", "dbPassword", "confirm-password", "passwd", "passphrase",
		"MYSQL_PWD", "secret", "client_secret", "clientSecret", "JWT_SECRET", "secrets",
		"token", "access_token", "refresh_token", "id_token", "github_token", "GITHUB_TOKEN", "authToken",
		"x-auth-token", "csrf_token", "next_page_token", "api_key", "apiKey", "X-Api-Key", "OPENAI_API_KEY", "apikeys",
		"aws_secret_access_key", "SecretAccessKey", "private_key", "privateKey", "signing_key",
		"encryption_key", "master_key", "hmac_key", "AccountKey", "authorization", "Proxy-Authorization",
		"cookie", "Set-Cookie", "sessionCookie", "cookies", "credentials", "aws_credentials", "auth",
		"spring.datasource.password",
	}
	plain := []string{
		"", "tokens", "max_tokens", "maxTokens", "input_tokens", "output_tokens", "token_count", "token_type",
		"tokenizer", "max_token", "eos_token", "bos_token", "pad_token", "unk_token", "mask_token",
		"sep_token", "cls_token", "stop_token", "PWD", "OLDPWD", "session_id", "sessionId", "password_min_length",
		"passwordHash", "password_file", "token_ttl", "secretName", "secret_ref", "access_key_id",
		"AccessKeyId", "private_key_id", "public_key", "key", "auth_type", "author", "authenticated",
		"keyboard", "monkey", "turkey", "passport", "bypass", "compass", "user", "ssh_auth_sock",
	}
	for _, k := range secret {
		if !redact.IsSecretKey(k) {
			t.Errorf("IsSecretKey(%q) = false, want true", k)
		}
	}
	for _, k := range plain {
		if redact.IsSecretKey(k) {
			t.Errorf("IsSecretKey(%q) = true, want false", k)
		}
	}
}

// TestFalsePositiveCorpus checks that ordinary prose and code about secrets
// passes through Text untouched, line by line and as one text.
func TestFalsePositiveCorpus(t *testing.T) {
	data, err := os.ReadFile("testdata/false_positives.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		line := sc.Text()
		lines++
		if got := redact.Text(line); got != line {
			t.Errorf("line %d changed:\n  in: %q\n got: %q", lines, line, got)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines < 300 {
		t.Errorf("corpus has %d lines, want at least 300", lines)
	}
	if got := redact.Text(string(data)); got != string(data) {
		t.Errorf("the corpus as one text changed")
	}
}

func contextCases() []textCase {
	pw := "Zx9Qm2#Lk7"
	return []textCase{
		{"curl -u", "curl -u admin:" + pw + " https://api.example.com", "curl -u admin:[REDACTED] https://api.example.com"},
		{"curl --user=", `curl --user="ci:` + pw + `" https://x`, `curl --user="ci:[REDACTED]" https://x`},
		{"mysql -p glued", "mysql -u root -p" + pw + " app", "mysql -u root -p[REDACTED] app"},
		{"mysql -p quoted", "mysql -p'" + pw + "' app", "mysql -p'[REDACTED]' app"},
		{"docker login -p", "docker login -u bot -p " + pw + " ghcr.io", "docker login -u bot -p [REDACTED] ghcr.io"},
		{"sshpass", "sshpass -p '" + pw + "' ssh host", "sshpass -p '[REDACTED]' ssh host"},
		{"vault login", "vault login " + fake(mixed, 26), "vault login [REDACTED]"},
		{"htpasswd -nb", "htpasswd -nbB admin " + pw, "htpasswd -nbB admin [REDACTED]"},
		{"htpasswd -b file", "htpasswd -b .htpasswd admin " + pw, "htpasswd -b .htpasswd admin [REDACTED]"},
		{"openssl pass:", "openssl pkcs12 -export -passout pass:" + pw + " -out a.p12", "openssl pkcs12 -export -passout pass:[REDACTED] -out a.p12"},
		{"sqlplus", "sqlplus scott/" + pw + "@orcl", "sqlplus scott/[REDACTED]@orcl"},
		{"echo into password-stdin", `echo "` + pw + `" | docker login -u me --password-stdin`, `echo "[REDACTED]" | docker login -u me --password-stdin`},
		{"fish set", "set -gx OPENAI_API_KEY " + fake(mixed, 30), "set -gx OPENAI_API_KEY [REDACTED]"},
		{"single-dash flag", "influx -password " + pw + " -execute 'show databases'", "influx -password [REDACTED] -execute 'show databases'"},
		{"netrc one line", "machine api.example.com login me password " + pw, "machine api.example.com login me password [REDACTED]"},
		{"netrc lines", "machine github.com\n  login bot\n  password " + pw + "\n", "machine github.com\n  login bot\n  password [REDACTED]\n"},
		{"kubernetes yaml", "kind: Secret\ndata:\n  dsn: " + fake(b64url, 24) + "\n  url: aHR0cHM6Ly94\nmetadata:\n  name: db\n",
			"kind: Secret\ndata:\n  dsn: [REDACTED]\n  url: [REDACTED]\nmetadata:\n  name: db\n"},
		{"os.environ", "os.environ['API_KEY'] = '" + fake(mixed, 24) + "'", "os.environ['API_KEY'] = '[REDACTED]'"},
		{"process.env", `process.env["AUTH_TOKEN"] = "` + fake(mixed, 24) + `";`, `process.env["AUTH_TOKEN"] = "[REDACTED]";`},
		{"Setenv call", `os.Setenv("API_TOKEN", "` + fake(mixed, 24) + `")`, `os.Setenv("API_TOKEN", "[REDACTED]")`},
		{"define call", "define('AUTH_KEY', '" + fake(mixed, 24) + "');", "define('AUTH_KEY', '[REDACTED]');"},
		{"pass variable", "SMTP_PASS=" + pw, "SMTP_PASS=[REDACTED]"},
		{"secret key base", "SECRET_KEY_BASE=" + fake(hexLow, 64), "SECRET_KEY_BASE=[REDACTED]"},
		{"app key", "APP_KEY=base64:" + fake(mixed, 43) + "=", "APP_KEY=[REDACTED]"},
		{"provider name", "DISCORD_CLIENT_ID=123456789012345678", "DISCORD_CLIENT_ID=[REDACTED]"},
		{"url password with / # @ :", "postgres://app:p/ss#w@rd:9x@db.internal:5432/app", "postgres://app:[REDACTED]@db.internal:5432/app"},
		{"databricks", "dapi" + fake(hexLow, 32), "[REDACTED]"},
		{"twilio", "SK" + fake(hexLow, 32), "[REDACTED]"},
		{"telegram url", "https://api.telegram.org/bot1234567890:AA" + fake(b64url, 33) + "/getMe", "https://api.telegram.org/bot[REDACTED]/getMe"},
		{"azure ad secret", "client_id=x secret: ab1" + "8Q~" + fake(b64url, 34), "client_id=x secret: [REDACTED]"},
	}
}

func TestTextContexts(t *testing.T) { checkText(t, contextCases()) }

// keptContextCases are lines next to the new rules that must not change.
func keptContextCases() []string {
	return []string{
		"mysql -u root -p",
		"docker login -p is insecure; use --password-stdin",
		"curl -u \"$USER:$PASS\" https://api.example.com",
		"vault login -method=oidc",
		"htpasswd -c .htpasswd admin",
		"A .netrc file holds machine, login and password lines.",
		"postgres://user:password@localhost:5432/app",
		"http://localhost:8420/v1/recall?next=a@b.example",
		`"primary_key": "id",`,
		`"public_key": "MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE="`,
		"DISCORD_CHANNEL_ID=123456789012345678",
		"SENTRY_RELEASE=api@2024.05.01+abc1234",
		"token_expiry=2024-05-01T12:00:00Z",
		`os.Setenv("TZ", "UTC")`,
		"set the token value before the deploy",
		"the machine learning password manager",
		`"integrity": "sha512-` + fake(mixed+"+/", 86) + `=="`,
	}
}

func TestTextKeepsContextLookAlikes(t *testing.T) {
	var cases []textCase
	for _, s := range keptContextCases() {
		cases = append(cases, textCase{s, s, s})
	}
	checkText(t, cases)
}

func TestIsSecretKeyWords(t *testing.T) {
	for k, want := range map[string]bool{
		"SMTP_PASS": true, "MYSQL_ROOT_PW": true, "DB_PWD": true, "SECRET_KEY_BASE": true, "APP_KEY": true,
		"api_key_prod": true, "PASSWORD_2": true, "accessTokenProd": true, "X-Gateway-Key": true, "AUTH_SALT": true,
		"bypass": false, "compass": false, "sort_key": false, "public_key": false, "primary_key": false,
		"DISCORD_CLIENT_ID": false, "auth_code": false, "password_min_length": false,
	} {
		if got := redact.IsSecretKey(k); got != want {
			t.Errorf("IsSecretKey(%q) = %v, want %v", k, got, want)
		}
	}
}

func TestJSONKubernetesSecret(t *testing.T) {
	doc := `{"apiVersion":"v1","data":{"dsn":"` + fake(b64url, 24) + `","n":1},"kind":"Secret","metadata":{"name":"db","data":"x"}}`
	want := `{"apiVersion":"v1","data":{"dsn":"[REDACTED]","n":1},"kind":"Secret","metadata":{"name":"db","data":"x"}}`
	got, err := redact.JSON([]byte(doc))
	if err != nil || string(got) != want {
		t.Fatalf("JSON(%s)\n got: %s, %v\nwant: %s", doc, got, err, want)
	}
	in := decode(t, []byte(doc))
	if v, w := redact.Value(in), decode(t, got); !reflect.DeepEqual(v, w) {
		t.Fatalf("Value disagrees with JSON:\nValue: %#v\n JSON: %#v", v, w)
	}
}
