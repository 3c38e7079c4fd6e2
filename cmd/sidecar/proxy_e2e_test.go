package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeSOCKS5 is a SOCKS5 proxy that answers every CONNECT itself with an
// HTTP response: the test sees what went through the proxy, and nothing
// leaves the machine.
type fakeSOCKS5 struct {
	ln net.Listener
	wg sync.WaitGroup

	mu   sync.Mutex
	seen []string // "host:port/path" of each proxied request
}

func newFakeSOCKS5(t *testing.T) *fakeSOCKS5 {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &fakeSOCKS5{ln: ln}
	f.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.wg.Go(func() { f.serve(c) })
		}
	})
	t.Cleanup(func() { ln.Close(); f.wg.Wait() })
	return f
}

func (f *fakeSOCKS5) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	head := make([]byte, 2)
	if _, err := io.ReadFull(br, head); err != nil || head[0] != 5 {
		return
	}
	if _, err := io.ReadFull(br, make([]byte, head[1])); err != nil {
		return
	}
	_, _ = c.Write([]byte{5, 0}) // no authentication
	req := make([]byte, 4)
	if _, err := io.ReadFull(br, req); err != nil || req[1] != 1 {
		return
	}
	var host string
	switch req[3] {
	case 1:
		ip := make([]byte, 4)
		if _, err := io.ReadFull(br, ip); err != nil {
			return
		}
		host = net.IP(ip).String()
	case 3:
		n, err := br.ReadByte()
		if err != nil {
			return
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(br, name); err != nil {
			return
		}
		host = string(name)
	default:
		return
	}
	port := make([]byte, 2)
	if _, err := io.ReadFull(br, port); err != nil {
		return
	}
	_, _ = c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0})
	hr, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	target := net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port)))) + hr.URL.Path
	f.mu.Lock()
	f.seen = append(f.seen, target)
	f.mu.Unlock()
	ctype, body := "text/html", "<html><body><p>fetched through the proxy</p></body></html>"
	switch {
	case strings.HasSuffix(hr.URL.Path, "/search"):
		ctype, body = "application/json", `{"results":[{"title":"Proxied result","url":"https://example.org/r","content":"found through the proxy"}]}`
	case strings.HasSuffix(hr.URL.Path, ".png"):
		ctype, body = "image/png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
	}
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", ctype, len(body), body)
}

func (f *fakeSOCKS5) targets() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// TestE2ESOCKS5ProxyCarriesNetworkTools: with SOCKS5_PROXY set, web_fetch,
// web_search (the configured SearXNG) and the media tool's URL download all
// go through the proxy, not only the model's requests. The targets are
// public addresses that are never dialed directly: the fake proxy answers.
func TestE2ESOCKS5ProxyCarriesNetworkTools(t *testing.T) {
	px := newFakeSOCKS5(t)
	script := writeScript(t,
		calls("", toolCall("f1", "web_fetch", map[string]any{"url": "http://1.2.3.4/page"})),
		calls("", toolCall("s1", "web_search", map[string]any{"query": "zqagent"})),
		calls("", toolCall("m1", "media", map[string]any{"url": "http://1.2.3.4:8080/dot.png"})),
		text("all fetched"),
	)
	e := &env{dataDir: t.TempDir() + "/data", projDir: t.TempDir()}
	e.p = spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+script, "SOCKS5_PROXY=socks5://"+px.ln.Addr().String())
	e.c = e.p.connect(t)
	require.NoError(t, e.c.Call(tctx(t), "search.set", map[string]any{"kind": "searxng", "baseUrl": "http://1.2.3.4:8888"}, nil))
	pid, err := e.c.OpenProject(tctx(t), e.projDir)
	require.NoError(t, err)
	e.sid, err = e.c.CreateSession(tctx(t), pid, map[string]any{"mode": "auto", "vcs": "off"})
	require.NoError(t, err)
	_, err = e.c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	_, err = e.c.StartTurn(tctx(t), e.sid, "fetch, search and attach")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "turn_end")
	status := map[string]string{}
	for _, ev := range ofType(evs, "tool_finished") {
		d := dataOf(t, ev)
		status[d["name"].(string)] = fmt.Sprint(d["status"], ": ", d["result_preview"])
	}
	for _, name := range []string{"web_fetch", "web_search", "media"} {
		require.True(t, strings.HasPrefix(status[name], "ok: "), "%s: %s", name, status[name])
	}
	require.Contains(t, status["web_fetch"], "fetched through the proxy")
	require.Contains(t, status["web_search"], "Proxied result")
	require.ElementsMatch(t, []string{"1.2.3.4:80/page", "1.2.3.4:8888/search", "1.2.3.4:8080/dot.png"}, px.targets())
}
