package mcp

import (
	"regexp"
	"strings"
	"testing"
)

var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolName(t *testing.T) {
	cases := []struct{ server, tool, want string }{
		{"github", "create_issue", "mcp__github__create_issue"},
		{"my server", "do.thing/now", "mcp__my_server__do_thing_now"},
		{"서버", "도구", "mcp________"},
		{"", "", "mcp______"},
	}
	for _, c := range cases {
		if got := ToolName(c.server, c.tool); got != c.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
	}
	long := strings.Repeat("s", 50)
	a := ToolName(long, strings.Repeat("t", 60)+"a")
	b := ToolName(long, strings.Repeat("t", 60)+"b")
	if len(a) != 64 || len(b) != 64 || a == b || !validName.MatchString(a) || !strings.HasPrefix(a, "mcp__"+strings.Repeat("s", 20)+"__ttt") {
		t.Fatalf("long names: %q %q", a, b)
	}
	if again := ToolName(long, strings.Repeat("t", 60)+"a"); again != a {
		t.Fatalf("not deterministic: %q then %q", a, again)
	}
}

func TestAssignNamesCollisions(t *testing.T) {
	keys := []toolKey{{"b", "x.y"}, {"a", "tool"}, {"b", "x_y"}, {"b", "x-y"}, {"b", "x y"}}
	got := assignNames(keys)
	want := map[toolKey]string{
		{"a", "tool"}: "mcp__a__tool",
		{"b", "x y"}:  "mcp__b__x_y",
		{"b", "x-y"}:  "mcp__b__x-y",
		{"b", "x.y"}:  "mcp__b__x_y_2",
		{"b", "x_y"}:  "mcp__b__x_y_3",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%v = %q, want %q", k, got[k], w)
		}
	}
	// Order of input does not matter.
	rev := []toolKey{keys[4], keys[3], keys[2], keys[1], keys[0]}
	for k, v := range assignNames(rev) {
		if got[k] != v {
			t.Fatalf("order-dependent: %v = %q vs %q", k, v, got[k])
		}
	}
	// Collisions of names at the length limit stay within it.
	long := strings.Repeat("s", 20)
	tool := strings.Repeat("t", 37)
	res := assignNames([]toolKey{{long, tool}, {long, tool[:36] + "."}, {long, tool[:36] + "/"}})
	seen := map[string]bool{}
	for _, n := range res {
		if !validName.MatchString(n) || seen[n] {
			t.Fatalf("bad or duplicate name %q in %v", n, res)
		}
		seen[n] = true
	}
}
