//go:build wasip1

// Command samego is the Go version of the wordcount test plugin, which
// internal/testrig/testplugins/samerust (Rust) and internal/testrig/testplugins/samejs
// (JavaScript) implement identically: one tool, wordcount, taking
// {"text": string} and returning {"words": n, "lines": n, "chars": n} as
// structured output. internal/testrig/e2e checks that the three answer the same
// (TestSameToolInEveryLanguage) and compares them (BenchmarkLanguages).
//
// The counting rules, shared by the three:
//
//   - words: maximal runs of characters that are not white space, white
//     space being the Unicode White_Space property (ASCII \t \n \v \f \r and
//     space, U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F,
//     U+205F, U+3000);
//   - lines: the number of "\n", plus one when the text does not end with
//     "\n" (so "" has 0 lines, "a" and "a\n" have 1, "a\nb" has 2);
//   - chars: Unicode code points.
package main

import (
	"strings"
	"unicode"

	pdk "github.com/mcphost/mcphost/pdk/go"
)

type wordcountArgs struct {
	Text string `json:"text" description:"The text to count in."`
}

// Counts is the structured output of wordcount.
type Counts struct {
	Words uint `json:"words" description:"Runs of non-white-space characters."`
	Lines uint `json:"lines" description:"Lines; a final newline does not start another."`
	Chars uint `json:"chars" description:"Unicode code points."`
}

// count applies the rules above. unicode.IsSpace is the White_Space
// property.
func count(s string) Counts {
	var c Counts
	inWord := false
	for _, r := range s {
		c.Chars++
		if r == '\n' {
			c.Lines++
		}
		if unicode.IsSpace(r) {
			inWord = false
		} else if !inWord {
			inWord = true
			c.Words++
		}
	}
	if s != "" && !strings.HasSuffix(s, "\n") {
		c.Lines++
	}
	return c
}

func init() {
	pdk.Tool("wordcount", "Counts the words, lines and characters of a text.",
		func(_ *pdk.Context, a wordcountArgs) (Counts, error) { return count(a.Text), nil },
		pdk.ReadOnly(), pdk.Idempotent(), pdk.OpenWorld(false))
}

// main never runs: the host calls the exports of the c-shared module after
// _initialize.
func main() {}
