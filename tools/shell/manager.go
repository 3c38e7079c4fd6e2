// Package shell owns the shell tools: run_shell (foreground commands and
// background tasks), shell_task_output and shell_task_kill.
//
// Every command runs through one fixed shell, shellcmd.Interpreter()
// (/bin/bash, else /bin/sh; never $SHELL; PowerShell or cmd on Windows),
// whose grammar shellcmd.Variant() names for the permission engine's
// parser (package shellcmd owns that shell). It runs in its own process
// group (package proc), with the sanitized environment of proc.Env and a
// working directory confined to the workspace. A command the user did not
// approve (tools.UserApproved is false: allowlisted, granted, or allowed by
// the mode) also gets gitenv's inert git environment; an approved one runs
// with the user's own git configuration. When gitenv refuses the
// workspace's repository (it points or leads outside the workspace) such a
// command's git finds no repository at all, and the result says why
// (RunResult.Error when git failed for it, StartResult.Message for a
// background task). A timeout, an interrupted turn
// (ctx), shell_task_kill and Manager.Close end the whole group, grandchildren
// included; when a command's shell exits, whatever it left running in its
// group is ended too. Each command also runs in a process jail
// (proc.Jail, a sub-jail of the session's), which holds what leaves the
// group (setsid, double fork): it is killed when the command ends, and
// the session's jail when the Manager closes, so no process outlives its
// session.
//
// Concurrency: a Manager belongs to one session and is safe for concurrent
// use. Each task has two or three goroutines (output copy, wait, timeout)
// owned by the Manager; Close kills every task and waits for them. Tasks of
// one Manager are invisible to another.
package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/gitenv"
	"github.com/zqagent/sidecar/proc"
	"github.com/zqagent/sidecar/shellcmd"
	"github.com/zqagent/sidecar/tools"
)

// Defaults of Options.
const (
	DefaultTimeout    = 120 * time.Second
	DefaultMaxTimeout = 10 * time.Minute
	DefaultMaxOutput  = 64 << 10
	DefaultTaskBuffer = 1 << 20
	DefaultMaxTasks   = 16
	DefaultKillGrace  = 2 * time.Second
	maxFinishedTasks  = 64 // finished background tasks kept for reading
)

// Options configure the shell tools of one session.
type Options struct {
	// Workspace confines the working directory. Required.
	Workspace *confine.Workspace
	// Env holds extra NAME=VALUE variables on top of the sanitized
	// environment (proc.Env), for example the host's PATH additions.
	Env []string
	// Wrap, when set, rewrites the final argv, e.g. to run it inside an OS
	// sandbox (bwrap, sandbox-exec). An error refuses the command (a
	// required sandbox that is not available) and is the tool's error.
	Wrap func(argv []string) ([]string, error)
	// DefaultTimeout applies to foreground commands without timeout_ms.
	DefaultTimeout time.Duration
	// MaxTimeout caps timeout_ms.
	MaxTimeout time.Duration
	// MaxOutput caps a foreground result (head and tail kept) and one
	// shell_task_output read.
	MaxOutput int
	// TaskBuffer is how much recent output a background task keeps.
	TaskBuffer int
	// MaxTasks caps the background tasks running at once.
	MaxTasks int
	// KillGrace is the time between TERM and KILL.
	KillGrace time.Duration
	// GitConfirmed is the worktree's or enclosing repository the user
	// confirmed for the workspace (gitenv.Discover); nil: the workspace's
	// own .git only. Unapproved commands in a worktree get its repository;
	// in an enclosing repository they get none (gitenv.CommandsConfirmed).
	GitConfirmed *gitenv.Candidate
}

func (o Options) withDefaults() Options {
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = DefaultTimeout
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = DefaultMaxTimeout
	}
	if o.DefaultTimeout > o.MaxTimeout {
		o.DefaultTimeout = o.MaxTimeout
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.TaskBuffer <= 0 {
		o.TaskBuffer = DefaultTaskBuffer
	}
	if o.MaxTasks <= 0 {
		o.MaxTasks = DefaultMaxTasks
	}
	if o.KillGrace <= 0 {
		o.KillGrace = DefaultKillGrace
	}
	return o
}

// Manager runs the commands of one session and owns its background tasks.
type Manager struct {
	opts  Options
	shell string         // shellcmd.Interpreter()
	git   string         // the git binary for gitenv's scan; "" when not installed
	wg    sync.WaitGroup // the goroutines of every task

	mu     sync.Mutex
	closed bool             // guarded by mu
	jail   *proc.Jail       // guarded by mu; holds every process the session's commands start; made by the first command
	seq    int              // guarded by mu; last task number
	tasks  map[string]*task // guarded by mu; background tasks by id
	fg     map[*task]bool   // guarded by mu; foreground commands running
}

// NewManager returns a Manager for opts.
func NewManager(opts Options) *Manager {
	git, _ := exec.LookPath("git")
	return &Manager{opts: opts.withDefaults(), shell: shellcmd.Interpreter(), git: git, tasks: map[string]*task{}, fg: map[*task]bool{}}
}

// RegisterShellTool registers run_shell, shell_task_output and
// shell_task_kill on reg and returns their Manager; the session closes it.
func RegisterShellTool(reg *tools.Registry, opts Options) *Manager {
	m := NewManager(opts)
	reg.MustRegister(m.runShellSpec())
	reg.MustRegister(m.taskOutputSpec())
	reg.MustRegister(m.taskKillSpec())
	return m
}

// Close kills every command of the session, foreground and background, and
// waits for their goroutines. Later calls start nothing (ErrClosed).
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	all := make([]*task, 0, len(m.tasks)+len(m.fg))
	for _, t := range m.tasks {
		all = append(all, t)
	}
	for t := range m.fg {
		all = append(all, t)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, t := range all {
		wg.Go(func() { t.kill(endClosed) })
	}
	wg.Wait()
	m.wg.Wait()
	// What left its group and outlived its command's jail (none should).
	m.mu.Lock()
	jail := m.jail
	m.mu.Unlock()
	if jail == nil {
		return nil
	}
	return jail.Close()
}

// TaskInfo describes a background task (for hosts that list them).
type TaskInfo struct {
	ID       string    `json:"id"`
	Command  string    `json:"command"`
	Cwd      string    `json:"cwd"`
	Started  time.Time `json:"started"`
	Running  bool      `json:"running"`
	ExitCode *int      `json:"exitCode,omitempty"`
}

// Tasks lists the session's background tasks, oldest first.
func (m *Manager) Tasks() []TaskInfo {
	m.mu.Lock()
	ts := make([]*task, 0, len(m.tasks))
	for _, t := range m.tasks {
		ts = append(ts, t)
	}
	m.mu.Unlock()
	sort.Slice(ts, func(i, j int) bool { return ts[i].started.Before(ts[j].started) })
	out := make([]TaskInfo, 0, len(ts))
	for _, t := range ts {
		st := t.status()
		out = append(out, TaskInfo{ID: t.id, Command: t.command, Cwd: t.cwd, Started: t.started, Running: st.Running, ExitCode: st.ExitCode})
	}
	return out
}

// spawn starts command in cwd (a workspace path, "" for the root). An
// inert command (one the user did not approve) gets gitenv's environment,
// so that any git it runs runs none of the repository's programs and stays
// in the workspace's own repository.
func (m *Manager) spawn(ctx context.Context, command, cwd string, timeout time.Duration, background, inert bool) (*task, error) {
	dir, err := m.opts.Workspace.Resolve(cwd, false)
	if err != nil {
		return nil, fmt.Errorf("cwd: %w", err)
	}
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("cwd %q: %w", cwd, tools.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("cwd: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s", ErrNotDir, cwd)
	}
	env := proc.Env(nil, m.opts.Env...)
	var gitRefused error
	if inert {
		env, gitRefused = m.inertEnv(ctx, env)
	}
	argv := shellcmd.Argv(m.shell, command)
	if m.opts.Wrap != nil {
		if argv, err = m.opts.Wrap(argv); err != nil {
			return nil, err
		}
	}
	half := m.opts.MaxOutput / 2
	out := newOutput(half, m.opts.MaxOutput-half)
	if background {
		out = newOutput(half, m.opts.TaskBuffer)
	}
	t := &task{command: command, cwd: dir, started: time.Now(), out: out, grace: m.opts.KillGrace, done: make(chan struct{}), gitRefused: gitRefused}

	m.mu.Lock()
	defer m.mu.Unlock() // held across start so that Close sees every task
	if m.closed {
		return nil, ErrClosed
	}
	if background {
		if m.runningLocked() >= m.opts.MaxTasks {
			return nil, fmt.Errorf("%w: %d running; kill one first", ErrTooManyTasks, m.opts.MaxTasks)
		}
		m.pruneLocked()
		m.seq++
		t.id = "task-" + strconv.Itoa(m.seq)
	}
	if m.jail == nil {
		m.jail = proc.NewJail()
	}
	if err := t.start(&m.wg, m.jail.Sub(), argv, env, timeout); err != nil {
		return nil, err
	}
	if background {
		m.tasks[t.id] = t
	} else {
		m.fg[t] = true
	}
	return t, nil
}

// inertEnv is env made inert for git (gitenv.Commands): the workspace's own
// repository pinned, or none found above the workspace, or (a repository
// that points or leads outside, or cannot be checked) none at all; the
// error then says why git cannot use the workspace's repository.
func (m *Manager) inertEnv(ctx context.Context, env []string) ([]string, error) {
	root := m.opts.Workspace.Root()
	repo := gitenv.Repo{Project: root}
	var refused error
	if m.git != "" {
		var err error
		if c := m.opts.GitConfirmed; c != nil {
			repo, err = gitenv.CommandsConfirmed(ctx, m.git, *c)
		} else {
			repo, err = gitenv.Commands(ctx, m.git, root) // the Repo says what to pin either way
		}
		if err != nil && !errors.Is(err, gitenv.ErrNoRepo) {
			refused = err
		}
		if err != nil && m.opts.GitConfirmed == nil {
			if c, derr := gitenv.Discover(root); derr == nil && c != nil {
				refused = fmt.Errorf("the workspace is in the %s repository %s, which git commands use only after the user enables git for the project in the app (project.trustGit)", c.Kind, c.Repository)
			}
		}
	}
	return repo.Env(env), refused
}

func (m *Manager) forget(t *task) {
	m.mu.Lock()
	delete(m.fg, t)
	m.mu.Unlock()
}

func (m *Manager) runningLocked() int {
	n := 0
	for _, t := range m.tasks {
		if t.running() {
			n++
		}
	}
	return n
}

// pruneLocked drops the oldest finished tasks beyond maxFinishedTasks.
func (m *Manager) pruneLocked() {
	var done []*task
	for _, t := range m.tasks {
		if !t.running() {
			done = append(done, t)
		}
	}
	if len(done) < maxFinishedTasks {
		return
	}
	sort.Slice(done, func(i, j int) bool { return done[i].started.Before(done[j].started) })
	for _, t := range done[:len(done)-maxFinishedTasks+1] {
		delete(m.tasks, t.id)
	}
}

func (m *Manager) lookup(id string) (*task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok {
		return nil, fmt.Errorf("task %q: %w", id, tools.ErrNotFound)
	}
	return t, nil
}

// timeoutFor turns timeout_ms into a duration: def when unset, capped at
// MaxTimeout.
func (m *Manager) timeoutFor(ms int64, def time.Duration) time.Duration {
	d := def
	if ms > 0 {
		d = time.Duration(ms) * time.Millisecond
	}
	if d > m.opts.MaxTimeout {
		d = m.opts.MaxTimeout
	}
	return d
}

// waitTask waits for a foreground task; when ctx ends first the group is
// killed and the wait goes on until the task is done.
func (m *Manager) waitTask(ctx context.Context, t *task) error {
	err := t.wait(ctx)
	if err != nil {
		t.kill(endCancelled)
		<-t.done
	}
	return err
}
