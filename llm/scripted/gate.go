package scripted

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// A Gate pauses the responses that name it (Response.Gate) after their
// text, before their end, until it is released: a test holds a turn at an
// exact moment (streaming, before its tool calls, before it ends) and acts
// there. A gate is one-shot: once released, every response that names it
// passes. In-process tests use Provider.Gate; through the real binary, a
// script's gateDir makes the gate file-backed (see Script.GateDir).
type Gate struct {
	name     string
	reached  chan struct{} // closed when a response first waits here
	released chan struct{} // closed by Release
	once     sync.Once     // closes reached
	relOnce  sync.Once     // closes released
}

func newGate(name string) *Gate {
	return &Gate{name: name, reached: make(chan struct{}), released: make(chan struct{})}
}

// Name returns the gate's name.
func (g *Gate) Name() string { return g.name }

// Reached is closed when a response first reaches the gate.
func (g *Gate) Reached() <-chan struct{} { return g.reached }

// Release lets every response waiting at the gate, and every later one,
// go on.
func (g *Gate) Release() { g.relOnce.Do(func() { close(g.released) }) }

// Gate returns the provider's gate of that name, creating it (closed)
// when it does not exist yet.
func (p *Provider) Gate(name string) *Gate {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gateLocked(name)
}

func (p *Provider) gateLocked(name string) *Gate {
	if p.gates == nil {
		p.gates = map[string]*Gate{}
	}
	g := p.gates[name]
	if g == nil {
		g = newGate(name)
		p.gates[name] = g
	}
	return g
}

// gatePoll is how often a file-backed gate looks for its .open file.
const gatePoll = 5 * time.Millisecond

// wait blocks at the gate until it is released or ctx ends. With a gate
// directory, it first creates <dir>/<name>.reached and is released, too,
// once <dir>/<name>.open exists.
func (p *Provider) wait(ctx context.Context, name string) error {
	p.mu.Lock()
	g := p.gateLocked(name)
	dir := p.gateDir
	p.mu.Unlock()
	g.once.Do(func() {
		if dir != "" {
			if err := os.WriteFile(filepath.Join(dir, name+".reached"), nil, 0o600); err != nil {
				p.gateErr(fmt.Errorf("gate %s: %w", name, err))
			}
		}
		close(g.reached)
	})
	var tick <-chan time.Time
	if dir != "" {
		t := time.NewTicker(gatePoll)
		defer t.Stop()
		tick = t.C
	}
	for {
		if dir != "" {
			if _, err := os.Stat(filepath.Join(dir, name+".open")); err == nil {
				g.Release()
			} else if !errors.Is(err, os.ErrNotExist) {
				p.gateErr(fmt.Errorf("gate %s: %w", name, err))
			}
		}
		select {
		case <-g.released:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick:
		}
	}
}

// gateErr reports a gate file problem on stderr (a test's script is wrong;
// the gate still opens by Release or the context).
func (p *Provider) gateErr(err error) { fmt.Fprintln(os.Stderr, "scripted:", err) }
