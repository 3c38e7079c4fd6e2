package mcp

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/tools"
)

func BenchmarkParseConfig(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"mcpServers":{`)
	for i := range 20 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"s%d":{"command":"npx -y @scope/server-%d --root '/data dir'","env":{"TOKEN":"${HOME}"},"x":%d}`, i, i, i)
	}
	sb.WriteString(`}}`)
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if cfgs, _ := ParseConfig(data, "bench"); len(cfgs) != 20 {
			b.Fatal(len(cfgs))
		}
	}
}

func BenchmarkAssignNames500(b *testing.B) {
	var keys []toolKey
	for i := range 500 {
		keys = append(keys, toolKey{fmt.Sprintf("server-%d", i%10), fmt.Sprintf("tool.%d", i)})
	}
	for b.Loop() {
		assignNames(keys)
	}
}

func BenchmarkLazySearch500(b *testing.B) {
	on := true
	m := NewManager(nil, Options{Lazy: LazyOptions{Enabled: &on}})
	defer m.CloseAll()
	for i := range 500 {
		r := toolRef{name: fmt.Sprintf("mcp__s%d__tool_%d", i%10, i), server: fmt.Sprintf("s%d", i%10), tool: fmt.Sprintf("tool_%d", i),
			desc: fmt.Sprintf("Does thing %d with widgets and gadgets.", i), schema: []byte(`{"type":"object","properties":{}}`)}
		m.index[r.name] = r
		m.names = append(m.names, r.name)
	}
	for b.Loop() {
		if len(m.Search("widgets thing 42", 8)) == 0 {
			b.Fatal("no match")
		}
	}
}

func BenchmarkStdioCall(b *testing.B) {
	if runtime.GOOS == "windows" {
		b.Skip("the test server's helpers are unix-only")
	}
	off := false
	m := NewManager([]ServerConfig{stdioConfig(b, "bench")}, Options{Lazy: LazyOptions{Enabled: &off}, Logger: quietLogger(), TrustAll: true})
	defer m.CloseAll()
	reg := tools.NewRegistry()
	m.Attach(reg)
	if err := m.Connect(context.Background(), "bench"); err != nil {
		b.Fatal(err)
	}
	spec, _ := reg.Lookup("mcp__bench__echo")
	call := tools.Call{Name: spec.Name, Args: []byte(`{"text":"x"}`)}
	for b.Loop() {
		if _, err := spec.Handler(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
}
