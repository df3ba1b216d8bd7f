package pluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestDevicePromptIsAURLElicitation proves how get_access_token's device
// authorization reaches the user: a URL elicitation to the verification
// URL, saying the code and the minutes left, whose completion is announced
// with the same elicitation id once the token is obtained; a confirmation
// form, holding the URL and the code, for a client without URL
// elicitation; an error when the user declines or cannot be asked.
func TestDevicePromptIsAURLElicitation(t *testing.T) {
	const url, code = "https://auth.example.com/verify?user_code=WDJB-MJHT", "WDJB-MJHT"
	expires := time.Now().Add(10 * time.Minute)
	// client is a client that answers a URL elicitation with urlAction
	// (an error when "") and a form with formAction, recording what it is
	// asked.
	type request struct {
		Mode, ElicitationID, URL, Message string
	}
	client := func(urlAction, formAction string) (asked *[]request, completed *[]string, elicit, complete func(context.Context, []byte) ([]byte, error)) {
		asked, completed = &[]request{}, &[]string{}
		elicit = func(_ context.Context, in []byte) ([]byte, error) {
			var r struct {
				Mode          string `json:"mode"`
				ElicitationID string `json:"elicitationId"`
				URL           string `json:"url"`
				Message       string `json:"message"`
			}
			if err := json.Unmarshal(in, &r); err != nil {
				t.Fatal(err)
			}
			*asked = append(*asked, request(r))
			action := formAction
			if r.Mode == "url" {
				action = urlAction
			}
			if action == "" {
				return nil, errors.New("the client cannot be asked this way")
			}
			return []byte(`{"action":"` + action + `"}`), nil
		}
		complete = func(_ context.Context, in []byte) ([]byte, error) {
			var r struct {
				ElicitationID string `json:"elicitationId"`
			}
			_ = json.Unmarshal(in, &r)
			*completed = append(*completed, r.ElicitationID)
			return nil, nil
		}
		return asked, completed, elicit, complete
	}

	t.Run("url", func(t *testing.T) {
		asked, completed, elicit, complete := client("accept", "")
		done, err := devicePrompt(elicit, complete)(t.Context(), url, code, expires)
		if err != nil {
			t.Fatal(err)
		}
		if len(*asked) != 1 || (*asked)[0].Mode != "url" || (*asked)[0].URL != url || (*asked)[0].ElicitationID == "" ||
			!strings.Contains((*asked)[0].Message, "approve the code "+code+"; you have 10 minutes") {
			t.Fatalf("asked %+v, want one URL elicitation to %s with the code and 10 minutes", *asked, url)
		}
		if len(*completed) != 0 {
			t.Errorf("completion announced before the token: %q", *completed)
		}
		done()
		if len(*completed) != 1 || (*completed)[0] != (*asked)[0].ElicitationID {
			t.Errorf("completed %q, want the elicitation %q", *completed, (*asked)[0].ElicitationID)
		}
	})
	t.Run("form for a client without URL elicitation", func(t *testing.T) {
		asked, completed, elicit, complete := client("", "accept")
		done, err := devicePrompt(elicit, complete)(t.Context(), url, code, expires)
		if err != nil {
			t.Fatal(err)
		}
		if len(*asked) != 2 || (*asked)[1].Mode != "form" || !strings.Contains((*asked)[1].Message, url+" and enter the code "+code) {
			t.Fatalf("asked %+v, want a URL elicitation, then a form with the URL and the code", *asked)
		}
		done()
		if len(*completed) != 0 {
			t.Errorf("a form's completion announced: %q", *completed)
		}
	})
	for name, c := range map[string]struct{ urlAction, formAction, want string }{
		"declined":      {"decline", "", "the user did not authorize the device (decline)"},
		"form canceled": {"", "cancel", "the user did not authorize the device (cancel)"},
		"cannot ask":    {"", "", "the user cannot be asked to authorize the device"},
	} {
		t.Run(name, func(t *testing.T) {
			_, completed, elicit, complete := client(c.urlAction, c.formAction)
			done, err := devicePrompt(elicit, complete)(t.Context(), url, code, expires)
			if err == nil || !strings.Contains(err.Error(), c.want) || done != nil || len(*completed) != 0 {
				t.Errorf("got %v (done %v, completed %q), want %q", err, done != nil, *completed, c.want)
			}
		})
	}
}
