//go:build wasip1

// Command prompts is an mcphost plugin offering prompts for everyday coding
// work: code review, commit messages and code explanations, with completion
// of their arguments.
package main

import (
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/abi"
	pdk "github.com/mcphost/mcphost/pdk/go"
)

// main is required by Go but never runs: the host calls the exports after
// _initialize has run the init functions.
func main() {}

var (
	focusAreas = []string{
		"correctness", "security", "performance", "readability", "maintainability",
		"error-handling", "concurrency", "testing", "api-design", "documentation",
	}
	commitStyles = []string{"conventional", "simple", "detailed", "gitmoji"}
	audiences    = []string{"beginner", "intermediate", "expert"}
)

func init() {
	pdk.Prompt("code_review", "Review code for bugs, security problems, performance and style, with concrete fixes.",
		[]pdk.PromptArg{
			{Name: "code", Description: "The code to review", Required: true},
			{Name: "language", Description: "Programming language (python, go, ts, ...); guessed when absent"},
			{Name: "focus", Description: "What to concentrate on: " + strings.Join(focusAreas, ", ")},
		}, codeReview, pdk.WithTitle("Code review"))

	pdk.Prompt("git-commit", "Write a git commit message for a diff.",
		[]pdk.PromptArg{
			{Name: "diff", Description: "The staged diff (git diff --staged)", Required: true},
			{Name: "style", Description: "Message style: " + strings.Join(commitStyles, ", ") + " (default conventional)"},
		}, gitCommit, pdk.WithTitle("Commit message"))

	pdk.Prompt("explain-code", "Explain what a piece of code does, adapted to the audience.",
		[]pdk.PromptArg{
			{Name: "code", Description: "The code to explain", Required: true},
			{Name: "language", Description: "Programming language; guessed when absent"},
			{Name: "audience", Description: "Who the explanation is for: " + strings.Join(audiences, ", ") + " (default intermediate)"},
		}, explainCode, pdk.WithTitle("Explain code"))

	languageCompletion := func(_ *pdk.Context, value string, _ map[string]string) []string {
		return completeLanguage(value)
	}
	pdk.CompletePromptArg("code_review", "language", languageCompletion)
	pdk.CompletePromptArg("explain-code", "language", languageCompletion)
	pdk.CompletePromptArg("code_review", "focus", pdk.CompleteFrom(focusAreas...))
	pdk.CompletePromptArg("git-commit", "style", pdk.CompleteFrom(commitStyles...))
	pdk.CompletePromptArg("explain-code", "audience", pdk.CompleteFrom(audiences...))
}

// describeLanguage returns the display name and fence tag for the language
// argument: a known language by id or alias, the text itself otherwise.
func describeLanguage(arg string) (name, fenceTag string) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return "", ""
	}
	if l, ok := lookupLanguage(arg); ok {
		return l.name, l.fence
	}
	return arg, strings.ToLower(strings.Fields(arg)[0])
}

// fence wraps code in a Markdown code block whose fence is longer than any
// run of backticks in the code.
func fence(code, tag string) string {
	longest, run := 0, 0
	for _, c := range code {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + tag + "\n" + strings.TrimRight(code, "\n") + "\n" + f
}

func oneOf(value string, allowed []string, def, what string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(value))
	if v == "" {
		return def, nil
	}
	for _, a := range allowed {
		if a == v {
			return v, nil
		}
	}
	return "", pdk.InvalidParams("unknown %s %q (one of %s)", what, value, strings.Join(allowed, ", "))
}

func codeReview(_ *pdk.Context, args map[string]string) (*abi.GetPromptResult, error) {
	lang, tag := describeLanguage(args["language"])
	subject := "the following code"
	if lang != "" {
		subject = "the following " + lang + " code"
	}
	var focus []string
	for _, f := range strings.Split(args["focus"], ",") {
		if f = strings.TrimSpace(f); f != "" {
			focus = append(focus, f)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Please review %s as an experienced, pragmatic senior engineer.\n\n", subject)
	if len(focus) > 0 {
		fmt.Fprintf(&b, "Concentrate on %s; mention other problems only when they are serious.\n\n", strings.Join(focus, ", "))
	} else {
		b.WriteString("Look at correctness first (bugs, edge cases, error handling), then security, performance, readability and maintainability.\n\n")
	}
	b.WriteString(`For each finding give:
- severity: critical, major, minor or nit;
- where: the line(s) or a short snippet;
- the problem and why it matters;
- a concrete fix, as code when that is clearer.

Order findings by severity. Do not invent problems: if the code is fine in some respect, say so briefly. ` +
		"Finish with a two-sentence summary and the one change you would make first.\n\n")
	b.WriteString(fence(args["code"], tag))

	desc := "Code review"
	if lang != "" {
		desc += " of " + lang + " code"
	}
	if len(focus) > 0 {
		desc += " focusing on " + strings.Join(focus, ", ")
	}
	r := pdk.Messages(pdk.UserMessage(b.String()))
	r.Description = desc
	return r, nil
}

var commitInstructions = map[string]string{
	"conventional": `Use the Conventional Commits format:

    <type>(<optional scope>): <subject>

    <body>

    <footer>

- type is one of feat, fix, docs, style, refactor, perf, test, build, ci, chore, revert;
- the scope names the area touched (a package, module or component), when there is a clear one;
- the subject is imperative ("add", not "added"), lower case, without a final period, at most 72 characters;
- the body explains what changed and why (not how), wrapped at 72 columns; leave it out for trivial changes;
- breaking changes get a "!" after the type/scope and a "BREAKING CHANGE: ..." footer;
- reference issues in the footer ("Refs: #123") only if the diff mentions them.`,
	"simple": `Write a single summary line: imperative mood ("Fix", not "Fixed"), capitalised, at most 50 characters, no final period. ` +
		`Add a body (after a blank line, wrapped at 72 columns) only if the why is not obvious from the summary.`,
	"detailed": `Write a summary line (imperative mood, at most 50 characters, no final period), a blank line, ` +
		`then a body wrapped at 72 columns: one paragraph on the motivation, then a bullet list ("- ") of the notable changes, ` +
		`then any caveats, migrations or follow-ups.`,
	"gitmoji": `Start the summary line with the fitting gitmoji (✨ feature, 🐛 bug fix, 📝 docs, ♻️ refactor, ⚡️ performance, ✅ tests, ` +
		`🔧 configuration, 🔥 removal, 🚑️ hotfix, ⬆️ dependency upgrade, 🎨 structure/format), then an imperative summary of at most 60 characters. ` +
		`Add a short body wrapped at 72 columns when the change needs explaining.`,
}

func gitCommit(_ *pdk.Context, args map[string]string) (*abi.GetPromptResult, error) {
	style, err := oneOf(args["style"], commitStyles, "conventional", "style")
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("Write a git commit message for the diff below.\n\n")
	b.WriteString(commitInstructions[style])
	b.WriteString("\n\nDescribe the change as a whole rather than listing files. If the diff mixes unrelated changes, " +
		"say so after the message and suggest how to split the commit. Reply with the commit message only, in a plain code block.\n\n")
	b.WriteString(fence(args["diff"], "diff"))
	r := pdk.Messages(pdk.UserMessage(b.String()))
	r.Description = "Commit message (" + style + " style)"
	return r, nil
}

var audienceInstructions = map[string]string{
	"beginner": "The reader is new to programming. Avoid jargon, or define each term the first time you use it. " +
		"Start with a one-paragraph overview in plain words, then walk through the code step by step, " +
		"relating it to everyday analogies where it helps. Point out any language feature a beginner would not know.",
	"intermediate": "The reader is a working developer who may not know this language or codebase well. " +
		"Start with a short summary of the purpose, then explain the structure and control flow, the important data, " +
		"and any idioms or library calls specific to the language. Mention edge cases and how errors are handled.",
	"expert": "The reader is an expert. Be concise: state the purpose in one sentence, then focus on the non-obvious — " +
		"invariants, complexity, concurrency and memory behaviour, failure modes, and design trade-offs or possible improvements.",
}

func explainCode(_ *pdk.Context, args map[string]string) (*abi.GetPromptResult, error) {
	audience, err := oneOf(args["audience"], audiences, "intermediate", "audience")
	if err != nil {
		return nil, err
	}
	lang, tag := describeLanguage(args["language"])
	subject := "this code"
	if lang != "" {
		subject = "this " + lang + " code"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Explain what %s does.\n\n%s\n\n", subject, audienceInstructions[audience])
	b.WriteString("Refer to specific lines or identifiers when explaining. Do not rewrite the code unless asked.\n\n")
	b.WriteString(fence(args["code"], tag))
	r := pdk.Messages(pdk.UserMessage(b.String()))
	article := "a"
	if strings.ContainsRune("aeiou", rune(audience[0])) {
		article = "an"
	}
	r.Description = "Explanation of " + subject + " for " + article + " " + audience + " reader"
	return r, nil
}
