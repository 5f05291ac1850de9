package redact

import "strings"

// alphabet is the set of bytes a token continues with after its prefix.
type alphabet uint8

const (
	upperDigit       alphabet = iota // A-Z 0-9
	alnum                            // A-Z a-z 0-9
	alnumUnder                       // A-Z a-z 0-9 _
	alnumDash                        // A-Z a-z 0-9 -
	alnumDashUnder                   // A-Z a-z 0-9 - _ (base64url)
	alnumDashUnderEq                 // base64url and =
	lowerHex                         // 0-9 a-f
	anyHex                           // 0-9 a-f A-F
	upperDash                        // A-Z 0-9 -
	b64Std                           // A-Z a-z 0-9 + / =
	b64Under                         // A-Z a-z 0-9 + / = _
	b64Any                           // A-Z a-z 0-9 + / = - _
	b64AnyDot                        // A-Z a-z 0-9 + / = - _ .
	urlPath                          // A-Z a-z 0-9 - _ /
	urlPathAt                        // A-Z a-z 0-9 - _ / @
	jwtChars                         // A-Z a-z 0-9 - _ .
	dotted                           // A-Z a-z 0-9 - _ . =
	alnumPercent                     // A-Z a-z 0-9 %
	alnumDollar                      // A-Z a-z 0-9 $
	djangoChars                      // a-z 0-9 and ! @ # $ % ^ & * ( - _ = + )
	numAlphabets
)

func (a alphabet) has(c byte) bool {
	switch a {
	case upperDigit:
		return isUpper(c) || isDigit(c)
	case alnum:
		return isAlnum(c)
	case alnumUnder:
		return isAlnum(c) || c == '_'
	case alnumDash:
		return isAlnum(c) || c == '-'
	case alnumDashUnder:
		return isAlnum(c) || c == '-' || c == '_'
	case alnumDashUnderEq:
		return isAlnum(c) || c == '-' || c == '_' || c == '='
	case lowerHex:
		return isDigit(c) || ('a' <= c && c <= 'f')
	case anyHex:
		return isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'f')
	case upperDash:
		return isUpper(c) || isDigit(c) || c == '-'
	case b64Std:
		return isAlnum(c) || c == '+' || c == '/' || c == '='
	case b64Under:
		return isAlnum(c) || c == '+' || c == '/' || c == '=' || c == '_'
	case b64Any:
		return isAlnum(c) || strings.IndexByte("+/=-_", c) >= 0
	case b64AnyDot:
		return isAlnum(c) || strings.IndexByte("+/=-_.", c) >= 0
	case urlPath:
		return isAlnum(c) || c == '-' || c == '_' || c == '/'
	case urlPathAt:
		return isAlnum(c) || c == '-' || c == '_' || c == '/' || c == '@'
	case jwtChars:
		return isAlnum(c) || c == '-' || c == '_' || c == '.'
	case dotted:
		return isAlnum(c) || c == '-' || c == '_' || c == '.' || c == '='
	case alnumPercent:
		return isAlnum(c) || c == '%'
	case alnumDollar:
		return isAlnum(c) || c == '$'
	case djangoChars:
		return isAlnum(c) || strings.IndexByte("!@#$%^&*(-_=+)", c) >= 0
	}
	return false
}

// runMemo remembers, per alphabet, the last run scanned. Every position inside
// a run ends where the run ends, so candidates nested in one long run (for
// example "sk-a-sk-a-sk-a...") cost O(1) each and the scan stays linear.
type runMemo struct {
	from, to                        int
	lastDigit, lastUpper, lastLower int
}

type tokenScanner struct {
	s    string
	memo [numAlphabets]runMemo
	// nextDot is the first '.' at or after the last JWT candidate, and
	// dots the dots that follow the one at dotsAfter; both only move
	// forward, so JWT candidates stay linear too.
	nextDot   int
	dotsAfter int
	dots      [4]int
	nDots     int
}

// run returns the end of the run of a starting at i and the index of its last
// digit (-1 when none).
func (t *tokenScanner) run(i int, a alphabet) (end, lastDigit int) {
	m := &t.memo[a]
	if i >= m.from && i < m.to {
		return m.to, m.lastDigit
	}
	*m = runMemo{from: i, to: i, lastDigit: -1, lastUpper: -1, lastLower: -1}
	for end = i; end < len(t.s) && a.has(t.s[end]); end++ {
		switch c := t.s[end]; {
		case isDigit(c):
			m.lastDigit = end
		case isUpper(c):
			m.lastUpper = end
		case isLower(c):
			m.lastLower = end
		}
	}
	m.to = end
	return end, m.lastDigit
}

// mixedCase reports whether the run of a that contains j has both upper- and
// lower-case letters after j, as random base62 and base64 tokens do and
// dashed names such as the SSH algorithm sk-ecdsa-sha2-nistp256-cert-v01 do
// not. It must follow a call to run for the same run.
func (t *tokenScanner) mixedCase(j int, a alphabet) bool {
	m := &t.memo[a]
	return m.lastUpper >= j && m.lastLower >= j
}

// need lists what a token body must hold besides its alphabet and length.
type need uint8

const (
	// needDigit: at least one digit.
	needDigit need = 1 << iota
	// needMixed: upper- and lower-case letters.
	needMixed
	// strictEnd: the token is not followed by a byte that continues
	// base64 ('+', '/', '='), nor preceded by '+' or '/', for prefixes that
	// a base64 blob can hold by chance (EAAA...).
	strictEnd
	// routable: a GitLab routable token may go on with ".xx" and seven more
	// lower-case letters or digits.
	routable
	// dashDigit: a Databricks token may go on with '-' and a digit.
	dashDigit
)

// tokenRule is a token that starts with prefix and goes on with min..max
// bytes of body.
type tokenRule struct {
	prefix   string
	body     alphabet
	min, max int
	need     need
}

// match returns the end of the token r at i, or -1.
func (t *tokenScanner) match(i int, r tokenRule) int {
	s := t.s
	if !strings.HasPrefix(s[i:], r.prefix) {
		return -1
	}
	j := i + len(r.prefix)
	end, lastDigit := t.run(j, r.body)
	if n := end - j; n < r.min || n > r.max {
		return -1
	}
	if r.need&needDigit != 0 && lastDigit < j {
		return -1
	}
	if r.need&needMixed != 0 && !t.mixedCase(j, r.body) {
		return -1
	}
	if r.need&routable != 0 && end+10 <= len(s) && s[end] == '.' && isRoutableTail(s[end+1:end+10]) {
		end += 10
	}
	if r.need&dashDigit != 0 && end+2 <= len(s) && s[end] == '-' && isDigit(s[end+1]) {
		end += 2
	}
	if end < len(s) && isAlnum(s[end]) {
		return -1
	}
	if r.need&strictEnd != 0 && (end < len(s) && strings.IndexByte("+/=", s[end]) >= 0 ||
		i > 0 && (s[i-1] == '+' || s[i-1] == '/')) {
		return -1
	}
	return end
}

func isRoutableTail(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isLower(s[i]) && !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// The token rules by first byte. Each has a fixed prefix, an alphabet and a
// length range (bytes after the prefix), so random text does not match;
// within one first byte, longer prefixes come first where they overlap.
var (
	rulesA = []tokenRule{
		{strings.Repeat("A", 22), alnumPercent, 60, 200, strictEnd}, // Twitter app bearer
		{"AKIA", upperDigit, 16, 16, 0},
		{"ASIA", upperDigit, 16, 16, 0},
		{"ABIA", upperDigit, 16, 16, 0},
		{"ACCA", upperDigit, 16, 16, 0},
		{"A3T", upperDigit, 17, 17, 0},
		{"A3-", upperDash, 30, 40, needDigit}, // 1Password secret key
		{"AIza", alnumDashUnder, 35, 35, 0},
		{"AGE-SECRET-KEY-1", upperDigit, 50, 80, 0},
		{"AKCp", alnum, 60, 80, needDigit},          // Artifactory API key
		{"ATATT3", alnumDashUnderEq, 150, 260, 0},   // Atlassian API token
		{"API-", upperDigit, 26, 26, needDigit},     // Octopus Deploy
		{"AQVN", alnumDashUnder, 35, 38, needDigit}, // Yandex API key
		{"AC", anyHex, 32, 32, needDigit},           // Twilio account SID
	}
	rulesC = []tokenRule{{"CLOJARS_", alnum, 60, 60, 0}}
	rulesE = []tokenRule{
		{"EAAC", alnum, 100, 400, strictEnd | needDigit}, // Facebook page token
		{"EAAM", alnum, 100, 400, strictEnd | needDigit},
		{"EAAA", alnumDashUnder, 22, 60, strictEnd | needDigit | needMixed}, // Square
		{"EZAK", alnum, 54, 54, 0},                                          // EasyPost
		{"EZTK", alnum, 54, 54, 0},
	}
	rulesF = []tokenRule{
		{"FLWSECK_TEST-", alnumDash, 12, 40, needDigit}, // Flutterwave
		{"FLWPUBK_TEST-", alnumDash, 12, 40, needDigit},
		{"FLWSECK-", alnumDash, 12, 40, needDigit},
		{"FLWPUBK-", alnumDash, 12, 40, needDigit},
	}
	rulesG = []tokenRule{
		{"GOCSPX-", alnumDashUnder, 20, 64, 0},
		{"GR1348941", alnumDashUnder, 20, 64, 0}, // GitLab runner registration
	}
	rulesH = []tokenRule{{"HRKU-AA", alnumDashUnder, 58, 58, 0}} // Heroku
	rulesL = []tokenRule{{"LTAI", alnum, 20, 20, needDigit}}     // Alibaba
	rulesN = []tokenRule{
		{"NRAK-", upperDigit, 27, 27, 0}, // New Relic
		{"NRAA-", upperDigit, 27, 27, 0},
		{"NRII-", alnumDashUnder, 32, 32, 0},
		{"NRJS-", lowerHex, 19, 19, 0},
	}
	rulesP = []tokenRule{{"PMAK-", alnumDash, 59, 59, needDigit}} // Postman
	rulesS = []tokenRule{
		{"SK", anyHex, 32, 32, needDigit}, // Twilio API key
	}
	rulesLowerA = []tokenRule{
		{"access_token$production$", alnumDollar, 16, 80, 0}, // Braintree
		{"access_token$sandbox$", alnumDollar, 16, 80, 0},
		{"api_org_", alnum, 30, 40, 0}, // Hugging Face organisation
	}
	rulesLowerC = []tokenRule{
		{"castai_v1_", alnumUnder, 60, 90, 0},
		{"cmVmd", alnum, 59, 59, needDigit}, // Artifactory reference token
		{"ctp_", alnum, 30, 248, needDigit}, // Chief Tools
		{"cto_", alnum, 30, 248, needDigit},
		{"ctr_", alnum, 30, 248, needDigit},
	}
	rulesLowerD = []tokenRule{
		{"dckr_pat_", alnumDashUnder, 20, 64, 0},
		{"dop_v1_", lowerHex, 64, 64, 0},
		{"doo_v1_", lowerHex, 64, 64, 0},
		{"dor_v1_", lowerHex, 64, 64, 0},
		{"dapi", lowerHex, 32, 32, dashDigit},   // Databricks
		{"dnkey-", alnumDashUnderEq, 70, 90, 0}, // Defined Networking
		{"duffel_test_", alnumDashUnderEq, 43, 43, 0},
		{"duffel_live_", alnumDashUnderEq, 43, 43, 0},
		{"django-insecure-", djangoChars, 20, 250, 0},
		{"dt0c01.", jwtChars, 89, 89, 0}, // Dynatrace
	}
	rulesLowerE = []tokenRule{{"eyJrIjoi", b64Std, 70, 400, 0}} // Grafana API key
	rulesLowerF = []tokenRule{
		{"fio-u-", alnumDashUnderEq, 64, 64, 0}, // Frame.io
		{"fo1_", alnumDashUnder, 43, 43, 0},     // Fly.io
		{"fm1a_", b64Std, 100, 4096, 0},
		{"fm1r_", b64Std, 100, 4096, 0},
		{"fm2_", b64Std, 100, 4096, 0},
	}
	rulesLowerG = []tokenRule{
		{"ghp_", alnum, 30, 255, 0},
		{"gho_", alnum, 30, 255, 0},
		{"ghu_", alnum, 30, 255, 0},
		{"ghs_", alnum, 30, 255, 0},
		{"ghr_", alnum, 30, 255, 0},
		{"github_pat_", alnumUnder, 30, 255, 0},
		{"glpat-", alnumDashUnder, 20, 300, routable},
		{"gldt-", alnumDashUnder, 20, 255, 0},
		{"glrt-", alnumDashUnder, 20, 300, routable},
		{"glptt-", alnumDashUnder, 20, 255, 0},
		{"glft-", alnumDashUnder, 20, 255, 0},
		{"glcbt-", alnumDashUnder, 20, 255, 0},
		{"glsoat-", alnumDashUnder, 20, 255, 0},
		{"glffct-", alnumDashUnder, 20, 255, 0},
		{"glimt-", alnumDashUnder, 25, 255, 0},
		{"glagent-", alnumDashUnder, 50, 255, 0},
		{"gloas-", alnumDashUnder, 64, 255, 0},
		{"glc_", b64Std, 32, 400, 0},       // Grafana Cloud
		{"glsa_", alnumUnder, 41, 41, 0},   // Grafana service account
		{"gsk_", alnum, 48, 52, needDigit}, // Groq
	}
	rulesLowerH = []tokenRule{
		{"hvs.", alnumDashUnder, 24, 512, 0},
		{"hvb.", alnumDashUnder, 24, 512, 0},
		{"hvr.", alnumDashUnder, 24, 512, 0},
		{"hf_", alnum, 30, 40, 0},
	}
	rulesLowerI = []tokenRule{{"ico-", alnum, 32, 32, needDigit}} // Infracost
	rulesLowerK = []tokenRule{{"key-", lowerHex, 32, 32, 0}}      // Mailgun
	rulesLowerL = []tokenRule{
		{"lin_api_", alnum, 40, 40, 0}, // Linear
		{"lin_oauth_", lowerHex, 64, 64, 0},
		{"live_pub_", lowerHex, 31, 31, 0}, // Lob
		{"live_", lowerHex, 35, 35, 0},
		{"lsv2_pt_", alnumUnder, 40, 50, 0}, // LangSmith
		{"lsv2_sk_", alnumUnder, 40, 50, 0},
	}
	rulesLowerN = []tokenRule{
		{"npm_", alnum, 30, 40, 0},
		{"ntn_", alnum, 40, 50, needDigit}, // Notion
	}
	rulesLowerO = []tokenRule{{"ops_eyJ", b64Any, 250, 8192, 0}} // 1Password service account
	rulesLowerP = []tokenRule{
		{"pypi-AgEIcHlwaS5vcmc", alnumDashUnder, 20, 1024, 0},
		{"p8e-", alnum, 32, 32, 0}, // Adobe
		{"pplx-", alnum, 48, 48, 0},
		{"pscale_tkn_", dotted, 32, 64, 0}, // PlanetScale
		{"pscale_oauth_", dotted, 32, 64, 0},
		{"pscale_pw_", dotted, 32, 64, 0},
		{"pnu_", alnum, 36, 36, 0}, // Prefect
		{"pul-", lowerHex, 40, 40, 0},
		{"pubkey-", lowerHex, 32, 32, 0}, // Mailgun
		{"production_", alnumUnder, 25, 25, 0},
	}
	rulesLowerR = []tokenRule{
		{"rk_live_", alnum, 10, 255, 0},
		{"rk_test_", alnum, 10, 255, 0},
		{"rk_prod_", alnum, 10, 255, 0},
		{"rdme_", alnum, 70, 70, 0},
		{"rubygems_", lowerHex, 48, 48, 0},
	}
	rulesLowerS = []tokenRule{
		{"sk_live_", alnum, 10, 255, 0},
		{"sk_test_", alnum, 10, 255, 0},
		{"sk_prod_", alnum, 10, 255, 0},
		{"shpat_", anyHex, 32, 32, 0},
		{"shpca_", anyHex, 32, 32, 0},
		{"shppa_", anyHex, 32, 32, 0},
		{"shpss_", anyHex, 32, 32, 0},
		{"s-s4t2ud-", lowerHex, 64, 64, 0}, // 42 intra
		{"s-s4t2af-", lowerHex, 64, 64, 0},
		{"sha256~", alnumDashUnder, 43, 43, 0}, // OpenShift
		{"sntryu_", lowerHex, 64, 64, 0},       // Sentry
		{"sntrys_eyJ", b64Under, 60, 1024, 0},
		{"sm_aat_", alnum, 16, 16, 0}, // SettleMint
		{"sm_pat_", alnum, 16, 16, 0},
		{"sm_sat_", alnum, 16, 16, 0},
		{"shippo_live_", lowerHex, 40, 40, 0},
		{"shippo_test_", lowerHex, 40, 40, 0},
		{"squ_", lowerHex, 40, 40, 0}, // SonarQube
		{"sqp_", lowerHex, 40, 40, 0},
		{"sqa_", lowerHex, 40, 40, 0},
		{"sgp_", alnumUnder, 40, 64, needDigit}, // Sourcegraph
		{"sq0atp-", alnumDashUnder, 22, 64, 0},  // Square
		{"sq0csp-", alnumDashUnder, 40, 64, 0},
		{"secret_", alnum, 43, 43, needDigit | needMixed}, // Notion, legacy
		{"sandbox_", alnumUnder, 25, 25, 0},               // Braintree
	}
	rulesLowerT = []tokenRule{
		{"tk-us-", alnumDashUnder, 48, 48, 0}, // Scalingo
		{"tfp_", dotted, 59, 59, 0},           // Typeform
		{"test_pub_", lowerHex, 31, 31, 0},    // Lob
		{"test_", lowerHex, 35, 35, 0},
	}
	rulesLowerV = []tokenRule{
		{"v1.0-", alnumDash, 171, 171, 0},   // Cloudflare origin CA
		{"vcp_", alnum, 24, 128, needDigit}, // Vercel
		{"vci_", alnum, 24, 128, needDigit},
		{"vca_", alnum, 24, 128, needDigit},
		{"vcr_", alnum, 24, 128, needDigit},
		{"vck_", alnum, 24, 128, needDigit},
	}
	rulesLowerW = []tokenRule{{"whsec_", alnum, 24, 255, 0}}
	rulesLowerX = []tokenRule{
		{"xoxe.xoxp-", alnumDash, 100, 255, needDigit},
		{"xoxe.xoxb-", alnumDash, 100, 255, needDigit},
		{"xoxb-", alnumDash, 10, 255, needDigit},
		{"xoxa-", alnumDash, 10, 255, needDigit},
		{"xoxp-", alnumDash, 10, 255, needDigit},
		{"xoxr-", alnumDash, 10, 255, needDigit},
		{"xoxs-", alnumDash, 10, 255, needDigit},
		{"xoxe-", alnumDash, 10, 255, needDigit},
		{"xoxo-", alnumDash, 10, 255, needDigit},
		{"xapp-", alnumDash, 10, 255, needDigit},
		{"xkeysib-", alnumDash, 81, 81, 0}, // Brevo (Sendinblue)
		{"xsmtpsib-", alnumDash, 81, 81, 0},
	}
	rulesLowerY = []tokenRule{{"ya29.", alnumDashUnder, 20, 2048, 0}}
)

func rulesFor(c byte) []tokenRule {
	switch c {
	case 'A':
		return rulesA
	case 'C':
		return rulesC
	case 'E':
		return rulesE
	case 'F':
		return rulesF
	case 'G':
		return rulesG
	case 'H':
		return rulesH
	case 'L':
		return rulesL
	case 'N':
		return rulesN
	case 'P':
		return rulesP
	case 'S':
		return rulesS
	case 'a':
		return rulesLowerA
	case 'c':
		return rulesLowerC
	case 'd':
		return rulesLowerD
	case 'e':
		return rulesLowerE
	case 'f':
		return rulesLowerF
	case 'g':
		return rulesLowerG
	case 'h':
		return rulesLowerH
	case 'i':
		return rulesLowerI
	case 'k':
		return rulesLowerK
	case 'l':
		return rulesLowerL
	case 'n':
		return rulesLowerN
	case 'o':
		return rulesLowerO
	case 'p':
		return rulesLowerP
	case 'r':
		return rulesLowerR
	case 's':
		return rulesLowerS
	case 't':
		return rulesLowerT
	case 'v':
		return rulesLowerV
	case 'w':
		return rulesLowerW
	case 'x':
		return rulesLowerX
	case 'y':
		return rulesLowerY
	}
	return nil
}
