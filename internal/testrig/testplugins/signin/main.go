//go:build wasip1

// Command signin is a test plugin with a URL-mode elicitation (a sign-in
// page) and its completion in another call: the tool "sign_in" asks the
// client to open a page under an elicitation id and answers the user's
// action; "signed_in" says that the elicitation of an id completed
// (notify_elicitation_complete), as a plugin does once the page's
// callback came. internal/testrig/e2e runs the two on different replicas
// (TestAURLElicitationCompletedOnAnotherReplica).
package main

import (
	pdk "github.com/mcphost/mcphost/pdk/go"
)

type elicitation struct {
	ID string `json:"id" jsonschema:"description=the elicitation's id"`
}

func init() {
	pdk.Tool("sign_in", "Asks the user to sign in on a page, under the given elicitation id.", func(ctx *pdk.Context, a elicitation) (string, error) {
		r, err := ctx.Elicit(pdk.ElicitParams{Mode: "url", Message: "Sign in to continue", URL: "https://example.com/sign-in?state=" + a.ID, ElicitationID: a.ID})
		if err != nil {
			return "", err
		}
		return r.Action, nil
	})
	pdk.Tool("signed_in", "Says that the sign-in of the given elicitation id completed.", func(_ *pdk.Context, a elicitation) (string, error) {
		pdk.NotifyElicitationComplete(a.ID)
		return "completed " + a.ID, nil
	})
}

// main never runs: the host calls the exports of the c-shared module after
// _initialize.
func main() {}
