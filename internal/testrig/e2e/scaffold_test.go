package e2e

import (
	"archive/zip"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A Go scaffold made outside the mcphost clone builds and runs, and needs
// only the PDK and ABI modules, never the server module: with the PDK of
// the checkout mcphost was built from, and with the published PDK, served
// here by a file GOPROXY holding module zips of this checkout's pdk/go and
// abi.

const (
	serverModule = "github.com/mcphost/mcphost"
	pdkModule    = serverModule + "/pdk/go"
	abiModule    = serverModule + "/abi"
)

// TestScaffoldOutsideTheClone: new, build and call, in a folder outside the
// clone, with no module download allowed: the scaffold takes the PDK from
// the checkout this mcphost was built from.
func TestScaffoldOutsideTheClone(t *testing.T) {
	root := devRoot(t)
	dir := t.TempDir()
	offline := []string{"GOPROXY=off", "GOFLAGS=-mod=readonly"}
	res := devMust(t, dir, offline, "new", "hello", "--lang", "go")
	if !strings.Contains(res.stdout, "using the PDK of the mcphost checkout at "+root) {
		t.Errorf("new did not use the checkout mcphost was built from (%s):\n%s", root, res.stdout)
	}
	scaffoldNeedsNoServer(t, filepath.Join(dir, "hello", "go.mod"))
	devMust(t, dir, offline, "build", "hello")
	res = devMust(t, dir, offline, "call", "hello/hello.wasm", "greet", "--arg", "name=World", "--config", "hello/mcphost.toml")
	if res.stdout != "Hello, World!\n" {
		t.Errorf("call greet: stdout %q, want %q", res.stdout, "Hello, World!\n")
	}
}

// TestScaffoldWithThePublishedPDK: a scaffold made for the published PDK
// (no checkout, no replace) builds from a module proxy holding the pdk/go
// and abi modules alone, and its go.sum and module graph hold those two and
// no server module.
func TestScaffoldWithThePublishedPDK(t *testing.T) {
	root := devRoot(t)
	dir := t.TempDir()
	res := devMust(t, dir, nil, "new", "hello", "--lang", "go", "--pdk", "published")
	if strings.Contains(res.stdout, "checkout") {
		t.Errorf("new --pdk published used a checkout:\n%s", res.stdout)
	}
	gomod := filepath.Join(dir, "hello", "go.mod")
	scaffoldNeedsNoServer(t, gomod)
	b, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "replace") {
		t.Errorf("go.mod for the published PDK has a replace directive:\n%s", b)
	}
	pdkVersion := requiredVersion(t, gomod, pdkModule)
	abiVersion := requiredVersion(t, filepath.Join(root, "pdk", "go", "go.mod"), abiModule)

	proxy := t.TempDir()
	writeProxyModule(t, proxy, abiModule, abiVersion, filepath.Join(root, "abi"))
	writeProxyModule(t, proxy, pdkModule, pdkVersion, filepath.Join(root, "pdk", "go"))
	gopath := t.TempDir()
	env := []string{
		"GOPROXY=file://" + filepath.ToSlash(proxy), "GOFLAGS=-mod=mod -modcacherw",
		"GOSUMDB=off", "GOTOOLCHAIN=local",
		"GOPATH=" + gopath, "GOMODCACHE=" + filepath.Join(gopath, "pkg", "mod"),
	}
	devMust(t, dir, env, "build", "hello")
	res = devMust(t, dir, env, "call", "hello/hello.wasm", "greet", "--arg", "name=World", "--config", "hello/mcphost.toml")
	if res.stdout != "Hello, World!\n" {
		t.Errorf("call greet: stdout %q, want %q", res.stdout, "Hello, World!\n")
	}

	sum, err := os.ReadFile(filepath.Join(dir, "hello", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	sumModules := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(sum)), "\n") {
		sumModules[strings.Fields(line)[0]] = true
	}
	if len(sumModules) != 2 || !sumModules[pdkModule] || !sumModules[abiModule] {
		t.Errorf("go.sum holds modules other than %s and %s:\n%s", pdkModule, abiModule, sum)
	}
	cmd := exec.Command("go", "list", "-m", "all")
	cmd.Dir = filepath.Join(dir, "hello")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -m all: %v\n%s", err, out)
	}
	if want := "hello\n" + abiModule + " " + abiVersion + "\n" + pdkModule + " " + pdkVersion + "\n"; string(out) != want {
		t.Errorf("go list -m all:\n%s\nwant:\n%s", out, want)
	}
}

// scaffoldNeedsNoServer fails the test if the go.mod requires or replaces
// the server module rather than the PDK.
func scaffoldNeedsNoServer(t *testing.T, gomod string) {
	t.Helper()
	b, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), pdkModule+" ") {
		t.Errorf("%s does not require %s:\n%s", gomod, pdkModule, b)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, serverModule+" ") {
			t.Errorf("%s names the server module %s: %q", gomod, serverModule, line)
		}
	}
}

// writeProxyModule adds version of module, whose source is in dir, to the
// file GOPROXY at proxy: the version list, .info, .mod and the module zip,
// whose files sit under module@version/.
func writeProxyModule(t *testing.T, proxy, module, version, dir string) {
	t.Helper()
	at := filepath.Join(proxy, filepath.FromSlash(module), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"list":            version + "\n",
		version + ".info": `{"Version":"` + version + `","Time":"2026-01-01T00:00:00Z"}`,
		version + ".mod":  string(gomod),
	} {
		if err := os.WriteFile(filepath.Join(at, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	zf, err := os.Create(filepath.Join(at, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zf.Close()
	zw := zip.NewWriter(zf)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		w, err := zw.Create(module + "@" + version + "/" + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// requiredVersion returns the version the go.mod file gomod requires of
// module, as go mod edit reads it.
func requiredVersion(t *testing.T, gomod, module string) string {
	t.Helper()
	out, err := exec.Command("go", "mod", "edit", "-json", gomod).Output()
	if err != nil {
		t.Fatalf("go mod edit -json %s: %v", gomod, err)
	}
	var mod struct {
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatalf("go mod edit -json %s: %v", gomod, err)
	}
	for _, r := range mod.Require {
		if r.Path == module {
			return r.Version
		}
	}
	t.Fatalf("%s does not require %s:\n%s", gomod, module, out)
	return ""
}
