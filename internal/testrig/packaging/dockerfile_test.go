package packaging

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// instruction is one instruction of a Dockerfile: its keyword, upper
// case, and the rest of its line, continuations joined.
type instruction struct {
	keyword, args string
}

// stage is a stage of a Dockerfile: its FROM and what follows it.
type stage struct {
	from, name string
	body       []instruction
}

// readStages parses the Dockerfile at the repository's root into stages.
func readStages(t *testing.T) []stage {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stages []stage
	buildArgs := map[string]string{} // the ARGs before the first FROM, with their defaults
	var line strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(text, "#") || (text == "" && line.Len() == 0) {
			continue
		}
		if cont, ok := strings.CutSuffix(text, `\`); ok {
			line.WriteString(cont + " ")
			continue
		}
		line.WriteString(text)
		keyword, args, _ := strings.Cut(line.String(), " ")
		line.Reset()
		in := instruction{strings.ToUpper(keyword), strings.Join(strings.Fields(args), " ")}
		if in.keyword == "FROM" {
			from, name, _ := strings.Cut(in.args, " AS ")
			stages = append(stages, stage{from: os.Expand(from, func(k string) string { return buildArgs[k] }), name: name})
			continue
		}
		if len(stages) == 0 {
			if in.keyword != "ARG" {
				t.Fatalf("Dockerfile: %s before the first FROM", in.keyword)
			}
			k, v, _ := strings.Cut(in.args, "=")
			buildArgs[k] = v
			continue
		}
		stages[len(stages)-1].body = append(stages[len(stages)-1].body, in)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return stages
}

// all returns the arguments of stage s's instructions of keyword.
func (s stage) all(keyword string) []string {
	var args []string
	for _, in := range s.body {
		if in.keyword == keyword {
			args = append(args, in.args)
		}
	}
	return args
}

// makeServe returns the targets and the serve command line of the
// Makefile's serve recipe: what the README's set-up command runs.
func makeServe(t *testing.T) (targets []string, serve []string) {
	t.Helper()
	out, err := exec.Command("make", "-C", root, "-n", "serve").Output()
	if err != nil {
		t.Fatalf("make -n serve: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		switch {
		case slices.Contains(f, "build") && slices.Contains(f, "examples") && strings.Contains(f[0], "make"):
			targets = []string{"build", "examples"}
		case len(f) > 1 && strings.HasSuffix(f[0], "/mcphost") && f[1] == "serve":
			serve = f[1:]
		}
	}
	if targets == nil || serve == nil {
		t.Fatalf("make -n serve does not build and serve as expected:\n%s", out)
	}
	return targets, serve
}

// TestDockerfileBuildsAsMakeServe checks the Dockerfile against the
// Makefile without a container engine: its build stage is on the Go of
// go.mod and runs the make targets that make serve runs (the Rust
// example's toolchain installed first, as make serve does), and its
// runtime stage serves what they build, the same way, as a user that is
// not root.
func TestDockerfileBuildsAsMakeServe(t *testing.T) {
	stages := readStages(t)
	if len(stages) < 2 {
		t.Fatalf("the Dockerfile has %d stage(s): want a build stage and a runtime stage", len(stages))
	}
	build, runtime := stages[0], stages[len(stages)-1]

	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
	if goLine == nil || !strings.HasPrefix(build.from, "golang:"+string(goLine[1])+"-") {
		t.Errorf("the build stage is FROM %s: want the golang image of go.mod's go line", build.from)
	}

	targets, serve := makeServe(t)
	run := strings.Join(build.all("RUN"), "\n")
	if !strings.Contains(run, "scripts/setup-rust.sh") {
		t.Error("the build stage does not install the Rust example's toolchain with scripts/setup-rust.sh, as make serve does")
	}
	makeRun := regexp.MustCompile(`(?m)\bmake\b[^\n&;|]*`).FindString(run)
	for _, target := range targets {
		if !slices.Contains(strings.Fields(makeRun), target) {
			t.Errorf("the build stage runs %q: want the targets make serve builds, %v", makeRun, targets)
		}
	}

	// The runtime stage copies what those targets build and serves it as
	// make serve does: the plugins folder and the config file, laid out as
	// in the checkout, so the config's relative paths still hold.
	copied := map[string]string{} // source in the build stage -> destination
	for _, c := range runtime.all("COPY") {
		f := strings.Fields(c)
		if !strings.HasPrefix(f[0], "--from="+build.name) {
			t.Errorf("the runtime stage copies %q from elsewhere than the build stage %q", c, build.name)
			continue
		}
		f = slices.DeleteFunc(f, func(s string) bool { return strings.HasPrefix(s, "--") })
		copied[f[0]] = f[1]
	}
	workdir := build.all("WORKDIR")
	if len(workdir) != 1 {
		t.Fatalf("the build stage has WORKDIR %v: want one", workdir)
	}
	runWorkdir := runtime.all("WORKDIR")
	if len(runWorkdir) != 1 {
		t.Fatalf("the runtime stage has WORKDIR %v: want one", runWorkdir)
	}
	for i := 0; i+1 < len(serve); i++ {
		if serve[i] != "--plugins" && serve[i] != "--config" {
			continue
		}
		from := filepath.Join(workdir[0], serve[i+1])
		if copied[from] != filepath.Join(runWorkdir[0], serve[i+1]) {
			t.Errorf("the runtime stage does not copy %s to %s (make serve's %s %s)", from, filepath.Join(runWorkdir[0], serve[i+1]), serve[i], serve[i+1])
		}
	}
	entry := strings.Join(runtime.all("ENTRYPOINT"), " ") + " " + strings.Join(runtime.all("CMD"), " ")
	want := `"serve", "--plugins", "` + filepath.Join(runWorkdir[0], "build/plugins") + `", "--config", "` + filepath.Join(runWorkdir[0], "mcphost.toml") + `"`
	if !strings.Contains(entry, want) {
		t.Errorf("the image runs %s: want it to serve as make serve does, %s", entry, want)
	}

	users := runtime.all("USER")
	if len(users) == 0 {
		t.Fatal("the runtime stage sets no USER: it would run as root")
	}
	if user := users[len(users)-1]; user == "root" || strings.HasPrefix(user, "0:") || user == "0" {
		t.Errorf("the runtime stage runs as %s", user)
	}
}
