package vcs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRefComponent(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"", "default"},
		{"tenant-42-session-7", "tenant-42-session-7"},
		{"9b2f0c3e-1d2a-4c5b-8e6f-7a8b9c0d1e2f", "9b2f0c3e-1d2a-4c5b-8e6f-7a8b9c0d1e2f"},
		{"a.b_c", "a.b_c"},
	} {
		require.Equal(t, tc.want, refComponent(tc.id))
	}
	for _, id := range []string{"a/b", "a b", "..", ".hidden", "x.lock", "a..b", "x_reserved", "-flag", "ünï", "a@{1}", strings.Repeat("z", 200)} {
		c := refComponent(id)
		require.True(t, validComponent(c) || strings.HasPrefix(c, "x_"), c)
		require.NotEqual(t, id, c)
		require.NotContains(t, c, "/")
		require.NotContains(t, c, "..")
		require.LessOrEqual(t, len(c), 80)
	}
	require.NotEqual(t, refComponent("a/b"), refComponent("a b"), "distinct ids never share refs")
	require.Equal(t, "refs/agent/s1", AgentRef("s1"))
}

func TestTurnNumber(t *testing.T) {
	for _, tc := range []struct {
		ref string
		n   int
		ok  bool
	}{
		{"refs/agent/s/turns/1", 1, true},
		{"refs/agent/s/turns/12", 12, true},
		{"refs/agent/s/turns/0", 0, false},
		{"refs/agent/s/turns/01", 0, false},
		{"refs/agent/s/turns/x", 0, false},
		{"refs/agent/s/head", 0, false},
		{"refs/agent/other/turns/1", 0, false},
	} {
		n, ok := turnNumber("s", tc.ref)
		require.Equal(t, tc.ok, ok, tc.ref)
		require.Equal(t, tc.n, n, tc.ref)
	}
}

func TestParseDiffTree(t *testing.T) {
	c1 := strings.Repeat("a", 40)
	c2 := strings.Repeat("b", 40)
	out := c1 + "\x00M\x00src/app.go\x00R087\x00old.txt\x00new.txt\x00A\x00" + c2 + "\x00D\x00gone\x00" +
		c2 + "\x00T\x00link\x00C100\x00x\x00y\x00"
	got := parseDiffTree(out)
	require.Equal(t, []FileChange{
		{Path: "src/app.go", Status: "M"},
		{Path: "new.txt", Status: "R", OldPath: "old.txt"},
		{Path: c2, Status: "A"},
		{Path: "gone", Status: "D"},
	}, got[c1], "a path that looks like a commit id stays a path")
	require.Equal(t, []FileChange{{Path: "link", Status: "M"}, {Path: "y", Status: "A"}}, got[c2])
}

func TestParseRaw(t *testing.T) {
	z := strings.Repeat("0", 40)
	o := strings.Repeat("1", 40)
	out := ":100644 100755 " + o + " " + o + " M\x00run.sh\x00:000000 100644 " + z + " " + o + " A\x00new file\x00"
	require.Equal(t, []change{
		{path: "run.sh", status: 'M', mode: "100755", oid: o, curMode: "100644"},
		{path: "new file", status: 'A', mode: "100644", oid: o, curMode: "000000"},
	}, parseRaw(out))
}

func FuzzRefComponent(f *testing.F) {
	for _, s := range []string{"", "s1", "a/b", "..", "x.lock", "ü", "x_1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		c := refComponent(id)
		if c == "" || strings.ContainsAny(c, "/ ~^:?*[\\\x00\x7f") || strings.Contains(c, "..") ||
			strings.HasPrefix(c, ".") || strings.HasSuffix(c, ".") || strings.HasSuffix(c, ".lock") || strings.Contains(c, "@{") {
			t.Fatalf("refComponent(%q) = %q is not a valid ref component", id, c)
		}
		if c != id && id != "" && !strings.HasPrefix(c, "x_") {
			t.Fatalf("refComponent(%q) = %q changed the id without hashing it", id, c)
		}
		for _, r := range c {
			if r < 0x20 || r > 0x7e {
				t.Fatalf("refComponent(%q) = %q has a control or non-ASCII byte", id, c)
			}
		}
	})
}

func FuzzParseDiffTree(f *testing.F) {
	f.Add(strings.Repeat("a", 40) + "\x00M\x00x\x00R100\x00a\x00b\x00")
	f.Add("\x00\x00R\x00")
	f.Fuzz(func(t *testing.T, out string) {
		for c, files := range parseDiffTree(out) {
			for _, fc := range files {
				switch fc.Status {
				case "A", "M", "D", "R":
				default:
					t.Fatalf("commit %q: status %q", c, fc.Status)
				}
			}
		}
		for _, ch := range parseRaw(out) {
			if ch.status == 0 {
				t.Fatal("change without status")
			}
		}
	})
}
