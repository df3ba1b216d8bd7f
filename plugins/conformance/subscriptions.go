//go:build wasip1

package main

import (
	"time"

	"github.com/mcphost/mcphost/abi"
	pdk "github.com/mcphost/mcphost/pdk/go"
)

// The list changes of 2026-07-28 (SEP-2575): the suite opens a
// subscriptions/listen stream, calls a trigger, and wants the list_changed
// notification of that list on the stream. Each trigger changes the list
// for real, (re-)registering an item whose description says when, and
// announces it; the host then lists the plugin again, on the instance that
// ran the trigger (the most recently used idle one), sees the change and
// notifies the streams that asked.
func init() {
	// sep-2575-server-sends-tools-list-changed-on-subscription
	pdk.Tool("test_trigger_tool_change", "Changes the tool list (test_dynamic_tool) and announces it",
		func(*pdk.Context, noArgs) (string, error) {
			pdk.Tool("test_dynamic_tool", "A tool test_trigger_tool_change registered at "+now(),
				func(*pdk.Context, noArgs) (string, error) { return "dynamic", nil })
			pdk.NotifyToolListChanged()
			return "The tool list changed.", nil
		})

	// sep-2575-server-sends-prompts-list-changed-on-subscription
	pdk.Tool("test_trigger_prompt_change", "Changes the prompt list (test_dynamic_prompt) and announces it",
		func(*pdk.Context, noArgs) (string, error) {
			pdk.Prompt("test_dynamic_prompt", "A prompt test_trigger_prompt_change registered at "+now(), nil,
				func(*pdk.Context, map[string]string) (*abi.GetPromptResult, error) {
					return &abi.GetPromptResult{Messages: []abi.PromptMessage{{Role: "user", Content: pdk.Text("dynamic")}}}, nil
				})
			pdk.NotifyPromptListChanged()
			return "The prompt list changed.", nil
		})
}

// now is the time of a change, to the nanosecond: every change differs.
func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }
