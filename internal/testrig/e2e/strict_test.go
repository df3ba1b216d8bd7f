package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// oauthServer is a loopback OAuth2 authorization server: the client
// credentials grant for one confidential client, and the device
// authorization grant (RFC 8628) with refresh tokens for a public one.
type oauthServer struct {
	*httptest.Server
	mu       sync.Mutex
	issued   []string // access tokens, in order
	approved bool     // the user visited the verification URL
	grants   []string // grant_type of every token request
}

const (
	ccClientID     = "strict-client"
	ccClientSecret = "s3cret-of-the-client"
	deviceClientID = "device-client"
)

func newOAuthServer(t *testing.T) *oauthServer {
	s := &oauthServer{}
	mux := http.NewServeMux()
	token := func(w http.ResponseWriter, access string, expiresIn int, scope, refresh string) {
		s.issued = append(s.issued, access)
		body := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": expiresIn}
		if scope != "" {
			body["scope"] = scope
		}
		if refresh != "" {
			body["refresh_token"] = refresh
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}
	oauthError := func(w http.ResponseWriter, code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":%q}`, code)
	}
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		s.mu.Lock()
		defer s.mu.Unlock()
		grant := r.PostForm.Get("grant_type")
		s.grants = append(s.grants, grant)
		id, secret, basic := r.BasicAuth()
		if !basic {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		switch grant {
		case "client_credentials":
			if id != ccClientID || secret != ccClientSecret {
				oauthError(w, "invalid_client")
				return
			}
			token(w, fmt.Sprintf("cc-%d", len(s.issued)+1), 3600, r.PostForm.Get("scope"), "")
		case "urn:ietf:params:oauth:grant-type:device_code":
			if id != deviceClientID || r.PostForm.Get("device_code") != "dev-code" {
				oauthError(w, "invalid_grant")
				return
			}
			if !s.approved {
				oauthError(w, "authorization_pending")
				return
			}
			// Expires at once (inside the broker's 30 s skew): the next
			// request refreshes it.
			token(w, fmt.Sprintf("dev-%d", len(s.issued)+1), 1, "read", "refresh-1")
		case "refresh_token":
			if id != deviceClientID || r.PostForm.Get("refresh_token") != "refresh-1" {
				oauthError(w, "invalid_grant")
				return
			}
			token(w, fmt.Sprintf("refreshed-%d", len(s.issued)+1), 3600, "read", "refresh-1")
		default:
			oauthError(w, "unsupported_grant_type")
		}
	})
	mux.HandleFunc("POST /device", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.PostForm.Get("client_id") != deviceClientID {
			oauthError(w, "invalid_client")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"device_code": "dev-code", "user_code": "WDJB-MJHT",
			"verification_uri": s.URL + "/verify", "verification_uri_complete": s.URL + "/verify?user_code=WDJB-MJHT",
			"expires_in": 60, "interval": 1,
		})
	})
	mux.HandleFunc("GET /verify", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("user_code") != "WDJB-MJHT" {
			http.Error(w, "unknown code", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.approved = true
		s.mu.Unlock()
		fmt.Fprint(w, "approved")
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *oauthServer) tokenRequests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.grants)
}

// strictGrants grants strictv2 every host function hyper-mcp offers, a
// keyring entry backed by a secret, and two OAuth2 clients of srv.
func strictGrants(srv string) string {
	return fmt.Sprintf(`
[plugins.strictv2]
host_functions = ["create_elicitation", "create_message", "get_access_token", "get_keyring_secret", "list_roots",
  "notify_logging_message", "notify_progress", "notify_prompt_list_changed", "notify_resource_list_changed",
  "notify_resource_updated", "notify_tool_list_changed", "notify_url_elicitation_completed"]
secrets = { gh = "env:STRICT_GH_TOKEN" }
keyring = [{ service = "github", user = "me", secret = "gh" }]

[[plugins.strictv2.oauth2]]
token_url = "%[1]s/token"
client_id = %[2]q
client_secret = "env:STRICT_CLIENT_SECRET"
scopes = ["read", "write"]

[[plugins.strictv2.oauth2]]
token_url = "%[1]s/token"
client_id = %[3]q
device_authorization_url = "%[1]s/device"
scopes = ["read"]
`, srv, ccClientID, deviceClientID)
}

// TestStrictHyperMCPPlugin serves internal/testrig/testplugins/strictv2, a Rust
// plugin whose serde types mirror hyper-mcp's host envelopes exactly (no
// defaults, unknown fields denied) and that imports every host function
// hyper-mcp offers, get_access_token and get_keyring_secret included. Every
// export and every host function is used through a real client; the
// OAuth2 tokens come from a loopback authorization server.
func TestStrictHyperMCPPlugin(t *testing.T) {
	wasm := buildRust(t, "internal/testrig/testplugins/strictv2")
	auth := newOAuthServer(t)
	t.Setenv("STRICT_GH_TOKEN", "gh-keyring-value")
	t.Setenv("STRICT_CLIENT_SECRET", ccClientSecret)
	f := newFixture(t, strictGrants(auth.URL))
	if err := os.WriteFile(filepath.Join(f.plugins, "strictv2.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}

	logs := make(chan *mcp.LoggingMessageParams, 16)
	progress := make(chan *mcp.ProgressNotificationParams, 16)
	completed := make(chan string, 4)
	updated := make(chan string, 4)
	client := &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			in, _ := req.Params.Messages[0].Content.(*mcp.TextContent)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "echo-model", StopReason: "endTurn",
				Content: &mcp.TextContent{Text: "re: " + in.Text}}, nil
		},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Mode != "url" {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
			}
			if strings.HasPrefix(req.Params.URL, auth.URL) { // the device flow: the user visits the page
				resp, err := http.Get(req.Params.URL)
				if err != nil {
					return nil, err
				}
				resp.Body.Close()
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			completed <- req.Params.ElicitationID
		},
		LoggingMessageHandler:       func(_ context.Context, req *mcp.LoggingMessageRequest) { logs <- req.Params },
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { progress <- req.Params },
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updated <- req.Params.URI
		},
		Capabilities: &mcp.ClientCapabilities{
			Sampling:    &mcp.SamplingCapabilities{},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
			RootsV2:     &mcp.RootCapabilities{ListChanged: true},
		},
	}
	mcpClient := mcp.NewClient(&mcp.Implementation{Name: "strict-e2e", Version: "1"}, client)
	cs := f.connectClient(t, "2025-11-25", mcpClient)
	ctx := ctxT(t)
	call := func(name string, args map[string]any, meta mcp.Meta) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("%s: isError: %s", name, text(t, res.Content))
		}
		return text(t, res.Content)
	}

	t.Run("lists, with the synthetic id", func(t *testing.T) {
		const listed = `listed with id "mcphost-list"`
		var names []string
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(tool.Description, listed) {
				t.Errorf("tool %s: description %q lacks %q", tool.Name, tool.Description, listed)
			}
			names = append(names, tool.Name)
		}
		if len(names) != 10 {
			t.Errorf("tools %v: want the 10 of strictv2", names)
		}
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil || p.Name != "strict_prompt" || !strings.Contains(p.Description, listed) {
				t.Errorf("prompt %+v: %v", p, err)
			}
		}
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil || r.URI != "strict://memo" || !strings.Contains(r.Description, listed) {
				t.Errorf("resource %+v: %v", r, err)
			}
		}
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil || r.URITemplate != "strict://notes/{id}" || !strings.Contains(r.Description, listed) {
				t.Errorf("template %+v: %v", r, err)
			}
		}
	})

	t.Run("request exports", func(t *testing.T) {
		var got struct {
			ID   any            `json:"id"`
			Meta map[string]any `json:"_meta"`
		}
		if err := json.Unmarshal([]byte(call("context", map[string]any{}, mcp.Meta{"trace": "t1"})), &got); err != nil {
			t.Fatal(err)
		}
		if _, isNumber := got.ID.(float64); !isNumber || got.Meta["trace"] != "t1" {
			t.Errorf("context: id %v, _meta %v", got.ID, got.Meta)
		}
		prompt, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "strict_prompt", Arguments: map[string]string{"who": "Ada"}})
		if err != nil {
			t.Fatal(err)
		}
		if tc, _ := prompt.Messages[0].Content.(*mcp.TextContent); tc == nil || tc.Text != "Greet Ada." {
			t.Errorf("prompt: %+v", prompt.Messages)
		}
		for uri, want := range map[string]string{"strict://memo": "memo (request id ", "strict://notes/7": "note 7 (request id "} {
			read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatalf("reading %s: %v", uri, err)
			}
			if !strings.HasPrefix(read.Contents[0].Text, want) {
				t.Errorf("reading %s: %q", uri, read.Contents[0].Text)
			}
		}
		for _, c := range []struct {
			ref        *mcp.CompleteReference
			arg, value string
			ctxArgs    map[string]string
			want       []string
		}{
			{&mcp.CompleteReference{Type: "ref/prompt", Name: "strict_prompt"}, "who", "A", nil, []string{"Ada", "Alan"}},
			{&mcp.CompleteReference{Type: "ref/resource", URI: "strict://notes/{id}"}, "id", "", map[string]string{"x": "1"}, []string{"1", "12", "known1"}},
		} {
			params := &mcp.CompleteParams{Ref: c.ref, Argument: mcp.CompleteParamsArgument{Name: c.arg, Value: c.value}}
			if c.ctxArgs != nil {
				params.Context = &mcp.CompleteContext{Arguments: c.ctxArgs}
			}
			res, err := cs.Complete(ctx, params)
			if err != nil {
				t.Fatalf("completing %s: %v", c.arg, err)
			}
			if !slices.Equal(res.Completion.Values, c.want) {
				t.Errorf("completing %s: %v, want %v", c.arg, res.Completion.Values, c.want)
			}
		}
	})

	t.Run("host functions that ask the client", func(t *testing.T) {
		if got := call("sample", map[string]any{"text": "ping"}, nil); got != "assistant text echo-model: re: ping (endTurn)" {
			t.Errorf("sample: %q", got)
		}
		if got := call("elicit", map[string]any{}, nil); got != `{"action":"accept","content":{"ok":true}}` {
			t.Errorf("elicit: %q", got)
		}
		if got := call("url_elicit", map[string]any{}, nil); got != "accept" {
			t.Errorf("url_elicit: %q", got)
		}
		select {
		case id := <-completed:
			if id != "strict-1" {
				t.Errorf("elicitation complete for %q", id)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("notify_url_elicitation_completed did not reach the client")
		}
		mcpClient.AddRoots(&mcp.Root{URI: "file:///strict", Name: "strict"})
		if got := call("roots", map[string]any{}, nil); got != "file:///strict strict" {
			t.Errorf("roots: %q", got)
		}
		// AddRoots sent notifications/roots/list_changed: the plugin's
		// on_roots_list_changed listed them and logged.
		select {
		case msg := <-logs:
			data, _ := msg.Data.(map[string]any)
			if data["event"] != "roots" || fmt.Sprint(data["roots"]) != "[file:///strict]" {
				t.Errorf("on_roots_list_changed logged %v", msg.Data)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("on_roots_list_changed did not log")
		}
	})

	t.Run("notifications", func(t *testing.T) {
		if got := call("log", map[string]any{}, nil); got != "logged" {
			t.Errorf("log: %q", got)
		}
		select {
		case msg := <-logs:
			if data, _ := msg.Data.(map[string]any); msg.Logger != "strictv2" || data["event"] != "strict" {
				t.Errorf("log message %+v", msg)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("notify_logging_message did not reach the client")
		}
		call("progress", map[string]any{}, mcp.Meta{"progressToken": "pt-1"})
		for _, want := range []float64{1, 2} {
			select {
			case p := <-progress:
				if p.Progress != want || p.ProgressToken != "pt-1" {
					t.Errorf("progress %+v, want %v", p, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("notify_progress did not reach the client")
			}
		}
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "strict://memo"}); err != nil {
			t.Fatal(err)
		}
		call("changed", map[string]any{}, nil)
		select {
		case uri := <-updated:
			if uri != "strict://memo" {
				t.Errorf("updated %q", uri)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("notify_resource_updated did not reach the client")
		}
		// The list_changed functions were accepted; the host sends
		// list_changed only when a list changed, and strictv2's do not.
	})

	t.Run("get_keyring_secret", func(t *testing.T) {
		if got := call("secret", map[string]any{"service": "github", "user": "me"}, nil); got != "secret reversed: eulav-gniryek-hg" {
			t.Errorf("granted entry: %q", got)
		}
		// An entry the operator did not grant: hyper-mcp's empty answer.
		if got := call("secret", map[string]any{"service": "github", "user": "other"}, nil); got != "secret reversed: " {
			t.Errorf("entry not granted: %q", got)
		}
	})

	t.Run("get_access_token client credentials", func(t *testing.T) {
		args := map[string]any{"client_id": ccClientID, "token_url": auth.URL + "/token", "scopes": []string{"read"}}
		want := `{"access_token_reversed":"1-cc","expires_in_future":true,"scopes":["read"]}`
		for range 2 { // the second from the cache
			if got := call("token", args, nil); got != want {
				t.Errorf("token: %s, want %s", got, want)
			}
		}
		if got := auth.tokenRequests(); !slices.Equal(got, []string{"client_credentials"}) {
			t.Errorf("token requests %v: the token was not cached", got)
		}
		for _, bad := range []map[string]any{
			{"client_id": "someone-else", "token_url": auth.URL + "/token"},                          // not configured
			{"client_id": ccClientID, "token_url": "http://127.0.0.1:1/token"},                       // another issuer
			{"client_id": ccClientID, "token_url": auth.URL + "/token", "scopes": []string{"admin"}}, // a scope not granted
		} {
			if got := call("token", bad, nil); got != "no token" {
				t.Errorf("token %v: %s, want none", bad, got)
			}
		}
	})

	t.Run("get_access_token device code", func(t *testing.T) {
		args := map[string]any{"client_id": deviceClientID, "token_url": auth.URL + "/token"}
		// The user is sent to the verification URL (a URL elicitation),
		// approves there, and the broker polls for the token.
		if got := call("token", args, nil); !strings.HasPrefix(got, `{"access_token_reversed":"`) || !strings.Contains(got, `-ved","expires_in_future":true`) {
			t.Fatalf("device token: %s", got)
		}
		// It expired: refreshed with its refresh token, no new elicitation.
		if got := call("token", args, nil); !strings.HasPrefix(got, `{"access_token_reversed":"`) || !strings.Contains(got, `-dehserfer","expires_in_future":true`) {
			t.Errorf("refreshed token: %s", got)
		}
		if got := auth.tokenRequests(); !slices.Contains(got, "refresh_token") {
			t.Errorf("token requests %v: no refresh", got)
		}
	})
}
