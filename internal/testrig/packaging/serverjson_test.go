package packaging

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// root is the repository's root, from this package's folder.
const root = "../../.."

// serverJSON is what the test reads of ../../../server.json.
type serverJSON struct {
	Schema   string `json:"$schema"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Packages []struct {
		RegistryType string `json:"registryType"`
		Identifier   string `json:"identifier"`
	} `json:"packages"`
}

// readServerJSON returns server.json raw and decoded.
func readServerJSON(t *testing.T) ([]byte, serverJSON) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s serverJSON
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("server.json: %v", err)
	}
	return raw, s
}

// TestServerJSONIsValid validates server.json against the MCP Registry's
// published schema (testdata/server.schema.json, whose README says where
// it comes from), formats included, offline.
func TestServerJSONIsValid(t *testing.T) {
	raw, s := readServerJSON(t)
	schemaRaw, err := os.ReadFile(filepath.Join("testdata", "server.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaRaw))
	if err != nil {
		t.Fatal(err)
	}
	id := schemaDoc.(map[string]any)["$id"].(string)
	if s.Schema != id {
		t.Fatalf("server.json's $schema is %q; the vendored schema is %q", s.Schema, id)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(id, schemaDoc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(id)
	if err != nil {
		t.Fatalf("compiling the registry's schema: %v", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(doc); err != nil {
		t.Fatalf("server.json does not follow the registry's schema:\n%v", err)
	}
	// The schema bites: a name without its namespace is refused.
	doc.(map[string]any)["name"] = "mcphost"
	if sch.Validate(doc) == nil {
		t.Fatal("the schema accepted a server name without a namespace")
	}
}

// TestServerJSONNamesTheImage checks what the schema cannot: the OCI
// package is the image the Dockerfile builds, of the same version, and the
// image carries the label by which the registry checks who owns it.
func TestServerJSONNamesTheImage(t *testing.T) {
	_, s := readServerJSON(t)
	if len(s.Packages) != 1 || s.Packages[0].RegistryType != "oci" {
		t.Fatalf("server.json's packages = %+v, want the one OCI image", s.Packages)
	}
	if ref := s.Packages[0].Identifier; !strings.HasSuffix(ref, ":"+s.Version) {
		t.Errorf("the image %s is not tagged with the version %s", ref, s.Version)
	}
	dockerfile, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	label := `LABEL io.modelcontextprotocol.server.name="` + s.Name + `"`
	if !strings.Contains(string(dockerfile), label) {
		t.Errorf("the Dockerfile lacks %s: the registry checks it to accept the image", label)
	}
}
