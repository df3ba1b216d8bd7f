package wasmpass

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/wasmtest"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// The properties of the module passes of Instrument, each held alone and in
// their chain (checkPasses): a pass never panics; what it returns is valid
// if and only if what it was given is; a pass refuses a valid module only
// for a cap of the sandbox's (too many or too large tables); and the
// module a pass returns behaves as the one it was given: its exports
// return the same results, or trap with the same message, with the
// interrupt import a no-op (a differential run, both under wazero's own
// WithCloseOnContextDone with a deadline, so that an endless loop ends).

// modulePass is one pass of Instrument.
type modulePass struct {
	name string
	run  func([]byte) ([]byte, error)
}

// modulePasses are Instrument's passes in their order, then their chain
// after the check that comes first of all (checkDeclaredSizes).
var modulePasses = []modulePass{
	{"capTables", capTables},
	{"redirectKernelImports", redirectKernelImports},
	{"makeInterruptible", makeInterruptible},
	{"all", func(wasm []byte) ([]byte, error) {
		err := checkDeclaredSizes(wasm)
		if err == nil {
			wasm, err = capTables(wasm)
		}
		if err == nil {
			wasm, err = redirectKernelImports(wasm)
		}
		if err == nil {
			wasm, err = makeInterruptible(wasm)
		}
		return wasm, err
	}},
}

// passChecker checks the passes' properties with one wazero runtime (the
// interpreter, whose compilation is cheapest) for validation.
type passChecker struct {
	validator wazero.Runtime
	// trusted is set for the modules of wazero's own tests (specCorpus),
	// about which valid asks wazero whatever they declare.
	trusted bool
}

// newPassChecker returns a passChecker for modules from anywhere (trusted
// false) or from wazero's own tests (trusted).
func newPassChecker(t testing.TB, trusted bool) *passChecker {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	t.Cleanup(func() { r.Close(ctx) })
	return &passChecker{validator: r, trusted: trusted}
}

// valid returns wazero's verdict on wasm: nil when it is valid. Unless c
// is trusted, a module checkDeclaredSizes refuses is invalid without
// asking wazero, which would allocate what it declares (gigabytes).
func (c *passChecker) valid(wasm []byte) error {
	if !c.trusted {
		if err := checkDeclaredSizes(wasm); err != nil {
			return err
		}
	}
	ctx := context.Background()
	m, err := c.validator.CompileModule(ctx, wasm)
	if err == nil {
		m.Close(ctx)
	}
	return err
}

// passOutcome is what checkPasses found of one module.
type passOutcome struct {
	valid   bool     // the module as given
	refused []string // passes that refused the valid module, for a cap
	ran     int      // exports compared in differential runs
}

// checkPasses runs each pass on wasm and reports the first property that
// does not hold.
func (c *passChecker) checkPasses(wasm []byte) (passOutcome, error) {
	var out passOutcome
	if !c.trusted && checkCompileCost(wasm, maxModuleBytes) != nil {
		// Instrument refuses it before any pass runs, and wazero cannot be
		// asked: it allocates what a module declares and panics on some
		// modules the caps refuse.
		return out, nil
	}
	before := c.valid(wasm)
	out.valid = before == nil
	for _, p := range modulePasses {
		got, err := p.run(slices.Clone(wasm))
		switch {
		case err != nil && !out.valid:
		case err != nil && isSandboxCap(err):
			out.refused = append(out.refused, p.name)
		case err != nil:
			return out, fmt.Errorf("%s refused a valid module: %v", p.name, err)
		case !out.valid:
			if c.valid(got) == nil {
				return out, fmt.Errorf("%s made an invalid module valid (it was: %v)", p.name, before)
			}
		default:
			if after := c.valid(got); after != nil {
				return out, fmt.Errorf("%s made a valid module invalid: %v", p.name, after)
			}
			n, err := sameBehaviour(wasm, got)
			if err != nil {
				return out, fmt.Errorf("%s changed what the module does: %v", p.name, err)
			}
			out.ran += n
		}
	}
	return out, nil
}

// isSandboxCap reports whether err refuses a module for one of the
// sandbox's caps rather than for what the module is.
func isSandboxCap(err error) bool {
	return strings.Contains(err.Error(), "tables") && !errors.Is(err, ErrMalformed)
}

// runDeadline bounds each export's run in a differential run.
const runDeadline = 200 * time.Millisecond

// sameBehaviour instantiates before and after, each beside stubs of the
// functions it imports (returning zeros) and a no-op interrupt, and calls
// every export whose parameters are numbers with zeros, in order,
// comparing results and traps, until one of them runs past runDeadline.
// It returns how many exports it compared. Modules that import anything
// but functions are not run.
func sameBehaviour(before, after []byte) (int, error) {
	ctx := context.Background()
	runs := [2][]exportRun{}
	for i, wasm := range [][]byte{before, after} {
		r, err := runExports(ctx, wasm)
		if err != nil {
			return 0, err
		}
		if r == nil {
			return 0, nil
		}
		runs[i] = r
	}
	n := min(len(runs[0]), len(runs[1]))
	for i := range n {
		if a, b := runs[0][i], runs[1][i]; a.timedOut || b.timedOut {
			return i, nil
		} else if a.result != b.result {
			return i, fmt.Errorf("export %s: %s before, %s after", a.name, a.result, b.result)
		}
	}
	if len(runs[0]) != len(runs[1]) && !runs[0][n-1].timedOut && !runs[1][n-1].timedOut {
		return n, fmt.Errorf("%d exports run before, %d after", len(runs[0]), len(runs[1]))
	}
	return n, nil
}

// exportRun is the outcome of one export's run.
type exportRun struct {
	name, result string
	timedOut     bool
}

// deadlineListener ends a call at the start of a function once its
// context ended: wazero's WithCloseOnContextDone checks at loop heads only,
// and a recursion without loops would run on.
type deadlineListener struct{}

func (deadlineListener) NewFunctionListener(api.FunctionDefinition) experimental.FunctionListener {
	return deadlineListener{}
}

func (deadlineListener) Before(ctx context.Context, _ api.Module, _ api.FunctionDefinition, _ []uint64, _ experimental.StackIterator) {
	if err := ctx.Err(); err != nil {
		panic(err)
	}
}

func (deadlineListener) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}

func (deadlineListener) Abort(context.Context, api.Module, api.FunctionDefinition, error) {}

// runExports instantiates wasm (nil when it imports other than functions)
// and runs its exports as sameBehaviour says.
func runExports(ctx context.Context, wasm []byte) ([]exportRun, error) {
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCloseOnContextDone(true))
	defer r.Close(ctx)
	compiled, err := r.CompileModule(experimental.WithFunctionListenerFactory(ctx, deadlineListener{}), wasm)
	if err != nil {
		return nil, err
	}
	if len(compiled.ImportedMemories()) > 0 {
		return nil, nil
	}
	stubs := map[string]wazero.HostModuleBuilder{}
	for _, f := range compiled.ImportedFunctions() {
		module, name, _ := f.Import()
		b, ok := stubs[module]
		if !ok {
			b = r.NewHostModuleBuilder(module)
			stubs[module] = b
		}
		results := len(f.ResultTypes())
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) {
			clear(stack[:results])
		}), f.ParamTypes(), f.ResultTypes()).Export(name)
	}
	for module, b := range stubs {
		if _, err := b.Instantiate(ctx); err != nil {
			return nil, fmt.Errorf("stubs of %s: %v", module, err)
		}
	}
	// Imports of tables and globals are left unstubbed: such a module
	// fails to instantiate, the same way before and after.
	runCtx, cancel := context.WithTimeout(ctx, runDeadline)
	defer cancel()
	mod, err := r.InstantiateModule(runCtx, compiled, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		return []exportRun{{name: "(start)", result: trapMessage(err), timedOut: runCtx.Err() != nil}}, nil
	}
	var runs []exportRun
	names := make([]string, 0, len(compiled.ExportedFunctions()))
	for name := range compiled.ExportedFunctions() {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		f := mod.ExportedFunction(name)
		if f == nil {
			continue
		}
		if mod.IsClosed() {
			break
		}
		res, err := f.Call(runCtx, make([]uint64, len(f.Definition().ParamTypes()))...)
		run := exportRun{name: name, result: fmt.Sprint(res)}
		if err != nil {
			run.result, run.timedOut = trapMessage(err), runCtx.Err() != nil
		}
		runs = append(runs, run)
		if run.timedOut {
			break
		}
	}
	return runs, nil
}

// functionIndex matches a function's index in a trap's message.
var functionIndex = regexp.MustCompile(`function\[\d+\]`)

// trapMessage is err without its wasm stack trace and its function
// indices, which a pass renumbers.
func trapMessage(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\nwasm stack trace:")
	return "trap: " + functionIndex.ReplaceAllString(msg, "function[]")
}

// passSeeds are the hand-assembled modules of the sandbox's tests: valid
// and invalid, with imports, tables, element segments and names.
func passSeeds() [][]byte {
	seeds := [][]byte{loopModule(), wasmtest.RecursionModule(), wasmtest.RunModule(), wasmtest.SpinModule(), wasmtest.ImportsModule(),
		indirectModule(0, 0), indirectModule(0, 4), indirectModule(1, 0), plugintest.PollSleeper("spin", true)}
	for _, name := range slices.Sorted(maps.Keys(wasmtest.InvalidModules)) {
		seeds = append(seeds, wasmtest.InvalidModules[name])
	}
	return seeds
}

// FuzzModulePasses holds the passes' properties (checkPasses) on arbitrary
// modules, seeded with the tests' modules and a sample of wazero's
// specification tests.
func FuzzModulePasses(f *testing.F) {
	for _, seed := range passSeeds() {
		f.Add(seed)
	}
	files, err := specCorpus()
	if err != nil {
		f.Fatal(err)
	}
	for i := 0; i < len(files); i += 97 { // a sample: 1 in 97
		b, err := os.ReadFile(files[i])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		c := newPassChecker(t, false)
		if _, err := c.checkPasses(wasm); err != nil {
			t.Fatal(err)
		}
	})
}

// specCorpus returns the binary modules of wazero's specification tests
// (WebAssembly 1.0 and 2.0, the features the sandbox compiles), from the
// copy of the wazero module the build uses.
func specCorpus() ([]string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/tetratelabs/wazero").Output()
	if err != nil {
		return nil, fmt.Errorf("finding wazero in the module cache: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "internal", "integration_test", "spectest")
	var files []string
	for _, v := range []string{"v1", "v2"} {
		m, err := filepath.Glob(filepath.Join(dir, v, "testdata", "*.wasm"))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	if len(files) < 1000 {
		return nil, fmt.Errorf("%d specification test modules in %s, expected thousands", len(files), dir)
	}
	return files, nil
}

// TestSpecCorpusThroughThePasses runs every module of wazero's
// specification tests through the passes (checkPasses): none made valid
// from invalid, none broken, none behaving otherwise.
// It takes half a minute, several under the race detector, which has
// nothing to find in code that runs on one goroutine: make test runs it
// without.
func TestSpecCorpusThroughThePasses(t *testing.T) {
	if plugintest.RaceEnabled {
		t.Skip("run without the race detector (make test does)")
	}
	files, err := specCorpus()
	if err != nil {
		t.Fatal(err)
	}
	c := newPassChecker(t, true)
	var valid, invalid, ran int
	refused := map[string]int{}
	for _, file := range files {
		wasm, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		o, err := c.checkPasses(wasm)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(file), err)
		}
		if o.valid {
			valid++
		} else {
			invalid++
		}
		ran += o.ran
		for _, p := range o.refused {
			refused[p]++
		}
	}
	t.Logf("%d modules: %d valid, %d invalid; %d exports compared before and after; refused for a cap: %v", len(files), valid, invalid, ran, refused)
	if valid < 1000 || invalid < 100 || ran < 1000 {
		t.Errorf("the corpus held %d valid and %d invalid modules and %d exports compared; expected thousands, hundreds and thousands", valid, invalid, ran)
	}
}
