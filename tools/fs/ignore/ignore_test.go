package ignore

import "testing"

func TestRules(t *testing.T) {
	var root *Rules
	r := root.Child("", []byte("*.log\nbuild/\n/top.txt\n# comment\n\n[\n"))
	sub := r.Child("src", []byte("gen/\n!keep.log\n"))
	tests := []struct {
		rules *Rules
		rel   string
		dir   bool
		want  bool
	}{
		{r, "a.log", false, true},
		{r, "x/y/a.log", false, true},
		{r, "build", true, true},
		{r, "build", false, false},
		{r, "x/build", true, true},
		{r, "top.txt", false, true},
		{r, "x/top.txt", false, false},
		{r, "main.go", false, false},
		{sub, "src/gen", true, true},
		{sub, "gen", true, false},
		{sub, "src/a.log", false, true},
		{sub, "src/main.go", false, false},
		{nil, "a.log", false, false},
	}
	for _, tt := range tests {
		if got := tt.rules.Ignored(tt.rel, tt.dir); got != tt.want {
			t.Errorf("Ignored(%q, dir=%v) = %v, want %v", tt.rel, tt.dir, got, tt.want)
		}
	}
	if r.Child("x", nil) != r || r.Child("x", []byte(" \n")) != r {
		t.Error("empty .gitignore should not add a level")
	}
}

func TestAlwaysSkippedHidden(t *testing.T) {
	for name, want := range map[string]bool{".git": true, "node_modules": true, "src": false, ".github": false} {
		if AlwaysSkipped(name) != want {
			t.Errorf("AlwaysSkipped(%q) != %v", name, want)
		}
	}
	for name, want := range map[string]bool{".env": true, "a": false, ".": false, "..": false} {
		if Hidden(name) != want {
			t.Errorf("Hidden(%q) != %v", name, want)
		}
	}
}
