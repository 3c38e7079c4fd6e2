package mcp

import (
	"context"
	"slices"
	"testing"

	"github.com/zqagent/sidecar/protocol"
)

// userServers are the names of the servers the file lists (no presets).
func userServers(m *Manager) []string {
	var out []string
	for _, c := range m.Configs() {
		if !c.auto {
			out = append(out, c.Name)
		}
	}
	return out
}

// A reload by the watcher (its timer fired for an earlier save) that lands
// between mcp.add's AddConfig and its save would read the file without the
// new server and drop it, and the save would then write the file without
// it; the same for mcp.remove, which would get the server back. Edit puts
// the reload off until the save, which it then reads.
func TestReloadDuringEditKeepsTheEdit(t *testing.T) {
	ws := t.TempDir()
	path := DefaultConfigPath(ws)
	if err := SaveConfigFile(path, []ServerConfig{{Name: "a", Type: TypeStdio, Command: []string{"a-server"}}}); err != nil {
		t.Fatal(err)
	}
	cfgs, _, err := LoadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, _, _ := newTestManager(t, WithBuiltinConfigs(cfgs), Options{Workspace: ws})
	ctx := context.Background()
	var changes [][]string
	onChange := func(added, removed, changed []string, _ []protocol.MCPWarning) {
		changes = append(changes, slices.Concat(added, removed, changed))
	}
	// edit runs op and saves, with a reload of the file as it was before
	// the save in between.
	edit := func(op func() error) {
		t.Helper()
		err := m.Edit(func() error {
			if err := op(); err != nil {
				return err
			}
			if m.reload(ctx, path, onChange) {
				t.Error("a reload applied the file in the middle of an edit")
			}
			return SaveConfigFile(path, m.Configs())
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check := func(want ...string) {
		t.Helper()
		if got := userServers(m); !slices.Equal(got, want) {
			t.Fatalf("servers = %v, want %v", got, want)
		}
		file, _, err := LoadConfigFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range file {
			names = append(names, c.Name)
		}
		if !slices.Equal(names, want) {
			t.Fatalf("file servers = %v, want %v", names, want)
		}
		// The reload put off reads the saved file: nothing changes.
		if !m.reload(ctx, path, onChange) {
			t.Fatal("reload put off after the edit")
		}
		if got := userServers(m); !slices.Equal(got, want) || len(changes) > 0 {
			t.Fatalf("after the reload: servers = %v, changes %v; want %v, none", got, changes, want)
		}
	}

	edit(func() error {
		return m.AddConfig(ctx, ServerConfig{Name: "b", Type: TypeStdio, Command: []string{"b-server"}})
	})
	check("a", "b")
	edit(func() error { return m.RemoveConfig(ctx, "a") })
	check("b")
	edit(func() error {
		return m.UpdateConfig(ctx, "b", ServerConfig{Name: "c", Type: TypeStdio, Command: []string{"c-server"}})
	})
	check("c")
}
