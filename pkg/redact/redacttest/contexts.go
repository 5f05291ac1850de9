package redacttest

import (
	"strings"
)

// neutralContexts place a self-identifying token where nothing around it
// names a secret, so that only its shape can give it away.
var neutralContexts = []string{
	"I pasted {} into the chat by mistake, please forget it.",
	"export DEPLOY_VALUE={}",
	`{"id": 7, "value": "{}", "ok": true}`,
	"2026-05-01T10:00:00Z INFO upstream configured with {} (region eu-west-1)",
	"./deploy.sh --target prod {}",
	"  value: {}",
	`client = Client("{}")`,
	"the value is `{}`.",
	"{}",
	"curl -s 'https://api.example.com/v1/items?limit=5&value={}'",
	"<Value>{}</Value>",
	"echo {} >> notes.txt",
}

// contextFamily generates a secret together with the line that carries it;
// the secret is only recognisable through its context.
type contextFamily struct {
	name  string
	lines []string // "{}" stands for the secret
	make  func(g *gen) string
}

func fill(line, secret string) string { return strings.ReplaceAll(line, "{}", secret) }

func contextFamilies() []contextFamily {
	pw := func(g *gen) string { return g.password(10 + g.r.IntN(10)) }
	tok := func(g *gen) string { return g.str(alnum, 20+g.r.IntN(20)) }
	return []contextFamily{
		{"curl-user", []string{
			"curl -u admin:{} https://api.internal.example/v1/health",
			`curl --user "deploy:{}" -X POST https://ci.example.com/job/build`,
			"curl -sS --user=ci:{} https://nexus.example.com/repository/",
			"curl -u 'bob:{}' -F file=@report.pdf https://upload.example.com",
			"curl -x http://proxy:3128 -U proxyuser:{} https://example.com",
		}, pw},
		{"mysql-password", []string{
			"mysql -u root -p{} -h db.internal app",
			"mysqldump -uroot -p{} --all-databases > all.sql",
			"mysql -h 127.0.0.1 -u app --password={} -e 'show tables'",
			"mysql -u root -p'{}' app < schema.sql",
			`mariadb -p"{}" -e 'select 1'`,
		}, pw},
		{"registry-login", []string{
			"docker login -u bot -p {} registry.example.com",
			"docker login registry.gitlab.com --username ci --password {}",
			"podman login -p {} -u me quay.io",
			`echo "{}" | docker login ghcr.io -u me --password-stdin`,
			"helm registry login -u robot -p {} registry.example.com",
		}, pw},
		{"sshpass", []string{
			"sshpass -p {} ssh deploy@10.0.0.5 uptime",
			"sshpass -p '{}' scp dist.tgz web1:/srv/app/",
			"sshpass -p{} rsync -a ./build/ host:/var/www/",
		}, pw},
		{"vault-login", []string{
			"vault login {}",
			"vault login -no-print {}",
			"VAULT_ADDR=https://vault.internal:8200 vault login {} && vault kv get secret/app",
		}, tok},
		{"htpasswd", []string{
			"htpasswd -b .htpasswd admin {}",
			"htpasswd -nbB admin {}",
			"sudo htpasswd -cb /etc/nginx/.htpasswd bob {}",
		}, pw},
		{"psql-uri", []string{
			`psql "postgresql://app:{}@db.internal:5432/app?sslmode=require"`,
			"psql postgres://app:{}@localhost/app -c 'select 1'",
			`pg_dump "postgres://admin:{}@10.1.2.3/prod" > prod.sql`,
		}, pw},
		{"cli-password", []string{
			"redis-cli -h cache -a {} ping",
			`ldapsearch -x -D "cn=admin,dc=example,dc=org" -w {} -b dc=example,dc=org`,
			`sqlcmd -S db -U sa -P {} -Q "select 1"`,
			"openssl pkcs12 -export -in c.pem -inkey k.pem -out c.p12 -passout pass:{}",
			"keytool -importcert -keystore ks.jks -storepass {} -file ca.pem -noprompt",
			"zip -P {} secrets.zip notes.txt",
			"7z a -p{} backup.7z data/",
			"smbclient //fs/share -U alice%{} -c 'ls'",
			"sqlplus scott/{}@orcl @report.sql",
			`$pw = ConvertTo-SecureString "{}" -AsPlainText -Force`,
			`mongosh "mongodb://db:27017" -u admin -p {} --authenticationDatabase admin`,
			"lftp -u deploy,{} sftp://files.example.com",
			"rabbitmqctl add_user svc {}",
			"az login --service-principal -u 0f1e2d3c-aaaa-4bbb-8ccc-0123456789ab -p {} --tenant contoso.onmicrosoft.com",
			"java -Djavax.net.ssl.keyStorePassword={} -jar app.jar",
			"openssl enc -aes-256-cbc -k {} -in a.tar -out a.tar.enc",
			"gpg --batch --passphrase {} -d secrets.gpg",
			"unzip -P {} archive.zip",
			"influx -username admin -password {} -execute 'show databases'",
			"keytool -genkeypair -alias app -keypass {} -keystore app.jks",
		}, pw},
		{"curl-header", []string{
			`curl -H "X-Key: {}" https://api.example.com/v2/orders`,
			`curl -H 'X-Gateway-Key: {}' https://gw.example.com/status`,
			`curl --header "Api-Token: {}" https://api.example.com`,
		}, tok},
		{"pass-variable", []string{
			"SMTP_PASS={}",
			"export MYSQL_ROOT_PW={}",
			"DB_PWD={} ./migrate.sh",
			"  REDIS_PASS: {}",
			`{"ADMIN_PW": "{}"}`,
			`LDAP_BIND_PASS="{}"`,
			"set RABBIT_PASS={}",
		}, pw},
		{"secret-key-base", []string{
			"SECRET_KEY_BASE={}",
			"  secret_key_base: {}",
			`config.secret_key_base = "{}"`,
		}, func(g *gen) string { return g.str(lowerHex, 128) }},
		{"app-key", []string{
			"APP_KEY=base64:{}",
			"  APP_KEY: base64:{}",
			`'key' => env('APP_KEY', 'base64:{}'),`,
		}, func(g *gen) string { return g.str(b64, 43) + "=" }},
		{"netrc", []string{
			"machine api.heroku.com login me@example.com password {}",
			"machine github.com\n  login bot\n  password {}\n",
			"default login anonymous password {}",
		}, pw},
		{"env-access", []string{
			"os.environ['API_KEY'] = '{}'",
			`os.environ["DB_PASSWORD"]="{}"`,
			`process.env.STRIPE_SECRET = "{}";`,
			`process.env["AUTH_TOKEN"] = '{}';`,
			`ENV['GITHUB_TOKEN'] = "{}"`,
			`$_ENV['APP_SECRET'] = '{}';`,
			`os.Setenv("API_TOKEN", "{}")`,
			`os.environ.setdefault("SECRET_KEY", "{}")`,
			"setenv API_KEY {}",
			"set -gx OPENAI_API_KEY {}",
			`$env:API_KEY = "{}"`,
			`[Environment]::SetEnvironmentVariable("API_KEY", "{}", "User")`,
			`putenv("DB_PASSWORD={}");`,
			`System.setProperty("db.password", "{}");`,
			"define('AUTH_KEY', '{}');",
			`settings["SECRET_KEY"] = "{}"`,
			`t.Setenv("SERVICE_TOKEN", "{}")`,
			"export API_KEY='{}'",
		}, tok},
		{"url-password", []string{
			"postgres://app:{}@db.internal:5432/app",
			"DATABASE_URL=mysql://root:{}@127.0.0.1:3306/app",
			"redis://:{}@cache:6379/0",
			"amqp://svc:{}@rabbit/vhost",
			"git clone https://bot:{}@git.example.com/acme/api.git",
			"mongodb+srv://admin:{}@cluster0.abcd.mongodb.net/test?retryWrites=true",
			"ftp://anon:{}@files.example.com/pub/",
			`{"dsn": "postgresql://u:{}@[::1]:5432/db"}`,
		}, func(g *gen) string {
			// Every character a careless URL holds: / # @ : ? and more.
			return g.password(5) + "/" + g.str(alnum, 3) + "#" + g.str(alnum, 3) + "@" + g.str(alnum, 3) + ":" + g.password(4) + g.pick("", "?x=", "!%")
		}},
		{"generic-keyed", []string{
			`api_secret_v2 = "{}"`,
			"AUTH_SALT='{}'",
			"  stripe_secret_live: {}",
			`"accessTokenProd": "{}",`,
			"PASSWORD_2={}",
			"X_AUTH_KEY={}",
			"session_secret_key_v1: {}",
			`encryption_key_base64 = "{}"`,
			"token_value: {}",
			"MASTER_PASSWORD_OLD={}",
		}, func(g *gen) string { return g.str(b64url, 32) }},
	}
}

// keyedFamilies are provider secrets without a telling shape, next to a
// name that holds the provider's name but no word for a secret: the rules
// of secret scanners that look for a provider's name near a value of the
// provider's shape.
type keyedFamily struct {
	name string
	key  string
	make func(g *gen) string
}

func keyedFamilies() []keyedFamily {
	return []keyedFamily{
		{"asana-client-id", "ASANA_CLIENT_ID", func(g *gen) string { return g.str(digits, 16) }},
		{"discord-client-id", "DISCORD_CLIENT_ID", func(g *gen) string { return g.str(digits, 18) }},
		{"discord-bot", "discord_bot_key", func(g *gen) string { return g.str(lowerHex, 64) }},
		{"linkedin-client-id", "LINKEDIN_CLIENT_ID", func(g *gen) string { return g.str(lowerAlnum, 14) }},
		{"plaid-client-id", "PLAID_CLIENT_ID", func(g *gen) string { return g.str(lowerAlnum, 24) }},
		{"heroku", "HEROKU_KEY", func(g *gen) string { return g.uuid() }},
		{"cloudflare-global", "CLOUDFLARE_GLOBAL_KEY", func(g *gen) string { return g.str(lowerHex, 37) }},
		{"cloudflare", "cloudflare_api", func(g *gen) string { return g.str(b64url, 40) }},
		{"kucoin", "KUCOIN_KEY", func(g *gen) string { return g.str(lowerHex, 24) }},
		{"sendbird", "SENDBIRD_APP_ID", func(g *gen) string { return g.uuid() }},
		{"okta", "OKTA_API", func(g *gen) string { return "00" + g.str(b64url, 40) }},
		{"sumologic", "SUMO_ACCESS_ID", func(g *gen) string { return "su" + g.str(alnum, 12) }},
		{"mapbox", "MAPBOX_PUBLIC", func(g *gen) string { return "pk." + g.str(lowerAlnum, 60) + "." + g.str(lowerAlnum, 22) }},
		{"algolia", "ALGOLIA_ADMIN", func(g *gen) string { return g.str(lowerAlnum, 32) }},
		{"atlassian", "JIRA_API", func(g *gen) string { return g.str(lowerAlnum, 20) + g.str(lowerHex, 4) }},
		{"datadog", "DATADOG_APP", func(g *gen) string { return g.str(lowerAlnum, 40) }},
		{"sentry", "SENTRY_AUTH", func(g *gen) string { return g.str(lowerHex, 64) }},
		{"vercel", "VERCEL_DEPLOY", func(g *gen) string { return g.str(upperAlnum, 24) }},
		{"yandex", "YANDEX_STATIC", func(g *gen) string { return "YC" + g.str(b64url, 38) }},
		{"new-relic-id", "NEW_RELIC_API", func(g *gen) string { return g.str(lowerAlnum, 64) }},
		{"mattermost", "MATTERMOST_BOT", func(g *gen) string { return g.str(lowerAlnum, 26) }},
		{"netlify", "NETLIFY_AUTH", func(g *gen) string { return g.str(b64url, 43) }},
		{"zendesk", "ZENDESK_API", func(g *gen) string { return g.str(lowerAlnum, 40) }},
		{"twitch", "TWITCH_CLIENT", func(g *gen) string { return g.str(lowerAlnum, 30) }},
		{"etsy", "ETSY_KEYSTRING", func(g *gen) string { return g.str(lowerAlnum, 24) }},
		{"finnhub", "FINNHUB_API", func(g *gen) string { return g.str(lowerAlnum, 20) }},
		{"bitbucket", "BITBUCKET_CLIENT", func(g *gen) string { return g.str(lowerAlnum, 32) }},
		{"confluent", "CONFLUENT_CLOUD", func(g *gen) string { return g.str(upperAlnum, 16) }},
		{"contentful", "CONTENTFUL_DELIVERY", func(g *gen) string { return g.str(b64url, 43) }},
		{"twitter", "TWITTER_CONSUMER", func(g *gen) string { return g.str(alnum, 25) }},
		{"sidekiq", "BUNDLE_GEMS__CONTRIBSYS__COM", func(g *gen) string { return g.str(lowerHex, 8) + ":" + g.str(lowerHex, 8) }},
		{"rapidapi", "RAPIDAPI", func(g *gen) string { return g.str(b64url, 50) }},
		{"hubspot", "HUBSPOT", func(g *gen) string { return strings.ToUpper(g.uuid()) }},
		{"travis", "TRAVIS_CI", func(g *gen) string { return g.str(alnum, 22) }},
		{"meraki", "MERAKI_DASHBOARD", func(g *gen) string { return g.str(lowerHex, 40) }},
	}
}

// keyedLines are the ways a keyed secret is written.
var keyedLines = []string{
	"{k}={}",
	"export {k}=\"{}\"",
	"  {k}: {}",
	`{"{k}": "{}"}`,
}
