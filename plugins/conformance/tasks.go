//go:build wasip1

package main

import (
	"fmt"
	"time"

	pdk "github.com/mcphost/mcphost/pdk/go"
)

// The tasks-* scenarios of 0.2.0-alpha.12 (SEP-2663, the
// io.modelcontextprotocol/tasks extension). The tools only declare their
// task support and do their work; mcphost decides when a call becomes a
// task (one still running after 250 ms), and a question asked by a task's
// run waits in input_required for tasks/update.

// work is the pause of the fixtures that must outlast the host's 250 ms
// before a call becomes a task.
const work = 600 * time.Millisecond

type greetArgs struct {
	Name string `json:"name" description:"Whom to greet"`
}

type computeArgs struct {
	Seconds float64 `json:"seconds" description:"How long to compute, in seconds"`
	Label   string  `json:"label,omitempty" description:"A label for the result"`
}

type deleteArgs struct {
	Filename string `json:"filename,omitempty" description:"The file to delete"`
}

func init() {
	pdk.Tool("greet", "Greets someone at once (never a task)",
		func(_ *pdk.Context, a greetArgs) (string, error) {
			return "Hello, " + a.Name + "!", nil
		})

	pdk.Tool("slow_compute", "Computes for the given seconds (may run as a task)",
		func(_ *pdk.Context, a computeArgs) (string, error) {
			time.Sleep(time.Duration(a.Seconds * float64(time.Second)))
			return fmt.Sprintf("Computed %s after %gs", a.Label, a.Seconds), nil
		}, pdk.TaskSupport("optional"))

	pdk.Tool("failing_job", "Fails with a tool error after about a second (runs only as a task)",
		func(*pdk.Context, noArgs) (string, error) {
			time.Sleep(time.Second)
			return "", fmt.Errorf("the job failed: simulated tool error")
		}, pdk.TaskSupport("required"))

	pdk.Tool("protocol_error_job", "Fails with a protocol error after a while (may run as a task)",
		func(*pdk.Context, noArgs) (string, error) {
			time.Sleep(work)
			return "", pdk.ProtocolError(-32603, "protocol_error_job: simulated internal failure")
		}, pdk.TaskSupport("optional"))

	pdk.Tool("confirm_delete", "Asks for confirmation, then deletes (may run as a task)",
		func(ctx *pdk.Context, a deleteArgs) (string, error) {
			time.Sleep(work)
			r, err := ctx.Elicit(pdk.ElicitParams{Message: "Delete " + a.Filename + "?", RequestedSchema: form("confirm", "boolean")})
			if err != nil {
				return "", err
			}
			if r.Action == pdk.ActionAccept && r.Content["confirm"] == true {
				return "Deleted " + a.Filename, nil
			}
			return "Kept " + a.Filename, nil
		}, pdk.TaskSupport("optional"))

	pdk.Tool("multi_input", "Asks two questions at once (may run as a task)",
		func(ctx *pdk.Context, _ noArgs) (string, error) {
			time.Sleep(work)
			a, err := ask(ctx, map[string]pdk.InputRequest{
				"first":  elicitQ("First name?", "name", "string"),
				"second": elicitQ("Second name?", "name", "string"),
			})
			if err != nil {
				return "", err
			}
			return "Answers: " + a.field("first", "name") + ", " + a.field("second", "name"), nil
		}, pdk.TaskSupport("optional"))

	pdk.Tool("test_tool_with_task", "Asks a name, then works as a task (runs only as a task)",
		func(ctx *pdk.Context, _ noArgs) (string, error) {
			r, err := ctx.Elicit(pdk.ElicitParams{Message: "What is your name?", RequestedSchema: form("name", "string")})
			if err != nil {
				return "", err
			}
			time.Sleep(time.Second)
			return fmt.Sprintf("Hello, %v: the task is done", r.Content["name"]), nil
		}, pdk.TaskSupport("required"))
}
