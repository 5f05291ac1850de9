package redacttest

import (
	"encoding/base64"
	"strings"
)

// family generates one kind of secret.
type family struct {
	name string
	make func(g *gen) string
}

// tokenFamilies are secrets recognisable by their shape alone: a fixed
// prefix or structure and a random body. They are placed in neutral
// contexts, next to names that say nothing about secrets.
func tokenFamilies() []family {
	b64u := base64.RawURLEncoding.EncodeToString
	return []family{
		{"aws-access-key-id", func(g *gen) string { return g.pick("AKIA", "ASIA", "ABIA", "ACCA") + g.str(base32, 16) }},
		{"aws-access-key-id-a3t", func(g *gen) string { return "A3T" + g.str(upperAlnum, 1) + g.str(base32, 16) }},
		{"gcp-api-key", func(g *gen) string { return "AIza" + g.str(b64url, 35) }},
		{"google-oauth-secret", func(g *gen) string { return "GOCSPX-" + g.str(b64url, 28) }},
		{"google-oauth-access", func(g *gen) string { return "ya29." + g.str(b64url, 140) }},
		{"github-pat", func(g *gen) string { return g.pick("ghp_", "gho_", "ghu_", "ghs_", "ghr_") + g.str(alnum, 36) }},
		{"github-fine-grained", func(g *gen) string { return "github_pat_11" + g.str(upperAlnum, 20) + "_" + g.str(alnum, 59) }},
		{"gitlab-pat", func(g *gen) string { return "glpat-" + g.str(b64url, 20) }},
		{"gitlab-pat-routable", func(g *gen) string {
			return "glpat-" + g.str(b64url, 36) + "." + g.str(lowerAlnum, 2) + g.str(lowerAlnum, 7)
		}},
		{"gitlab-other", func(g *gen) string {
			switch g.r.IntN(9) {
			case 0:
				return "gldt-" + g.str(b64url, 20)
			case 1:
				return "glrt-" + g.str(b64url, 20)
			case 2:
				return "glptt-" + g.str(lowerHex, 40)
			case 3:
				return "glft-" + g.str(b64url, 20)
			case 4:
				return "glcbt-" + g.str(alnum, 2) + "_" + g.str(b64url, 20)
			case 5:
				return "glsoat-" + g.str(b64url, 20)
			case 6:
				return "glffct-" + g.str(b64url, 20)
			case 7:
				return "glagent-" + g.str(b64url, 50)
			}
			return "gloas-" + g.str(b64url, 64)
		}},
		{"gitlab-runner-registration", func(g *gen) string { return "GR1348941" + g.str(b64url, 20) }},
		{"gitlab-incoming-mail", func(g *gen) string { return "glimt-" + g.str(b64url, 25) }},
		{"slack-bot", func(g *gen) string {
			return "xoxb-" + g.str(digits, 12) + "-" + g.str(digits, 13) + "-" + g.str(alnum, 24)
		}},
		{"slack-user", func(g *gen) string {
			return "xoxp-" + g.str(digits, 11) + "-" + g.str(digits, 12) + "-" + g.str(digits, 13) + "-" + g.str(lowerHex, 32)
		}},
		{"slack-app", func(g *gen) string {
			return "xapp-1-A" + g.str(upperAlnum, 10) + "-" + g.str(digits, 13) + "-" + g.str(lowerHex, 64)
		}},
		{"slack-config", func(g *gen) string { return "xoxe.xoxp-1-" + g.str(upperAlnum, 164) }},
		{"slack-config-refresh", func(g *gen) string { return "xoxe-1-" + g.str(upperAlnum, 146) }},
		{"slack-legacy", func(g *gen) string {
			return g.pick("xoxa-2-", "xoxr-", "xoxs-"+g.str(digits, 10)+"-"+g.str(digits, 11)+"-"+g.str(digits, 12)+"-") + g.str(lowerHex, 40)
		}},
		{"stripe-secret", func(g *gen) string {
			return g.pick("sk_live_", "sk_test_", "rk_live_", "rk_test_", "sk_prod_") + g.str(alnum, 24+g.r.IntN(75))
		}},
		{"stripe-webhook", func(g *gen) string { return "whsec_" + g.str(alnum, 32) }},
		{"openai-project", func(g *gen) string {
			return g.pick("sk-proj-", "sk-svcacct-", "sk-admin-") + g.str(b64url, 74) + "T3BlbkFJ" + g.str(b64url, 74)
		}},
		{"openai-legacy", func(g *gen) string { return "sk-" + g.str(alnum, 20) + "T3BlbkFJ" + g.str(alnum, 20) }},
		{"anthropic", func(g *gen) string { return g.pick("sk-ant-api03-", "sk-ant-admin01-") + g.str(b64url, 93) + "AA" }},
		{"jwt", func(g *gen) string {
			h := b64u([]byte(`{"alg":"RS256","kid":"` + g.str(alnum, 12) + `","typ":"JWT"}`))
			p := b64u([]byte(`{"sub":"` + g.uuid() + `","iat":17` + g.str(digits, 8) + `,"scope":"read write"}`))
			return h + "." + p + "." + g.str(b64url, 86)
		}},
		{"npm", func(g *gen) string { return "npm_" + g.str(alnum, 36) }},
		{"huggingface", func(g *gen) string { return g.pick("hf_", "api_org_") + g.str(uppers+lowers, 34) }},
		{"vault-service", func(g *gen) string { return "hvs." + g.str(b64url, 95) }},
		{"vault-batch", func(g *gen) string { return "hvb." + g.str(b64url, 150) }},
		{"vault-legacy", func(g *gen) string { return "s." + g.str(alnum, 24) }},
		{"pypi", func(g *gen) string { return "pypi-AgEIcHlwaS5vcmc" + g.str(b64url, 70) }},
		{"docker-hub", func(g *gen) string { return "dckr_pat_" + g.str(b64url, 27) }},
		{"sendgrid", func(g *gen) string { return "SG." + g.str(b64url, 22) + "." + g.str(b64url, 43) }},
		{"digitalocean", func(g *gen) string { return g.pick("dop_v1_", "doo_v1_", "dor_v1_") + g.str(lowerHex, 64) }},
		{"shopify", func(g *gen) string {
			return g.pick("shpat_", "shpca_", "shppa_", "shpss_") + g.str(g.pick(lowerHex, upperHex), 32)
		}},
		{"age", func(g *gen) string { return "AGE-SECRET-KEY-1" + g.str(bech32, 58) }},
		{"1password-secret-key", func(g *gen) string {
			return "A3-" + g.str(upperAlnum, 6) + "-" + g.str(upperAlnum, 11) + "-" + g.str(upperAlnum, 5) + "-" + g.str(upperAlnum, 5) + "-" + g.str(upperAlnum, 5)
		}},
		{"1password-service-account", func(g *gen) string {
			return "ops_" + b64u([]byte(`{"signInAddress":"my.1password.com","userAuth":{"method":"SRPg-4096","alg":"PBES2g-HS256","iterations":650000,"salt":"`+g.str(b64url, 22)+`"},"email":"`+g.str(lowers, 12)+`@1passwordserviceaccounts.com","srpX":"`+g.str(lowerHex, 64)+`","muk":{"alg":"A256GCM","ext":true,"k":"`+g.str(b64url, 43)+`"}}`))
		}},
		{"adobe-client-secret", func(g *gen) string { return "p8e-" + g.str(alnum, 32) }},
		{"alibaba-access-key-id", func(g *gen) string { return "LTAI" + g.str(alnum, 20) }},
		{"artifactory-api-key", func(g *gen) string { return "AKCp" + g.str(alnum, 69) }},
		{"artifactory-reference", func(g *gen) string { return "cmVmd" + g.str(alnum, 59) }},
		{"atlassian-api-token", func(g *gen) string { return "ATATT3" + g.str(b64url, 178) + "=" + g.str(upperHex, 8) }},
		{"authress", func(g *gen) string {
			return g.pick("sc_", "ext_", "authress_") + g.str(lowerAlnum, 12) + "." + g.str(lowerAlnum, 5) + ".acc_" + g.str(lowerAlnum, 20) + "." + g.str(b64, 60)
		}},
		{"azure-ad-client-secret", func(g *gen) string {
			return g.str(alnum+"_~.", 3) + g.str(digits, 1) + "Q~" + g.str(alnum+"_~.-", 34)
		}},
		{"clickhouse", func(g *gen) string { return "4b1d" + g.str(alnum, 38) }},
		{"clojars", func(g *gen) string { return "CLOJARS_" + g.str(lowerAlnum, 60) }},
		{"cloudflare-origin-ca", func(g *gen) string { return "v1.0-" + g.str(lowerHex, 24) + "-" + g.str(lowerHex, 146) }},
		{"databricks", func(g *gen) string { return "dapi" + g.str(lowerHex, 32) + g.pick("", "-2") }},
		{"defined-networking", func(g *gen) string {
			return "dnkey-" + g.str(lowerAlnum, 26) + "-" + g.str(lowerAlnum+"_", 52)
		}},
		{"doppler", func(g *gen) string {
			return g.pick("dp.pt.", "dp.st.prd.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit.") + g.str(alnum, 43)
		}},
		{"duffel", func(g *gen) string { return g.pick("duffel_test_", "duffel_live_") + g.str(b64url, 43) }},
		{"dynatrace", func(g *gen) string { return "dt0c01." + g.str(upperAlnum, 24) + "." + g.str(upperAlnum, 64) }},
		{"easypost", func(g *gen) string { return g.pick("EZAK", "EZTK") + g.str(alnum, 54) }},
		{"facebook-page", func(g *gen) string { return g.pick("EAAC", "EAAM") + g.str(alnum, 120) }},
		{"facebook-app-token", func(g *gen) string { return g.str(digits, 15) + "|" + g.str(b64url, 32) }},
		{"flutterwave", func(g *gen) string {
			return g.pick("FLWSECK_TEST-", "FLWPUBK_TEST-", "FLWSECK-") + g.str(lowerHex, 32) + "-X"
		}},
		{"flutterwave-encryption", func(g *gen) string { return "FLWSECK_TEST-" + g.str(lowerHex, 12) }},
		{"flyio", func(g *gen) string { return g.pick("fo1_"+g.str(b64url, 43), "fm2_"+g.str(b64, 140)) }},
		{"frameio", func(g *gen) string { return "fio-u-" + g.str(b64url, 64) }},
		{"grafana-api-key", func(g *gen) string { return "eyJrIjoi" + g.str(alnum, 92) }},
		{"grafana-cloud", func(g *gen) string { return "glc_" + g.str(b64, 120) }},
		{"grafana-service-account", func(g *gen) string { return "glsa_" + g.str(alnum, 32) + "_" + g.str(lowerHex, 8) }},
		{"harness", func(g *gen) string {
			return g.pick("pat.", "sat.") + g.str(b64url, 22) + "." + g.str(alnum, 24) + "." + g.str(alnum, 20)
		}},
		{"terraform-cloud", func(g *gen) string { return g.str(lowerAlnum, 14) + ".atlasv1." + g.str(b64url, 67) }},
		{"heroku-v2", func(g *gen) string { return "HRKU-AA" + g.str(b64url, 58) }},
		{"infracost", func(g *gen) string { return "ico-" + g.str(alnum, 32) }},
		{"intra42", func(g *gen) string { return g.pick("s-s4t2ud-", "s-s4t2af-") + g.str(lowerHex, 64) }},
		{"linear", func(g *gen) string { return "lin_api_" + g.str(alnum, 40) }},
		{"lob", func(g *gen) string { return g.pick("live_", "test_") + g.str(lowerHex, 35) }},
		{"lob-publishable", func(g *gen) string { return g.pick("live_pub_", "test_pub_") + g.str(lowerHex, 31) }},
		{"mailchimp", func(g *gen) string { return g.str(lowerHex, 32) + "-us" + g.str(digits, 2) }},
		{"mailgun", func(g *gen) string { return g.pick("key-", "pubkey-") + g.str(lowerHex, 32) }},
		{"mailgun-signing", func(g *gen) string {
			return g.str(lowerHex, 32) + "-" + g.str(lowerHex, 8) + "-" + g.str(lowerHex, 8)
		}},
		{"mapbox-secret", func(g *gen) string {
			return g.pick("sk.", "tk.") + "eyJ1Ijoi" + g.str(alnum, 52) + "." + g.str(b64url, 22)
		}},
		{"maxmind", func(g *gen) string { return g.str(alnum, 6) + "_" + g.str(alnum, 29) + "_mmk" }},
		{"new-relic", func(g *gen) string {
			switch g.r.IntN(4) {
			case 0:
				return "NRAK-" + g.str(upperAlnum, 27)
			case 1:
				return "NRII-" + g.str(b64url, 32)
			case 2:
				return "NRJS-" + g.str(lowerHex, 19)
			}
			return g.str(lowerHex, 36) + "NRAL"
		}},
		{"notion", func(g *gen) string { return "ntn_" + g.str(digits, 11) + g.str(alnum, 35) }},
		{"notion-legacy", func(g *gen) string { return "secret_" + g.str(alnum, 43) }},
		{"octopus-deploy", func(g *gen) string { return "API-" + g.str(upperAlnum, 26) }},
		{"openshift", func(g *gen) string { return "sha256~" + g.str(b64url, 43) }},
		{"perplexity", func(g *gen) string { return "pplx-" + g.str(alnum, 48) }},
		{"plaid-access", func(g *gen) string {
			return "access-" + g.pick("sandbox", "development", "production") + "-" + g.uuid()
		}},
		{"planetscale", func(g *gen) string {
			return g.pick("pscale_tkn_", "pscale_oauth_", "pscale_pw_") + g.str(b64url, 43)
		}},
		{"postman", func(g *gen) string { return "PMAK-" + g.str(lowerHex, 24) + "-" + g.str(lowerHex, 34) }},
		{"prefect", func(g *gen) string { return "pnu_" + g.str(alnum, 36) }},
		{"pulumi", func(g *gen) string { return "pul-" + g.str(lowerHex, 40) }},
		{"readme", func(g *gen) string { return "rdme_" + g.str(lowerAlnum, 70) }},
		{"rubygems", func(g *gen) string { return "rubygems_" + g.str(lowerHex, 48) }},
		{"scalingo", func(g *gen) string { return "tk-us-" + g.str(b64url, 48) }},
		{"sendinblue", func(g *gen) string {
			return g.pick("xkeysib-", "xsmtpsib-") + g.str(lowerHex, 64) + "-" + g.str(alnum, 16)
		}},
		{"sentry-user", func(g *gen) string { return "sntryu_" + g.str(lowerHex, 64) }},
		{"sentry-org", func(g *gen) string {
			claims := `{"iat":17` + g.str(digits, 8) + `.0,"url":"https://sentry.io","region_url":"https://us.sentry.io","org":"` + g.str(lowers, 8) + `"}`
			return "sntrys_" + base64.RawStdEncoding.EncodeToString([]byte(claims)) + "_" + g.str(b64, 43)
		}},
		{"settlemint", func(g *gen) string { return g.pick("sm_aat_", "sm_pat_", "sm_sat_") + g.str(alnum, 16) }},
		{"shippo", func(g *gen) string { return g.pick("shippo_live_", "shippo_test_") + g.str(lowerHex, 40) }},
		{"sonar", func(g *gen) string { return g.pick("squ_", "sqp_", "sqa_") + g.str(lowerHex, 40) }},
		{"sourcegraph", func(g *gen) string {
			return g.pick("sgp_"+g.str(lowerHex, 16)+"_", "sgp_local_", "sgp_") + g.str(lowerHex, 40)
		}},
		{"square", func(g *gen) string {
			return g.pick("EAAA"+g.str(b64url, 60), "sq0atp-"+g.str(b64url, 22), "sq0csp-"+g.str(b64url, 43))
		}},
		{"telegram-bot", func(g *gen) string { return g.str(digits, 10) + ":AA" + g.str(b64url, 33) }},
		{"twilio", func(g *gen) string { return g.pick("SK", "AC") + g.str(lowerHex, 32) }},
		{"twitter-bearer", func(g *gen) string {
			return strings.Repeat("A", 22) + g.str(alnum, 30) + "%3D" + g.str(alnum, 50)
		}},
		{"typeform", func(g *gen) string { return "tfp_" + g.str(b64url, 59) }},
		{"yandex", func(g *gen) string {
			return g.pick("AQVN"+g.str(b64url, 36), "t1."+g.str(b64url, 40)+"."+g.str(b64url, 86))
		}},
		{"vercel", func(g *gen) string { return g.pick("vcp_", "vci_", "vca_", "vcr_", "vck_") + g.str(alnum, 56) }},
		{"langsmith", func(g *gen) string {
			return g.pick("lsv2_pt_", "lsv2_sk_") + g.str(lowerHex, 32) + "_" + g.str(lowerHex, 10)
		}},
		{"groq", func(g *gen) string { return "gsk_" + g.str(alnum, 48) }},
		{"castai", func(g *gen) string { return "castai_v1_" + g.str(alnum, 64) + "_" + g.str(alnum, 8) }},
		{"chieftools", func(g *gen) string { return g.pick("ctp_", "cto_", "ctr_") + g.str(alnum, 36) }},
		{"braintree", func(g *gen) string {
			return "access_token$" + g.pick("production", "sandbox") + "$" + g.str(lowerAlnum, 16) + "$" + g.str(lowerHex, 32)
		}},
		{"braintree-tokenization", func(g *gen) string {
			return g.pick("production_", "sandbox_") + g.str(lowerAlnum, 8) + "_" + g.str(lowerAlnum, 16)
		}},
		{"django-insecure", func(g *gen) string { return "django-insecure-" + g.str(lowerAlnum+"!@#%^&*(-_=+)", 50) }},
		{"airtable-pat", func(g *gen) string { return "pat" + g.str(alnum, 14) + "." + g.str(lowerHex, 64) }},
		{"launchdarkly", func(g *gen) string { return g.pick("sdk-", "api-", "mob-") + g.uuid() }},
		{"jwt-base64", func(g *gen) string {
			h := b64u([]byte(`{"alg":"HS256","typ":"JWT"}`))
			p := b64u([]byte(`{"sub":"` + g.str(alnum, 16) + `","exp":17` + g.str(digits, 8) + `}`))
			return base64.StdEncoding.EncodeToString([]byte(h + "." + p + "." + g.str(b64url, 43)))
		}},
	}
}

// urlTokenFamilies are secrets that sit in a URL whose host and path prefix
// are kept; prefix is kept, the generated part is the secret.
type urlFamily struct {
	name   string
	prefix string
	make   func(g *gen) string
}

func urlTokenFamilies() []urlFamily {
	return []urlFamily{
		{"slack-webhook", "https://hooks.slack.com/services/", func(g *gen) string {
			return "T0" + g.str(upperAlnum, 8) + "/B0" + g.str(upperAlnum, 8) + "/" + g.str(alnum, 24)
		}},
		{"discord-webhook", "https://discord.com/api/webhooks/", func(g *gen) string {
			return g.str(digits, 18) + "/" + g.str(b64url, 68)
		}},
		{"teams-webhook", "https://acme.webhook.office.com/webhookb2/", func(g *gen) string {
			return g.uuid() + "@" + g.uuid() + "/IncomingWebhook/" + g.str(lowerAlnum, 32) + "/" + g.uuid()
		}},
		{"telegram-bot-url", "https://api.telegram.org/bot", func(g *gen) string {
			return g.str(digits, 10) + ":AA" + g.str(b64url, 33)
		}},
		{"claude-code-session", "https://claude.ai/code/", func(g *gen) string {
			return "session_" + g.str(alnum, 24)
		}},
	}
}
