//go:build wasip1

// Command summarize is an mcphost plugin whose tool summarises a text with
// the client's own language model, through MCP sampling: the plugin has no
// model and no network access; it asks the client (sampling/createMessage,
// host function create_message), and the client decides which model runs
// and whether the user approves the request.
package main

import (
	"errors"
	"fmt"
	"strings"

	pdk "github.com/mcphost/mcphost/pdk/go"
)

// main is required by Go but never runs: the host calls the exports after
// _initialize has run the init functions.
func main() {}

func init() {
	pdk.Tool("summarize", "Summarise a text with the client's language model (MCP sampling). "+
		"The client must support sampling; it may ask the user to approve the request.",
		summarize, pdk.WithTitle("Summarise text"), pdk.ReadOnly(), pdk.OpenWorld(true))
}

type summarizeArgs struct {
	Text     string `json:"text" jsonschema:"minLength=1,maxLength=200000" description:"The text to summarise"`
	Style    string `json:"style,omitempty" jsonschema:"enum=paragraph|bullets|headline,default=paragraph" description:"paragraph: one short paragraph; bullets: a bulleted list of the key points; headline: a single line"`
	MaxWords int    `json:"max_words,omitempty" jsonschema:"minimum=5,maximum=1000,default=100" description:"Upper bound on the length of the summary, in words"`
}

// Summary is the structured result of summarize.
type Summary struct {
	Summary string `json:"summary"`
	Style   string `json:"style"`
	Words   int    `json:"words" description:"Number of words in summary"`
	// Truncated is set when the model's reply was longer than max_words
	// (or stopped at the token limit) and was cut.
	Truncated bool   `json:"truncated,omitempty"`
	Model     string `json:"model" description:"The model the client used"`
}

const systemPrompt = "You are a careful summariser. Summarise only the text the user gives you, " +
	"faithfully and without adding facts, opinions or a preamble. Answer with the summary alone, " +
	"in the language of the text."

var styleInstructions = map[string]string{
	"paragraph": "Write one short paragraph",
	"bullets":   "Write a bulleted list of the key points, one per line, each starting with \"- \"",
	"headline":  "Write a single headline-style line",
}

func priority(p float64) *float64 { return &p }

// request builds the sampling request for a summary.
func request(text, style string, maxWords int) pdk.CreateMessageParams {
	temperature := 0.2
	return pdk.CreateMessageParams{
		SystemPrompt: systemPrompt,
		Messages: []pdk.SamplingMessage{{
			Role: pdk.RoleUser,
			Content: pdk.Text(fmt.Sprintf("%s of at most %d words summarising the text between the markers.\n\n"+
				"<<<TEXT\n%s\nTEXT>>>", styleInstructions[style], maxWords, text)),
		}},
		// A summary needs a fast, cheap model more than a clever one; the
		// hints name families, and the client is free to ignore them.
		ModelPreferences: &pdk.ModelPreferences{
			Hints:                []pdk.ModelHint{{Name: "haiku"}, {Name: "flash"}, {Name: "mini"}},
			CostPriority:         priority(0.7),
			SpeedPriority:        priority(0.8),
			IntelligencePriority: priority(0.4),
		},
		Temperature: &temperature,
		// About two tokens a word, plus room for list markup.
		MaxTokens: 2*maxWords + 64,
	}
}

func summarize(ctx *pdk.Context, a summarizeArgs) (*Summary, error) {
	style := a.Style
	if style == "" {
		style = "paragraph"
	}
	maxWords := a.MaxWords
	if maxWords == 0 {
		maxWords = 100
	}
	if strings.TrimSpace(a.Text) == "" {
		return nil, errors.New("text is blank: nothing to summarise")
	}
	res, err := ctx.CreateMessage(request(a.Text, style, maxWords))
	if err != nil {
		// A *pdk.HostError says why: the client did not declare sampling,
		// the operator did not grant create_message, the user or the client
		// refused, or the call ran out of time.
		return nil, fmt.Errorf("summarize needs the client's model through MCP sampling (sampling/createMessage), "+
			"which failed: %v", err)
	}
	summary := strings.TrimSpace(res.Text())
	if summary == "" {
		return nil, fmt.Errorf("the client's model (%s) returned no text", res.Model)
	}
	out := &Summary{Style: style, Model: res.Model, Truncated: res.StopReason == "maxTokens"}
	out.Summary, out.Words = limitWords(summary, maxWords)
	if out.Words < countWords(summary) {
		out.Truncated = true
	}
	return out, nil
}

// countWords counts whitespace-separated words.
func countWords(s string) int { return len(strings.Fields(s)) }

// limitWords keeps the first limit words of s, preserving its line breaks,
// and returns the result and its word count.
func limitWords(s string, limit int) (string, int) {
	if countWords(s) <= limit {
		return s, countWords(s)
	}
	var b strings.Builder
	n := 0
	for _, line := range strings.Split(s, "\n") {
		words := strings.Fields(line)
		if len(words) == 0 {
			continue
		}
		if n+len(words) > limit {
			words = words[:limit-n]
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.Join(words, " "))
		n += len(words)
		if n == limit {
			break
		}
	}
	return b.String() + " …", n
}
