package protocol_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/protocol/internal/schemagen"
)

// TestSchemaCurrent fails when schema.json is not what the types generate:
// a Go type changed without `go generate ./protocol`.
func TestSchemaCurrent(t *testing.T) {
	want, err := schemagen.Build(".")
	require.NoError(t, err)
	got, err := os.ReadFile("schema.json")
	require.NoError(t, err)
	if string(got) != string(want) {
		t.Fatalf("protocol/schema.json is stale: a protocol type changed; run `go generate ./protocol` and commit schema.json")
	}
	require.Equal(t, want, protocol.Schema, "the embedded schema is the file")
}

func schemaMethods(t *testing.T) []string {
	var d struct {
		Methods map[string]json.RawMessage `json:"methods"`
	}
	require.NoError(t, json.Unmarshal(protocol.Schema, &d))
	var out []string
	for m := range d.Methods {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// docMethods are the methods ui-protocol.md documents: a "### `name`"
// heading each in §5, and the index's links.
func docMethods(t *testing.T) (headings, index []string) {
	b, err := os.ReadFile("../ui-protocol.md")
	require.NoError(t, err)
	doc := string(b)
	start := regexp.MustCompile(`(?m)^## 5\. Methods`).FindStringIndex(doc)
	end := regexp.MustCompile(`(?m)^## 6\. `).FindStringIndex(doc)
	require.NotNil(t, start, "ui-protocol.md has a §5 Methods")
	require.NotNil(t, end, "ui-protocol.md has a §6")
	sec := doc[start[0]:end[0]]
	for _, m := range regexp.MustCompile("(?m)^### `([a-zA-Z.]+)`").FindAllStringSubmatch(sec, -1) {
		headings = append(headings, m[1])
	}
	link := regexp.MustCompile("\\[`([a-zA-Z.]+)`\\]\\(#[a-z]+\\)")
	for _, line := range regexp.MustCompile(`(?m)^- \*\*.*$`).FindAllString(sec, -1) { // the index
		for _, m := range link.FindAllStringSubmatch(line, -1) {
			index = append(index, m[1])
		}
	}
	slices.Sort(headings)
	slices.Sort(index)
	return slices.Compact(headings), slices.Compact(index)
}

// TestDocMethodsMatchSchema checks ui-protocol.md's method reference against
// the schema both ways: every method has its section and index entry, and
// nothing is documented that the schema does not have.
func TestDocMethodsMatchSchema(t *testing.T) {
	schema := schemaMethods(t)
	headings, index := docMethods(t)
	require.Equal(t, schema, headings, "ui-protocol.md §5's ### sections vs schema.json's methods")
	require.Equal(t, schema, index, "ui-protocol.md §5's index vs schema.json's methods")
}

// TestRegistryNames: the registry names each method once.
func TestRegistryNames(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range protocol.Methods() {
		require.False(t, seen[m.Name], m.Name)
		seen[m.Name] = true
		require.NotNil(t, m.Params, m.Name)
		require.NotNil(t, m.Result, m.Name)
	}
}
