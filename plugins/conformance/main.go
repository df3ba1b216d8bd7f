//go:build wasip1

// Command conformance is the mcphost plugin that serves the fixtures of the
// official MCP conformance suite (@modelcontextprotocol/conformance): the
// tools, resources, prompts and completions its server scenarios call, with
// the contents they check. README.md maps each scenario to its fixture;
// scripts/conformance.sh runs the suite against mcphost serving this plugin.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcphost/mcphost/abi"
	pdk "github.com/mcphost/mcphost/pdk/go"
)

// main is required by Go but never runs: the host calls the exports after
// _initialize has run the init functions.
func main() {}

// step is the pause between the notifications of the logging and progress
// tools: the suite wants them spread over the call (about 50 ms apart).
const step = 50 * time.Millisecond

type noArgs struct{}

func init() {
	// tools-call-simple-text
	pdk.Tool("test_simple_text", "Tests simple text content response",
		func(*pdk.Context, noArgs) (string, error) {
			return "This is a simple text response for testing.", nil
		})

	// tools-call-image
	pdk.Tool("test_image_content", "Tests image content response",
		func(*pdk.Context, noArgs) (abi.Content, error) {
			return pdk.Image(redPixelPNG, "image/png"), nil
		})

	// tools-call-audio
	pdk.Tool("test_audio_content", "Tests audio content response",
		func(*pdk.Context, noArgs) (abi.Content, error) {
			return pdk.Audio(silenceWAV, "audio/wav"), nil
		})

	// tools-call-embedded-resource
	pdk.Tool("test_embedded_resource", "Tests embedded resource content response",
		func(*pdk.Context, noArgs) (abi.Content, error) {
			return pdk.EmbeddedText("test://embedded-resource", "text/plain", "This is an embedded resource content."), nil
		})

	// tools-call-mixed-content
	pdk.Tool("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)",
		func(*pdk.Context, noArgs) ([]abi.Content, error) {
			return []abi.Content{
				pdk.Text("Multiple content types test:"),
				pdk.Image(redPixelPNG, "image/png"),
				pdk.EmbeddedText("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`),
			}, nil
		})

	// tools-call-with-logging
	pdk.Tool("test_tool_with_logging", "Tests tool that emits log messages during execution",
		func(ctx *pdk.Context, _ noArgs) (string, error) {
			ctx.Log(pdk.LevelInfo, "Tool execution started", nil)
			time.Sleep(step)
			ctx.Log(pdk.LevelInfo, "Tool processing data", nil)
			time.Sleep(step)
			ctx.Log(pdk.LevelInfo, "Tool execution completed", nil)
			return "Tool with logging executed successfully", nil
		})

	// tools-call-with-progress
	pdk.Tool("test_tool_with_progress", "Tests tool that reports progress notifications",
		func(ctx *pdk.Context, _ noArgs) (string, error) {
			for i, p := range []float64{0, 50, 100} {
				if i > 0 {
					time.Sleep(step)
				}
				ctx.Progress(p, 100, fmt.Sprintf("Completed step %v of 100", p))
			}
			if tok := ctx.ProgressToken(); tok != nil {
				return fmt.Sprintf("Progress reported with token %v", tok), nil
			}
			return "Completed without a progress token", nil
		})

	// tools-call-error: a plain error becomes an isError result with its text.
	pdk.Tool("test_error_handling", "Tests error response handling",
		func(*pdk.Context, noArgs) (string, error) {
			return "", errors.New("This tool intentionally returns an error for testing")
		})

	// server-sse-polling (SEP-1699). Closing the SSE stream mid-call is the
	// HTTP transport's business; the tool only gives it time to do so.
	pdk.Tool("test_reconnection",
		"Tests SSE stream disconnection and client reconnection (SEP-1699). The server closes the stream mid-call and sends the result after the client reconnects.",
		func(*pdk.Context, noArgs) (string, error) {
			time.Sleep(2 * step)
			return "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.", nil
		})

	// tools-call-sampling
	pdk.Tool("test_sampling", "Tests server-initiated sampling (LLM completion request)", testSampling)

	// tools-call-elicitation
	pdk.Tool("test_elicitation", "Tests server-initiated elicitation (user input request)", testElicitation)

	// elicitation-sep1034-defaults
	pdk.Tool("test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034",
		func(ctx *pdk.Context, _ noArgs) (string, error) {
			return elicit(ctx, "Please review and update the form fields with defaults", sep1034Schema)
		})

	// elicitation-sep1330-enums
	pdk.Tool("test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330",
		func(ctx *pdk.Context, _ noArgs) (string, error) {
			return elicit(ctx, "Please select options from the enum fields", sep1330Schema)
		})

	// json-schema-2020-12 (SEP-1613): the schema is served as written.
	pdk.Tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
		func(_ *pdk.Context, args map[string]any) (string, error) {
			b, err := json.Marshal(args)
			if err != nil {
				return "", err
			}
			return "JSON Schema 2020-12 tool called with: " + string(b), nil
		},
		pdk.WithInputSchema(jsonSchema202012))

	// server-stateless (2026-07-28): a tool that needs the client's
	// sampling, one that logs, one that elicits. The host answers a client
	// that did not declare sampling with -32021, sends the log message only
	// to a request that set a logLevel, and never sends the client a
	// request on the response stream.
	pdk.Tool("test_missing_capability", "Asks the client's model, so it needs the sampling capability",
		func(ctx *pdk.Context, _ noArgs) (string, error) {
			return testSampling(ctx, samplingArgs{Prompt: "Say hello"})
		})
	pdk.Tool("test_logging_tool", "Sends one log message",
		func(ctx *pdk.Context, _ noArgs) (string, error) {
			ctx.Log(pdk.LevelInfo, "test_logging_tool ran", nil)
			return "Logged one message.", nil
		})
	pdk.Tool("test_streaming_elicitation", "Asks the user for input while its response streams",
		func(ctx *pdk.Context, _ noArgs) (string, error) {
			return elicit(ctx, "Please provide your information", userSchema)
		})

	// http-custom-header-server-validation (2026-07-28, SEP-2243): region
	// is mirrored in the Mcp-Param-Region header, which the host checks.
	pdk.Tool("test_custom_header", "Answers the region it is given, which clients mirror in Mcp-Param-Region",
		func(_ *pdk.Context, a regionArgs) (string, error) {
			return "Region: " + a.Region, nil
		},
		pdk.WithInputSchema(regionSchema))
}

type regionArgs struct {
	Region string `json:"region"`
}

type samplingArgs struct {
	Prompt string `json:"prompt" description:"The prompt to send to the LLM"`
}

// testSampling asks the client's model to answer the prompt
// (sampling/createMessage) and returns its text.
func testSampling(ctx *pdk.Context, a samplingArgs) (string, error) {
	r, err := ctx.CreateMessage(pdk.CreateMessageParams{
		Messages:  []pdk.SamplingMessage{{Role: pdk.RoleUser, Content: pdk.Text(a.Prompt)}},
		MaxTokens: 100,
	})
	if err != nil {
		return "", fmt.Errorf("sampling failed: %w", err)
	}
	text := "No response"
	for _, c := range r.Content {
		if c.Type == abi.ContentText {
			text = c.Text
			break
		}
	}
	return "LLM response: " + text, nil
}

type elicitationArgs struct {
	Message string `json:"message" description:"The message to show the user"`
}

// testElicitation asks the user for a user name and an e-mail address.
func testElicitation(ctx *pdk.Context, a elicitationArgs) (string, error) {
	r, err := ctx.Elicit(pdk.ElicitParams{Message: a.Message, RequestedSchema: userSchema})
	if err != nil {
		return "", fmt.Errorf("elicitation failed: %w", err)
	}
	return "User response: " + describe(r), nil
}

// elicit asks the user to fill in schema and reports the answer.
func elicit(ctx *pdk.Context, message string, schema json.RawMessage) (string, error) {
	r, err := ctx.Elicit(pdk.ElicitParams{Message: message, RequestedSchema: schema})
	if err != nil {
		return "", fmt.Errorf("elicitation failed: %w", err)
	}
	return "Elicitation completed: " + describe(r), nil
}

// describe renders an elicitation answer as "action=..., content={...}".
func describe(r *pdk.ElicitResult) string {
	content := []byte("{}")
	if r.Content != nil {
		if b, err := json.Marshal(r.Content); err == nil {
			content = b
		}
	}
	return fmt.Sprintf("action=%s, content=%s", r.Action, content)
}
