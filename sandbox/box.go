package sandbox

import (
	"fmt"
	"sync"
)

// Box is one session's sandbox: its settings, which the session may change
// at runtime (mode, network), and what they resolve to on this machine. The
// shell tools run every command through Wrap.
type Box struct {
	mu  sync.Mutex
	cfg Config // guarded by mu
}

// NewBox returns a Box for cfg; an unknown mode is an error. A required
// sandbox that is not available here is not: each command then fails
// (Wrap), loudly, and Status says why.
func NewBox(cfg Config) (*Box, error) {
	if cfg.Mode == "" {
		cfg.Mode = ModeAuto
	}
	if _, err := ParseMode(string(cfg.Mode)); err != nil {
		return nil, err
	}
	cfg.ExtraWritable = append([]string(nil), cfg.ExtraWritable...)
	cfg.Hidden = append([]string(nil), cfg.Hidden...)
	return &Box{cfg: cfg}, nil
}

// Status is the sandbox as it really is for the current settings.
func (b *Box) Status() Status {
	b.mu.Lock()
	cfg := b.cfg
	b.mu.Unlock()
	st, _ := Resolve(cfg) // an unavailable required sandbox is in st.Reason
	return st
}

// SetMode changes the mode for the next command.
func (b *Box) SetMode(m Mode) error {
	if _, err := ParseMode(string(m)); err != nil {
		return err
	}
	if m == "" {
		m = ModeAuto
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cfg.Mode = m
	return nil
}

// SetNetwork allows or cuts the network for the next command.
func (b *Box) SetNetwork(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cfg.Network = on
}

// Wrap returns argv to run in workspace under the current settings: inside
// the sandbox when it is enforced, unchanged when the mode is auto and no
// sandbox works here or the mode is off. In required mode without a
// working sandbox it returns ErrUnavailable with the reason; the command
// must not run.
func (b *Box) Wrap(workspace string, argv []string) ([]string, error) {
	b.mu.Lock()
	cfg := b.cfg
	b.mu.Unlock()
	st, err := Resolve(cfg)
	if err != nil {
		return nil, fmt.Errorf("run command: %w", err)
	}
	return wrap(st, workspace, cfg.ExtraWritable, cfg.Hidden, argv), nil
}
