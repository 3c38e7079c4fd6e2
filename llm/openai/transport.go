package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/netproxy"
)

// watchdog aborts one attempt: before the response headers after Timeout (or
// StreamIdle), afterwards when the body produced no byte for StreamIdle. It
// cancels the attempt's context with ErrTimeout or llm.ErrStreamIdle as cause.
type watchdog struct {
	idle   time.Duration
	cancel context.CancelCauseFunc

	mu      sync.Mutex // guards timer, gotHead, stopped
	timer   *time.Timer
	gotHead bool
	stopped bool
}

func newWatchdog(first, idle time.Duration, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{idle: idle, cancel: cancel}
	w.mu.Lock()
	w.timer = time.AfterFunc(first, w.fire)
	w.mu.Unlock()
	return w
}

func (w *watchdog) fire() {
	w.mu.Lock()
	stopped, gotHead := w.stopped, w.gotHead
	w.mu.Unlock()
	if stopped {
		return
	}
	if gotHead {
		w.cancel(llm.ErrStreamIdle)
	} else {
		w.cancel(ErrTimeout)
	}
}

// head notes the arrival of the response headers.
func (w *watchdog) head() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gotHead = true
	if !w.stopped {
		w.timer.Reset(w.idle)
	}
}

// touch notes bytes of the body.
func (w *watchdog) touch() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.timer.Reset(w.idle)
	}
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.timer.Stop()
}

type watchdogKey struct{}

type rateSinkKey struct{}

// rateSink keeps the rate limits of the latest response of one Stream or
// Chat call (retries and fallbacks included): the transport notes them.
type rateSink struct {
	mu     sync.Mutex // guards limits
	limits *llm.RateLimits
}

func withRateSink(ctx context.Context, s *rateSink) context.Context {
	return context.WithValue(ctx, rateSinkKey{}, s)
}

// note keeps rl unless it is nil (a response without the headers keeps
// the previous ones).
func (s *rateSink) note(rl *llm.RateLimits) {
	if rl == nil {
		return
	}
	s.mu.Lock()
	s.limits = rl
	s.mu.Unlock()
}

func (s *rateSink) get() *llm.RateLimits {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limits
}

// transport adds the configured headers and feeds the watchdog of the
// request's context, if any.
type transport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, prebuilt := req.Context().Value(prebuiltKey{}).([]byte)
	if len(t.headers) > 0 || prebuilt {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	if prebuilt {
		// The SDK encoded a request without its messages; send the whole one
		// (wire.go). A redirect's GetBody gives it again.
		if req.Body != nil {
			_ = req.Body.Close()
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req.ContentLength = int64(len(body))
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if s, ok := req.Context().Value(rateSinkKey{}).(*rateSink); ok {
		s.note(llm.ParseRateLimits(resp.Header, time.Now()))
	}
	if w, ok := req.Context().Value(watchdogKey{}).(*watchdog); ok {
		w.head()
		resp.Body = &watchedBody{ReadCloser: resp.Body, w: w}
	}
	return resp, nil
}

// CloseIdleConnections forwards to the wrapped transport.
func (t *transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

type watchedBody struct {
	io.ReadCloser
	w *watchdog
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.touch()
	}
	return n, err
}

// newHTTPClient returns the client the provider sends with: a copy of opts'
// client, or a fresh one with the SOCKS5 proxy, whose transport is wrapped.
func newHTTPClient(o Options) (*http.Client, error) {
	var c http.Client
	if o.HTTPClient != nil {
		c = *o.HTTPClient
	} else {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if o.Proxy != "" {
			dial, err := socksDialer(o.Proxy)
			if err != nil {
				return nil, err
			}
			tr.Proxy = nil
			tr.DialContext = dial
		}
		c.Transport = tr
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &transport{base: base, headers: o.Headers}
	return &c, nil
}

func socksDialer(raw string) (netproxy.DialFunc, error) { return netproxy.Dialer(raw) }
