package protocol_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
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

// TestDocParamsMatchSchema checks each method's "Params: `{…}`" and
// "Result: `{…}`" in ui-protocol.md against the schema: the same top-level
// members, and a member marked `?` exactly when the schema does not
// require it. (Results written in prose, such as "the session object", are
// not checked here.)
func TestDocParamsMatchSchema(t *testing.T) {
	var d struct {
		Methods map[string]struct {
			Params, Result struct {
				Ref string `json:"$ref"`
			}
		} `json:"methods"`
		Defs map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(protocol.Schema, &d))
	b, err := os.ReadFile("../ui-protocol.md")
	require.NoError(t, err)
	doc := string(b)
	sec := doc[strings.Index(doc, "## 5. Methods"):strings.Index(doc, "## 6. ")]
	heading := regexp.MustCompile("(?m)^### `([a-zA-Z.]+)`\n")
	locs := heading.FindAllStringSubmatchIndex(sec, -1)
	checked := 0
	for i, loc := range locs {
		method := sec[loc[2]:loc[3]]
		end := len(sec)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		body := sec[loc[1]:end]
		m, ok := d.Methods[method]
		if !ok {
			continue
		}
		for _, part := range []struct{ label, ref string }{{"Params: `", m.Params.Ref}, {"Result: `", m.Result.Ref}} {
			at := strings.Index(body, part.label+"{")
			if at < 0 {
				continue
			}
			obj := body[at+len(part.label):]
			members, ok := topMembers(obj)
			require.True(t, ok, "%s: %s is not a closed object", method, part.label)
			def := d.Defs[strings.TrimPrefix(part.ref, "#/$defs/")]
			var want []string
			for name := range def.Properties {
				mark := "?"
				if slices.Contains(def.Required, name) {
					mark = ""
				}
				want = append(want, name+mark)
			}
			slices.Sort(want)
			slices.Sort(members)
			require.Equal(t, want, members, "ui-protocol.md %s %s vs schema %s", method, strings.TrimSuffix(part.label, ": `"), part.ref)
			checked++
		}
	}
	require.Greater(t, checked, 50, "the doc's params and results are found")
}

// topMembers returns the top-level member names of a doc object such as
// "{sessionId, afterSeq?, response: {outcome}}" (with "?" kept).
func topMembers(s string) ([]string, bool) {
	depth := 0
	var cur strings.Builder
	var out []string
	flush := func() {
		if m := memberName.FindStringSubmatch(cur.String()); m != nil {
			out = append(out, m[1]+m[2])
		}
		cur.Reset()
	}
	for _, r := range s[1:] {
		switch {
		case r == '`':
			return nil, false
		case strings.ContainsRune("{[(", r):
			depth++
		case strings.ContainsRune("}])", r):
			if depth == 0 {
				flush()
				return out, true
			}
			depth--
		case r == ',' && depth == 0:
			flush()
			continue
		}
		if depth == 0 {
			cur.WriteRune(r)
		}
	}
	return nil, false
}

var memberName = regexp.MustCompile(`^\s*([a-zA-Z0-9_]+)(\??)`)
