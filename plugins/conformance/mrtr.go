//go:build wasip1

package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/abi"
	pdk "github.com/mcphost/mcphost/pdk/go"
)

// The input-required-result-* scenarios of 0.2.0-alpha.12 (SEP-2322):
// tools and a prompt that ask the client through request_input, under the
// keys the scenarios name. They are written as for a legacy client; in a
// 2026-07-28 request the host answers input_required and runs them again
// with the answers (ABI.md, "Asking the client in a 2026-07-28 request").

// form is a flat elicitation schema with one required property.
func form(field, typ string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{%q:{"type":%q}},"required":[%q]}`, field, typ, field))
}

func elicitQ(message, field, typ string) pdk.InputRequest {
	return pdk.InputRequest{Method: "elicitation/create", Params: pdk.ElicitParams{Message: message, RequestedSchema: form(field, typ)}}
}

func sampleQ(text string, maxTokens int) pdk.InputRequest {
	return pdk.InputRequest{Method: "sampling/createMessage", Params: pdk.CreateMessageParams{
		Messages: []pdk.SamplingMessage{{Role: pdk.RoleUser, Content: pdk.Text(text)}}, MaxTokens: maxTokens,
	}}
}

var rootsQ = pdk.InputRequest{Method: "roots/list"}

// answers is what request_input returned, read by kind.
type answers map[string]json.RawMessage

// field returns a field of an accepted elicitation's content, as text.
func (a answers) field(key, field string) string {
	var r pdk.ElicitResult
	if json.Unmarshal(a[key], &r) != nil || r.Content == nil {
		return ""
	}
	return fmt.Sprint(r.Content[field])
}

// text returns a sampling answer's text.
func (a answers) text(key string) string {
	var r pdk.CreateMessageResult
	if json.Unmarshal(a[key], &r) != nil {
		return ""
	}
	return r.Text()
}

// roots returns the URIs of a roots/list answer.
func (a answers) roots(key string) []string {
	var r struct {
		Roots []pdk.Root `json:"roots"`
	}
	_ = json.Unmarshal(a[key], &r)
	uris := make([]string, len(r.Roots))
	for i, root := range r.Roots {
		uris[i] = root.URI
	}
	return uris
}

// ask asks the client the questions and returns the answers.
func ask(ctx *pdk.Context, questions map[string]pdk.InputRequest) (answers, error) {
	a, err := ctx.RequestInput(questions)
	return answers(a), err
}

func init() {
	// input-required-result-basic-elicitation, -result-type,
	// -missing-input-response, -ignore-extra-params, -validate-input
	pdk.Tool("test_input_required_result_elicitation", "Asks the user's name (input_required, SEP-2322)",
		func(ctx *pdk.Context, _ noArgs) (string, error) {
			a, err := ask(ctx, map[string]pdk.InputRequest{"user_name": elicitQ("What is your name?", "name", "string")})
			if err != nil {
				return "", err
			}
			return "Hello, " + a.field("user_name", "name") + "!", nil
		})

	// input-required-result-basic-sampling
	pdk.Tool("test_input_required_result_sampling", "Asks the client's model a question (input_required, SEP-2322)",
		func(ctx *pdk.Context, _ noArgs) (string, error) {
			a, err := ask(ctx, map[string]pdk.InputRequest{"capital_question": sampleQ("What is the capital of France?", 100)})
			if err != nil {
				return "", err
			}
			return "The model answered: " + a.text("capital_question"), nil
		})

	// input-required-result-basic-list-roots
	pdk.Tool("test_input_required_result_list_roots", "Asks the client's roots (input_required, SEP-2322)",
		func(ctx *pdk.Context, _ noArgs) (string, error) {
			a, err := ask(ctx, map[string]pdk.InputRequest{"client_roots": rootsQ})
			if err != nil {
				return "", err
			}
			return "Client roots: " + strings.Join(a.roots("client_roots"), ", "), nil
		})

	// input-required-result-request-state and -tampered-state: the host
	// signs every requestState and checks it on the retry.
	confirm := func(ctx *pdk.Context, _ noArgs) (string, error) {
		a, err := ask(ctx, map[string]pdk.InputRequest{"confirm": elicitQ("Please confirm", "ok", "boolean")})
		if err != nil {
			return "", err
		}
		return "state-ok: confirmed=" + a.field("confirm", "ok"), nil
	}
	pdk.Tool("test_input_required_result_request_state", "Asks a confirmation; the retry's requestState is verified (SEP-2322)", confirm)
	pdk.Tool("test_input_required_result_tampered_state", "Asks a confirmation; a tampered requestState is refused (SEP-2322)", confirm)

	// input-required-result-multiple-input-requests
	pdk.Tool("test_input_required_result_multiple_inputs", "Asks a name, a greeting and the roots at once (SEP-2322)",
		func(ctx *pdk.Context, _ noArgs) (string, error) {
			a, err := ask(ctx, map[string]pdk.InputRequest{
				"user_name":    elicitQ("What is your name?", "name", "string"),
				"greeting":     sampleQ("Generate a greeting", 50),
				"client_roots": rootsQ,
			})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s: %s (%d roots)", a.field("user_name", "name"), a.text("greeting"), len(a.roots("client_roots"))), nil
		})

	// input-required-result-multi-round: the second question comes once
	// the first is answered.
	pdk.Tool("test_input_required_result_multi_round", "Asks a name, then a favourite color (SEP-2322)",
		func(ctx *pdk.Context, _ noArgs) (string, error) {
			first, err := ask(ctx, map[string]pdk.InputRequest{"step1": elicitQ("Step 1: What is your name?", "name", "string")})
			if err != nil {
				return "", err
			}
			second, err := ask(ctx, map[string]pdk.InputRequest{"step2": elicitQ("Step 2: What is your favorite color?", "color", "string")})
			if err != nil {
				return "", err
			}
			return first.field("step1", "name") + " likes " + second.field("step2", "color"), nil
		})

	// input-required-result-capability-check: only what the client
	// declared in this request.
	pdk.Tool("test_input_required_result_capabilities", "Asks only what the client declared it can answer (SEP-2322)",
		func(ctx *pdk.Context, _ noArgs) (string, error) {
			questions := map[string]pdk.InputRequest{}
			if ctx.ClientCan("sampling") {
				questions["capital_question"] = sampleQ("What is the capital of France?", 100)
			}
			if ctx.ClientCan("elicitation") {
				questions["user_name"] = elicitQ("What is your name?", "name", "string")
			}
			if len(questions) == 0 {
				return "The client can answer nothing; nothing was asked.", nil
			}
			a, err := ask(ctx, questions)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Answered %d question(s)", len(a)), nil
		})

	// input-required-result-non-tool-request
	pdk.Prompt("test_input_required_result_prompt", "A prompt that asks the user for its context (SEP-2322)", nil,
		func(ctx *pdk.Context, _ map[string]string) (*abi.GetPromptResult, error) {
			a, err := ask(ctx, map[string]pdk.InputRequest{"user_context": elicitQ("What context should the prompt use?", "context", "string")})
			if err != nil {
				return nil, err
			}
			return pdk.Messages(pdk.UserMessage("Use this context: " + a.field("user_context", "context"))), nil
		})
}
