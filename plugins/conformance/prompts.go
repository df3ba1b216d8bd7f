//go:build wasip1

package main

import (
	"fmt"

	"github.com/mcphost/mcphost/abi"
	pdk "github.com/mcphost/mcphost/pdk/go"
)

func init() {
	// prompts-list, prompts-get-simple
	pdk.Prompt("test_simple_prompt", "A simple prompt without arguments", nil,
		func(*pdk.Context, map[string]string) (*abi.GetPromptResult, error) {
			return pdk.Messages(pdk.UserMessage("This is a simple prompt for testing.")), nil
		}, pdk.WithTitle("Simple Test Prompt"))

	// prompts-get-with-args, completion-complete
	pdk.Prompt("test_prompt_with_arguments", "A prompt with required arguments",
		[]pdk.PromptArg{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		},
		func(_ *pdk.Context, args map[string]string) (*abi.GetPromptResult, error) {
			return pdk.Messages(pdk.UserMessage(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"]))), nil
		}, pdk.WithTitle("Prompt With Arguments"))
	// The suite completes arg1 of test_prompt_with_arguments and only checks
	// that values is an array.
	pdk.CompletePromptArg("test_prompt_with_arguments", "arg1", pdk.CompleteFrom("paris", "park", "party", "testValue1"))
	pdk.CompletePromptArg("test_prompt_with_arguments", "arg2", pdk.CompleteFrom("testValue2", "world"))

	// prompts-get-embedded-resource
	pdk.Prompt("test_prompt_with_embedded_resource", "A prompt that includes an embedded resource",
		[]pdk.PromptArg{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
		func(_ *pdk.Context, args map[string]string) (*abi.GetPromptResult, error) {
			return pdk.Messages(
				abi.PromptMessage{Role: pdk.RoleUser, Content: pdk.EmbeddedText(args["resourceUri"], "text/plain", "Embedded resource content for testing.")},
				pdk.UserMessage("Please process the embedded resource above."),
			), nil
		}, pdk.WithTitle("Prompt With Embedded Resource"))

	// prompts-get-with-image
	pdk.Prompt("test_prompt_with_image", "A prompt that includes image content", nil,
		func(*pdk.Context, map[string]string) (*abi.GetPromptResult, error) {
			return pdk.Messages(
				abi.PromptMessage{Role: pdk.RoleUser, Content: pdk.Image(redPixelPNG, "image/png")},
				pdk.UserMessage("Please analyze the image above."),
			), nil
		}, pdk.WithTitle("Prompt With Image"))
}
