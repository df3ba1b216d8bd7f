package config

import (
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// TestKeyringAndOAuth2 proves both forms of the grants decode, secrets
// referenced as in secrets and relative files resolved against the
// config's folder.
func TestKeyringAndOAuth2(t *testing.T) {
	p := write(t, `[plugins.p]
secrets = { gh = "env:GH_TOKEN", other = "file:other.txt" }
keyring = [{ service = "github", user = "me", secret = "gh" }, { service = "github", user = "you", secret = "other" }, { service = "vault", user = "ops" }]

[[plugins.p.oauth2]]
token_url = "https://auth.example.com/token"
client_id = "a"
client_secret = "file:client.secret"
scopes = ["read", "write"]
auth_style = "basic"

[[plugins.p.oauth2]]
token_url = "http://127.0.0.1:9/token"
client_id = "b"
device_authorization_url = "http://127.0.0.1:9/device"
`)
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	pc := cfg.Plugin("p")
	wantKeyring := []KeyringEntry{{"github", "me", "gh"}, {"github", "you", "other"}, {"vault", "ops", ""}} // the last from the OS keyring
	if !reflect.DeepEqual(pc.Keyring, wantKeyring) {
		t.Errorf("keyring = %+v, want %+v", pc.Keyring, wantKeyring)
	}
	wantOAuth2 := []OAuth2Client{
		{TokenURL: "https://auth.example.com/token", ClientID: "a", ClientSecret: &Secret{File: filepath.Join(filepath.Dir(p), "client.secret")},
			Scopes: []string{"read", "write"}, AuthStyle: "basic"},
		{TokenURL: "http://127.0.0.1:9/token", ClientID: "b", DeviceAuthorizationURL: "http://127.0.0.1:9/device"},
	}
	if !reflect.DeepEqual(pc.OAuth2, wantOAuth2) {
		t.Errorf("oauth2 = %+v, want %+v", pc.OAuth2, wantOAuth2)
	}
}

// TestKeyringAndOAuth2Errors proves each mistake in keyring and
// [[plugins.NAME.oauth2]] is one error, on its line, saying what is wrong,
// and that a secret written where its source belongs is never echoed.
func TestKeyringAndOAuth2Errors(t *testing.T) {
	const gh = "[plugins.p]\nsecrets = { gh = \"env:GH\" }\n"
	testErrorCases(t, []errorCase{
		{"keyring missing user", gh + "keyring = [{ service = \"github\", secret = \"gh\" }]\n", 3, `plugins.p.keyring[0]: missing "user"`},
		{"keyring empty secret", gh + "keyring = [{ service = \"github\", user = \"me\", secret = \"\" }]\n", 3,
			`plugins.p.keyring[0].secret: empty: name a key of this plugin's secrets table, or leave secret out to read the OS keyring`},
		{"keyring OS entry twice", gh + "keyring = [\n  { service = \"github\", user = \"me\", secret = \"gh\" },\n  { service = \"github\", user = \"me\" },\n]\n", 3,
			`plugins.p.keyring[1]: the entry service = "github", user = "me" is granted twice`},
		{"keyring unknown secret", gh + "keyring = [{ service = \"github\", user = \"me\", secret = \"gh_token\" }]\n", 3,
			`plugins.p.keyring[0].secret: "gh_token" is not a key of this plugin's secrets table`},
		{"keyring secret that is a config key", "[plugins.p]\nconfig = { gh = \"x\" }\nkeyring = [{ service = \"s\", user = \"u\", secret = \"gh\" }]\n", 3,
			`"gh" is not a key of this plugin's secrets table`},
		{"keyring twice", gh + "keyring = [\n  { service = \"github\", user = \"me\", secret = \"gh\" },\n  { service = \"github\", user = \"me\", secret = \"gh\" },\n]\n", 3,
			`plugins.p.keyring[1]: the entry service = "github", user = "me" is granted twice`},
		{"keyring unknown key", gh + "keyring = [{ service = \"s\", user = \"u\", secret = \"gh\", account = \"x\" }]\n", 3,
			`unknown key "plugins.p.keyring[0].account"`},
		{"keyring not tables", gh + "keyring = \"github\"\n", 3, "plugins.p.keyring: expected array of tables, got string"},
		{"keyring not a table", gh + "keyring = [\"github\"]\n", 3, "plugins.p.keyring[0]: expected table, got string"},
		{"keyring wrong type", gh + "keyring = [{ service = \"s\", user = 1, secret = \"gh\" }]\n", 3, "plugins.p.keyring[0].user: expected string, got integer"},

		{"oauth2 missing token_url", "[plugins.p]\n\n[[plugins.p.oauth2]]\nclient_id = \"a\"\n", 3, `plugins.p.oauth2[0]: missing "token_url"`},
		{"oauth2 missing client_id", "[[plugins.p.oauth2]]\ntoken_url = \"https://a.example/token\"\n", 1, `plugins.p.oauth2[0]: missing "client_id"`},
		{"oauth2 relative token_url", "[[plugins.p.oauth2]]\nclient_id = \"a\"\ntoken_url = \"/token\"\n", 3,
			`plugins.p.oauth2[0].token_url: "/token" is not an absolute http or https URL`},
		{"oauth2 other scheme", "[[plugins.p.oauth2]]\nclient_id = \"a\"\ntoken_url = \"ftp://a.example/token\"\n", 3, `"ftp://a.example/token" is not an absolute`},
		{"oauth2 bad device URL", "[[plugins.p.oauth2]]\nclient_id = \"a\"\ntoken_url = \"https://a.example/token\"\ndevice_authorization_url = \"a.example/device\"\n", 4,
			`plugins.p.oauth2[0].device_authorization_url: "a.example/device" is not an absolute http or https URL`},
		{"oauth2 secret in clear", "[[plugins.p.oauth2]]\nclient_id = \"a\"\ntoken_url = \"https://a.example/token\"\nclient_secret = \"hunter2\"\n", 4,
			`plugins.p.oauth2[0].client_secret: must be "env:VARIABLE" or "file:PATH"`},
		{"oauth2 bad env name", "[[plugins.p.oauth2]]\nclient_id = \"a\"\ntoken_url = \"https://a.example/token\"\nclient_secret = \"env:A B\"\n", 4,
			`plugins.p.oauth2[0].client_secret:`},
		{"oauth2 empty scope", "[[plugins.p.oauth2]]\nclient_id = \"a\"\ntoken_url = \"https://a.example/token\"\nscopes = [\"read\", \"\"]\n", 4, "empty scope"},
		{"oauth2 bad auth_style", "[[plugins.p.oauth2]]\nclient_id = \"a\"\ntoken_url = \"https://a.example/token\"\nauth_style = \"header\"\n", 4,
			`plugins.p.oauth2[0].auth_style: "header" is not "basic" or "body"`},
		{"oauth2 unknown key", "[[plugins.p.oauth2]]\nclient_id = \"a\"\ntoken_url = \"https://a.example/token\"\nscope = [\"read\"]\n", 4,
			`unknown key "plugins.p.oauth2[0].scope" (did you mean "scopes"?)`},
		{"oauth2 twice", "[[plugins.p.oauth2]]\nclient_id = \"a\"\ntoken_url = \"https://a.example/token\"\n\n[[plugins.p.oauth2]]\nclient_id = \"a\"\ntoken_url = \"https://a.example/token\"\n", 5,
			`plugins.p.oauth2[1]: the client "a" of https://a.example/token is granted twice`},
		{"oauth2 not tables", "[plugins.p]\noauth2 = \"a\"\n", 2, "plugins.p.oauth2: expected array of tables, got string"},
	})
}

// TestKeyringAndOAuth2OneErrorPerMistake proves a mistake is not reported
// again by what depends on it: a keyring entry naming a secret whose source
// is wrong, or entries that look alike only because a key of each is
// missing or wrong.
func TestKeyringAndOAuth2OneErrorPerMistake(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []int // the lines of the errors
	}{
		{"keyring naming a secret with a bad source", "[plugins.p]\nsecrets = { gh = \"hunter2\" }\nkeyring = [{ service = \"s\", user = \"u\", secret = \"gh\" }]\n", []int{2}},
		{"keyring naming a secret also in config", "[plugins.p]\nconfig = { gh = \"x\" }\nsecrets = { gh = \"env:GH\" }\nkeyring = [{ service = \"s\", user = \"u\", secret = \"gh\" }]\n", []int{3}},
		{"keyring entries without user", "[plugins.p]\nsecrets = { gh = \"env:GH\" }\nkeyring = [\n  { service = \"s\", secret = \"gh\" },\n  { service = \"s\", secret = \"gh\" },\n]\n", []int{3, 3}},
		{"clients with bad token URLs", "[[plugins.p.oauth2]]\nclient_id = \"a\"\ntoken_url = \"x\"\n\n[[plugins.p.oauth2]]\nclient_id = \"a\"\ntoken_url = \"y\"\n", []int{3, 7}},
		{"clients without client_id", "[[plugins.p.oauth2]]\ntoken_url = \"https://a.example/token\"\n[[plugins.p.oauth2]]\ntoken_url = \"https://a.example/token\"\n", []int{1, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := loadErrors(t, tc.src)
			var lines []int
			for _, e := range errs {
				lines = append(lines, e.Line)
			}
			if !slices.Equal(lines, tc.want) {
				t.Errorf("errors on lines %v, want %v:\n%v", lines, tc.want, errs)
			}
		})
	}
}
