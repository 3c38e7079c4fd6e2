//go:build !windows

package mcp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/zqagent/sidecar/protocol"
)

type change struct {
	added, removed, changed []string
	warnings                []protocol.MCPWarning
}

func watchChanges(t *testing.T, m *Manager, path string) <-chan change {
	t.Helper()
	ch := make(chan change, 16)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := m.Watch(ctx, path, func(a, r, c []string, w []protocol.MCPWarning) { ch <- change{a, r, c, w} }); err != nil {
		t.Fatal(err)
	}
	return ch
}

func nextChange(t *testing.T, ch <-chan change) change {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(20 * time.Second):
		t.Fatal("no change reported")
	}
	return change{}
}

func TestWatchReloads(t *testing.T) {
	ws := t.TempDir()
	path := DefaultConfigPath(ws)
	bin := testServerBinary(t)
	one := []ServerConfig{{Name: "w1", Type: TypeStdio, Command: []string{bin}, Enabled: true}}
	if err := SaveConfigFile(path, one); err != nil {
		t.Fatal(err)
	}
	cfgs, _, err := LoadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	eager := false
	m, reg, _ := newTestManager(t, WithBuiltinConfigs(cfgs), Options{Workspace: ws, Lazy: LazyOptions{Enabled: &eager}})
	if _, failed := m.ConnectAll(context.Background()); len(failed) > 0 {
		t.Fatal(failed)
	}
	changes := watchChanges(t, m, path)

	// The manager's own save of the same servers reports nothing; adding a
	// server (atomic save) reports it and connects it.
	if err := SaveConfigFile(path, m.Configs()); err != nil {
		t.Fatal(err)
	}
	two := append(m.Configs(), ServerConfig{Name: "w2", Type: TypeStdio, Command: []string{bin}, Enabled: true})
	if err := SaveConfigFile(path, two); err != nil {
		t.Fatal(err)
	}
	c := nextChange(t, changes)
	if !slices.Equal(c.added, []string{"w2"}) || len(c.removed)+len(c.changed) > 0 {
		t.Fatalf("change = %+v", c)
	}
	if _, ok := reg.Lookup("mcp__w2__echo"); !ok || stateOf(m, "w2").State != StateConnected {
		t.Fatalf("w2 not connected: %v", reg.Names())
	}

	// A hand edit in place: w1 removed, w2 disabled.
	hand := `{"servers":[{"name":"w2","command":["` + bin + `"],"enabled":false}]}`
	if err := os.WriteFile(path, []byte(hand), 0o600); err != nil {
		t.Fatal(err)
	}
	c = nextChange(t, changes)
	if !slices.Equal(c.removed, []string{"w1"}) || !slices.Equal(c.changed, []string{"w2"}) {
		t.Fatalf("change = %+v", c)
	}
	if _, ok := reg.Lookup("mcp__w2__echo"); ok || stateOf(m, "w2").State != StateDisabled || stateOf(m, "w1").Name != "" {
		t.Fatalf("after edit: %v %+v", reg.Names(), m.Status())
	}

	// A broken file is reported and changes nothing.
	if err := os.WriteFile(path, []byte(`{"servers":[`), 0o600); err != nil {
		t.Fatal(err)
	}
	c = nextChange(t, changes)
	if len(c.warnings) == 0 || c.warnings[0].File != path || len(m.Status()) != 2 {
		t.Fatalf("broken file: %+v, %+v", c, m.Status())
	}
}

func TestWatchCreatesDirLater(t *testing.T) {
	ws := t.TempDir()
	path := DefaultConfigPath(ws)
	m, reg, _ := newTestManager(t, nil, Options{Workspace: ws})
	changes := watchChanges(t, m, path)
	if err := os.Mkdir(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `[{"name":"late","command":["` + testServerBinary(t) + `"]}]`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c := nextChange(t, changes)
	if !slices.Contains(c.added, "late") {
		t.Fatalf("change = %+v", c)
	}
	if _, ok := reg.Lookup("mcp__late__echo"); !ok {
		t.Fatalf("late not connected: %v", reg.Names())
	}
}
