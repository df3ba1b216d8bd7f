//go:build wasip1

package main

import (
	"sort"
	"strings"
)

// language is a programming language the prompts know: its canonical id
// (what completion proposes), display name, code fence tag and aliases.
type language struct {
	id      string
	name    string
	fence   string
	aliases []string
}

var languages = []language{
	{"bash", "Bash", "bash", []string{"sh", "shell", "zsh"}},
	{"c", "C", "c", []string{"h"}},
	{"clojure", "Clojure", "clojure", []string{"clj", "cljs"}},
	{"cpp", "C++", "cpp", []string{"c++", "cc", "cxx", "hpp"}},
	{"csharp", "C#", "csharp", []string{"c#", "cs", "dotnet"}},
	{"css", "CSS", "css", []string{"scss", "sass"}},
	{"dart", "Dart", "dart", []string{"flutter"}},
	{"elixir", "Elixir", "elixir", []string{"ex", "exs"}},
	{"erlang", "Erlang", "erlang", []string{"erl"}},
	{"fsharp", "F#", "fsharp", []string{"f#", "fs"}},
	{"go", "Go", "go", []string{"golang"}},
	{"haskell", "Haskell", "haskell", []string{"hs"}},
	{"html", "HTML", "html", []string{"htm"}},
	{"java", "Java", "java", []string{"jvm"}},
	{"javascript", "JavaScript", "javascript", []string{"js", "node", "nodejs", "jsx", "ecmascript"}},
	{"julia", "Julia", "julia", []string{"jl"}},
	{"kotlin", "Kotlin", "kotlin", []string{"kt", "kts"}},
	{"lua", "Lua", "lua", nil},
	{"objective-c", "Objective-C", "objectivec", []string{"objc", "obj-c"}},
	{"ocaml", "OCaml", "ocaml", []string{"ml"}},
	{"perl", "Perl", "perl", []string{"pl"}},
	{"php", "PHP", "php", nil},
	{"powershell", "PowerShell", "powershell", []string{"ps1", "pwsh"}},
	{"python", "Python", "python", []string{"py", "py3", "python3"}},
	{"r", "R", "r", []string{"rlang"}},
	{"ruby", "Ruby", "ruby", []string{"rb", "rails"}},
	{"rust", "Rust", "rust", []string{"rs"}},
	{"scala", "Scala", "scala", []string{"sc"}},
	{"sql", "SQL", "sql", []string{"postgres", "postgresql", "mysql", "sqlite"}},
	{"swift", "Swift", "swift", nil},
	{"terraform", "Terraform", "hcl", []string{"tf", "hcl"}},
	{"typescript", "TypeScript", "typescript", []string{"ts", "tsx"}},
	{"yaml", "YAML", "yaml", []string{"yml"}},
	{"zig", "Zig", "zig", nil},
}

// lookupLanguage resolves a language id, name or alias (any case).
func lookupLanguage(s string) (language, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, l := range languages {
		if l.id == s || strings.ToLower(l.name) == s {
			return l, true
		}
		for _, a := range l.aliases {
			if a == s {
				return l, true
			}
		}
	}
	return language{}, false
}

// completeLanguage proposes language ids for what the user typed: a
// language an alias names exactly comes first ("py" -> python), then ids
// and names starting with the text, then languages with an alias starting
// with it.
func completeLanguage(value string) []string {
	v := strings.ToLower(strings.TrimSpace(value))
	var out []string
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if v != "" {
		for _, l := range languages {
			for _, a := range l.aliases {
				if a == v {
					add(l.id)
				}
			}
		}
	}
	for _, l := range languages {
		if strings.HasPrefix(l.id, v) || strings.HasPrefix(strings.ToLower(l.name), v) {
			add(l.id)
		}
	}
	var byAlias []string
	for _, l := range languages {
		for _, a := range l.aliases {
			if strings.HasPrefix(a, v) && !seen[l.id] {
				byAlias = append(byAlias, l.id)
				break
			}
		}
	}
	sort.Strings(byAlias)
	for _, id := range byAlias {
		add(id)
	}
	if out == nil {
		out = []string{}
	}
	return out
}
