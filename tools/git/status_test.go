package git

import (
	"reflect"
	"testing"
)

func TestParseStatus(t *testing.T) {
	in := "# branch.oid 1234abcd\x00# branch.head feature\x00# branch.upstream origin/feature\x00# branch.ab +2 -3\x00" +
		"1 .M N... 100644 100644 100644 aaa aaa file with spaces.txt\x00" +
		"2 R. N... 100644 100644 100644 aaa aaa R100 new name.go\x00old name.go\x00" +
		"u UU N... 100644 100644 100644 100644 a b c conflict.txt\x00" +
		"? untracked dir/x\x00" +
		"! ignored.log\x00"
	got := ParseStatus([]byte(in))
	want := Status{
		Branch: "feature", Head: "1234abcd", Upstream: "origin/feature", Ahead: 2, Behind: 3,
		Entries: []StatusEntry{
			{Path: "file with spaces.txt", Unstaged: "modified", State: "changed"},
			{Path: "new name.go", OrigPath: "old name.go", Staged: "renamed", State: "renamed"},
			{Path: "conflict.txt", Staged: "unmerged", Unstaged: "unmerged", State: "unmerged"},
			{Path: "untracked dir/x", State: "untracked"},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if st := ParseStatus(nil); !st.Clean || st.Entries == nil {
		t.Fatalf("empty status %+v", st)
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("# branch.head main\x001 M. N... 1 1 1 a a p\x002 R. N... 1 1 1 a a R50 n\x00o\x00? u\x00"))
	f.Add([]byte("# branch.ab +x -\x00u UU\x00 2 R"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st := ParseStatus(b)
		if st.Clean != (len(st.Entries) == 0) {
			t.Fatal("Clean disagrees with Entries")
		}
		for _, e := range st.Entries {
			if e.State == "" {
				t.Fatalf("entry without state: %+v", e)
			}
		}
	})
}

func TestParseLog(t *testing.T) {
	b := []byte("h1\x00s1\x00A\x00a@x\x002024\x00subj one\x1e\nh2\x00s2\x00B\x00b@x\x002023\x00two\x1e\nh3\x00cut")
	got := parseLog(b)
	if len(got) != 2 || got[0].Subject != "subj one" || got[1].Hash != "h2" {
		t.Fatalf("parseLog = %+v", got)
	}
}
