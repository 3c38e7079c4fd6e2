package openai

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// socksServer is a minimal SOCKS5 server (no auth, CONNECT only) on loopback.
type socksServer struct {
	ln      net.Listener
	wg      sync.WaitGroup
	mu      sync.Mutex // guards conns
	conns   []net.Conn
	connect atomic.Int32 // CONNECT requests served
}

func startSocks(t *testing.T) *socksServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &socksServer{ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.track(c)
			s.wg.Go(func() { s.serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *socksServer) track(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns = append(s.conns, c)
}

func (s *socksServer) serve(c net.Conn) {
	defer c.Close()
	head := make([]byte, 2)
	if _, err := io.ReadFull(c, head); err != nil || head[0] != 5 {
		return
	}
	if _, err := io.ReadFull(c, make([]byte, head[1])); err != nil {
		return
	}
	c.Write([]byte{5, 0})
	req := make([]byte, 4)
	if _, err := io.ReadFull(c, req); err != nil || req[1] != 1 {
		return
	}
	var host string
	switch req[3] {
	case 1:
		ip := make([]byte, 4)
		io.ReadFull(c, ip)
		host = net.IP(ip).String()
	case 3:
		n := make([]byte, 1)
		io.ReadFull(c, n)
		name := make([]byte, n[0])
		io.ReadFull(c, name)
		host = string(name)
	default:
		return
	}
	pb := make([]byte, 2)
	io.ReadFull(c, pb)
	up, err := net.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(pb)))))
	if err != nil {
		c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
		return
	}
	s.track(up)
	s.connect.Add(1)
	c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0})
	var wg sync.WaitGroup
	wg.Go(func() { io.Copy(up, c); up.Close() })
	io.Copy(c, up)
	c.Close()
	wg.Wait()
}

func TestSOCKS5Proxy(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", chatOK)
	socks := startSocks(t)
	p := f.provider(func(o *Options) { o.APIMode = ModeChat; o.Proxy = "socks5://" + socks.ln.Addr().String() })
	r := collect(context.Background(), p, userReq("gpt-4o", "hi"))
	require.NoError(t, r.err)
	require.Equal(t, "Hello world", r.content)
	require.True(t, socks.connect.Load() >= 1, "the request went through the SOCKS5 proxy")
}
