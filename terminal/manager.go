package terminal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/zqagent/sidecar/tools"
)

// Info describes a terminal.
type Info struct {
	ID        string `json:"id"`
	ProjectID string `json:"projectId"`
	Name      string `json:"name"`
	Cwd       string `json:"cwd"`
	Command   string `json:"command"`
	Cols      uint16 `json:"cols"`
	Rows      uint16 `json:"rows"`
	// Alive turns false, and ExitCode appears, when the process has exited
	// and all its output is in the scrollback (when Exit is sent).
	Alive     bool      `json:"alive"`
	ExitCode  *int      `json:"exitCode,omitempty"`
	Pid       int       `json:"pid"`
	CreatedAt time.Time `json:"createdAt"`
	// LastSeq is the offset just past the newest output byte: subscribing
	// with afterSeq = LastSeq streams only what comes next.
	LastSeq int64 `json:"lastSeq"`
}

// Manager owns every terminal of the sidecar.
type Manager struct {
	opts Options
	log  *slog.Logger
	wg   sync.WaitGroup // every goroutine of every terminal

	mu     sync.Mutex           // guards terms, closed
	terms  map[string]*terminal // by id; killed terminals are removed at once
	closed bool
}

var _ tools.TerminalSource = (*Manager)(nil)

// NewManager returns a Manager; Close kills its terminals.
func NewManager(opts Options) *Manager {
	opts = opts.withDefaults()
	return &Manager{opts: opts, log: opts.Logger, terms: make(map[string]*terminal)}
}

// newID returns "term_" and 12 random hex digits.
func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // never fails
	return "term_" + hex.EncodeToString(b[:])
}

// Create starts a terminal. The cwd must lie inside the project directory
// (ErrOutsideProject otherwise).
func (m *Manager) Create(ctx context.Context, o CreateOptions) (Info, error) {
	if o.ProjectID == "" || o.ProjectDir == "" {
		return Info{}, fmt.Errorf("%w: projectId and project directory are required", ErrInvalid)
	}
	if m.isClosed() {
		return Info{}, ErrClosed
	}
	root, cwd, err := resolveCwd(o.ProjectDir, o.Cwd)
	if err != nil {
		return Info{}, err
	}
	spec, display, err := buildSpec(o, cwd)
	if err != nil {
		return Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	p, err := startPTY(spec)
	if err != nil {
		return Info{}, fmt.Errorf("create terminal: %w", err)
	}
	name := o.Name
	if name == "" {
		name = programName(spec.Path)
	}
	t := &terminal{
		m: m, id: newID(), projectID: o.ProjectID, name: name, cwd: cwd, projectRoot: root, command: display,
		createdAt: time.Now().UTC(), proc: p, pid: p.Pid(),
		readerDone: make(chan struct{}), done: make(chan struct{}), inWake: make(chan struct{}, 1),
		killCh: make(chan struct{}),
		ring:   newRing(m.opts.Scrollback), cols: spec.Cols, rows: spec.Rows,
		subs: make(map[*subscription]struct{}),
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		_ = p.KillAll()
		_, _ = p.Wait()
		_ = p.Close()
		return Info{}, ErrClosed
	}
	m.terms[t.id] = t
	m.wg.Go(t.readLoop)
	m.wg.Go(t.waitLoop)
	m.wg.Go(t.writeLoop)
	m.wg.Go(t.killLoop)
	m.mu.Unlock()
	m.log.Info("terminal created", "terminal", t.id, "project", t.projectID, "pid", t.pid, "cwd", cwd, "command", display)
	return t.info(), nil
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// lookup finds a terminal of the project; a terminal of another project is
// not found.
func (m *Manager) lookup(projectID, id string) (*terminal, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	t := m.terms[id]
	if t == nil || t.projectID != projectID {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return t, nil
}

// Write queues input for the terminal; it does not wait for the terminal to
// read it. Up to 1 MiB may be queued (ErrInputFull beyond).
func (m *Manager) Write(projectID, id string, data []byte) error {
	t, err := m.lookup(projectID, id)
	if err != nil {
		return err
	}
	if len(data) == 0 {
		return nil
	}
	if err := t.queueInput(data); err != nil {
		return fmt.Errorf("write %s: %w", id, err)
	}
	return nil
}

// Resize sets the terminal's size in character cells.
func (m *Manager) Resize(projectID, id string, cols, rows uint16) error {
	t, err := m.lookup(projectID, id)
	if err != nil {
		return err
	}
	if cols == 0 || rows == 0 {
		return fmt.Errorf("%w: size %dx%d", ErrInvalid, cols, rows)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exited {
		return fmt.Errorf("resize %s: %w", id, ErrExited)
	}
	if err := t.proc.Resize(cols, rows); err != nil {
		return fmt.Errorf("resize %s: %w", id, err)
	}
	t.cols, t.rows = cols, rows
	return nil
}

// Kill terminates the terminal's processes (TERM, then KILL after
// KillGrace) and forgets it: later calls with its id get ErrNotFound, while
// its subscribers still receive the remaining output and Exit. It returns at
// once.
func (m *Manager) Kill(projectID, id string) error {
	t, err := m.lookup(projectID, id)
	if err != nil {
		return err
	}
	m.mu.Lock()
	delete(m.terms, id)
	m.mu.Unlock()
	t.kill()
	m.log.Info("terminal killed", "terminal", id, "project", projectID)
	return nil
}

// List returns the project's terminals, oldest first.
func (m *Manager) List(projectID string) []Info {
	var out []Info
	for _, t := range m.projectTerms(projectID) {
		out = append(out, t.info())
	}
	return out
}

func (m *Manager) projectTerms(projectID string) []*terminal {
	m.mu.Lock()
	var ts []*terminal
	for _, t := range m.terms {
		if t.projectID == projectID {
			ts = append(ts, t)
		}
	}
	m.mu.Unlock()
	sort.Slice(ts, func(i, j int) bool {
		if !ts[i].createdAt.Equal(ts[j].createdAt) {
			return ts[i].createdAt.Before(ts[j].createdAt)
		}
		return ts[i].id < ts[j].id
	})
	return ts
}

// Get returns one terminal of the project.
func (m *Manager) Get(projectID, id string) (Info, error) {
	t, err := m.lookup(projectID, id)
	if err != nil {
		return Info{}, err
	}
	return t.info(), nil
}

// Subscribe streams the terminal's output to sub: first what the ring still
// holds from afterSeq on (0 = everything), then live output, with no gap and
// no duplicate. When afterSeq is older than the oldest byte held, delivery
// starts at that byte: the first Output's Seq, larger than afterSeq, marks
// the gap. A subscriber whose Output is too slow is dropped (Dropped) instead
// of slowing the terminal. An exited terminal replays and then sends Exit.
// unsubscribe stops delivery; it does not wait for a call in progress.
func (m *Manager) Subscribe(projectID, id string, afterSeq int64, sub Subscriber) (unsubscribe func(), err error) {
	if sub == nil {
		return nil, fmt.Errorf("%w: nil subscriber", ErrInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	t := m.terms[id]
	if t == nil || t.projectID != projectID {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	maxLag := int64(m.opts.SubscriberBuffer)
	s := t.addSub(sub, max(afterSeq, 0), maxLag)
	m.wg.Go(func() { s.run(m.opts.BatchInterval, maxLag) })
	return s.unsubscribe, nil
}

// CloseProject kills every terminal of the project.
func (m *Manager) CloseProject(projectID string) {
	m.mu.Lock()
	var ts []*terminal
	for id, t := range m.terms {
		if t.projectID == projectID {
			ts = append(ts, t)
			delete(m.terms, id)
		}
	}
	m.mu.Unlock()
	for _, t := range ts {
		t.kill()
	}
}

// Close kills every terminal and waits until all of them and all
// subscriptions have ended (at most about twice KillGrace, plus the time
// subscribers take to accept their last output).
func (m *Manager) Close() error {
	m.mu.Lock()
	ts := slices.Collect(maps.Values(m.terms))
	clear(m.terms)
	m.closed = true
	m.mu.Unlock()
	for _, t := range ts {
		t.kill()
	}
	m.wg.Wait()
	return nil
}

// programName is the display name of a program path.
func programName(path string) string {
	i := strings.LastIndexAny(path, `/\`)
	return strings.TrimSuffix(path[i+1:], ".exe")
}
