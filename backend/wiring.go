package backend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/zqagent/sidecar/gitenv"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/openai"
	"github.com/zqagent/sidecar/netproxy"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/sandbox"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/conflict"
	"github.com/zqagent/sidecar/tools/diff"
	"github.com/zqagent/sidecar/tools/fs"
	"github.com/zqagent/sidecar/tools/git"
	"github.com/zqagent/sidecar/tools/interact"
	"github.com/zqagent/sidecar/tools/media"
	"github.com/zqagent/sidecar/tools/search"
	"github.com/zqagent/sidecar/tools/shell"
	"github.com/zqagent/sidecar/tools/terminaltools"
	"github.com/zqagent/sidecar/tools/todo"
	"github.com/zqagent/sidecar/tools/web"
	"github.com/zqagent/sidecar/vcs"
)

// EngineOptions are what an engine is built from with the default wiring
// (the seed's CreateEngineOpts): the one options type of engine
// construction, filled from the store by engines.Build.
type EngineOptions struct {
	Workspace string // required: the permission boundary of files and commands
	// Model defaults to OPENAI_MODEL; empty is an error at Run, never a guess.
	Model string
	// Provider defaults to the OpenAI-compatible provider configured from
	// the environment.
	Provider        llm.Provider
	Mode            permission.Mode // default interactive
	MaxIterations   int
	ReasoningEffort string // default OPENAI_REASONING_EFFORT
	AllowedCommands []string
	ShellPolicy     permission.ShellPolicy
	Sandbox         sandbox.Config
	AgentType       string // "code" (default) or "cowork"
	Lang            string // default "zh" as the seed
	Instructions    string // overrides engine.BuildInstructions
	Messages        []llm.Message
	Hook            engine.Hook
	// Ledger records which tool calls began (engine.Options.Ledger); nil
	// keeps the record in memory.
	Ledger engine.Ledger
	// Prices price the usage events (engine.Options.Prices); nil = the
	// default table.
	Prices engine.PriceLookup
	// Usage is the session's usage so far (engine.Options.Usage).
	Usage *protocol.SessionUsage
	// SubagentHookFactory makes a hook per explore call; parentCallID is the
	// explore tool call's id.
	SubagentHookFactory func(parentCallID string) engine.Hook
	ContextWindow       int
	ThresholdPct        float64
	SoftThresholdPct    float64
	CapTokens           int
	// SessionDir is the session's own folder.
	SessionDir string
	// ToolResultDir is where over-budget tool results are spilled; default
	// TOOL_RESULT_DIR, else SessionDir/tool-results. It is granted to the
	// session read-only so that the model can read_file the path it is given.
	ToolResultDir   string
	LogDir          string // provider audit log (only for the default provider)
	DefaultApproval permission.DefaultApproval
	// Terminals and ProjectID register terminal_list and terminal_read; the
	// project id is their isolation boundary.
	Terminals tools.TerminalSource
	ProjectID string
	// Watcher is the project's file watcher feeding ConflictGuard; nil makes
	// the guard fall back to hash checks.
	Watcher *conflict.Watcher
	// Web configures web_fetch, web_search and the media tool's URL
	// downloads (search backend, private addresses, HTTP client); a nil
	// Web.HTTPClient dials through SOCKS5_PROXY when it is set.
	Web web.Options
	// Compactor manages the context window; nil = the default compactor
	// (NewCompactor), unless NoCompaction.
	Compactor    engine.Compactor
	NoCompaction bool
	// VCS takes a git snapshot of the workspace around every turn (seed
	// §17); off by default. Its hook runs beside Hook, never replacing it.
	VCS engine.VCSOptions
	// ShellEnv is extra NAME=VALUE for shell tasks.
	ShellEnv []string
	// GitConfirmed is the worktree's or enclosing repository the user
	// confirmed for the workspace (gitenv.Discover): the git tools, shell
	// commands and native snapshots use it, limited to the workspace
	// folder. nil: the workspace's own .git only.
	GitConfirmed *gitenv.Candidate
	// Today overrides the date in the environment block (tests).
	Today string
}

// Wired is what NewEngine built besides the engine, for hosts that need to
// reach into it.
type Wired struct {
	Workspace *confine.Workspace
	Shell     *shell.Manager
	Todos     *todo.TodoList
	Sandbox   *sandbox.Box
	// VCS is the session's change tracker (EngineOptions.VCS); nil when
	// tracking is off or unavailable.
	VCS *vcs.SessionVCS
}

// NewEngine is the seed's createDefaultEngine, the default wiring of an
// engine: the OpenAI-compatible provider from the environment (unless one
// is given), the registry with every builtin tool (files, shell, search,
// web, git, diff, interactive, todo, media, terminals, explore),
// ConflictGuard, permissions with the OS sandbox, the default system
// prompt and, when asked, per-turn git snapshots. The engine package knows
// none of these concretes. It starts nothing that outlives the engine: the
// shell manager is closed by Engine.Close.
func NewEngine(o EngineOptions) (*engine.Engine, error) {
	e, _, err := NewEngineWired(o)
	return e, err
}

// NewEngineWired is NewEngine that also returns the wired parts.
func NewEngineWired(o EngineOptions) (*engine.Engine, *Wired, error) {
	if o.Workspace == "" {
		return nil, nil, fmt.Errorf("new engine: %w: workspace", engine.ErrMissingOption)
	}
	ws, err := confine.New(o.Workspace)
	if err != nil {
		return nil, nil, fmt.Errorf("new engine: %w", err)
	}
	if o.Model == "" {
		o.Model = os.Getenv("OPENAI_MODEL")
	}
	if o.ReasoningEffort == "" {
		o.ReasoningEffort = os.Getenv("OPENAI_REASONING_EFFORT")
	}
	if o.Mode == "" {
		o.Mode = permission.ModeInteractive
	}
	if o.ShellPolicy == "" {
		o.ShellPolicy = permission.PolicyApprove
	}
	o.Lang = engine.NormalizeLang(o.Lang)
	if o.Provider == nil {
		po := openai.FromEnv() // retries, timeouts and the idle watchdog from the environment
		po.LogDir = o.LogDir
		o.Provider = openai.New(po)
	}
	if o.ToolResultDir == "" {
		o.ToolResultDir = os.Getenv("TOOL_RESULT_DIR")
	}
	if o.ToolResultDir == "" && o.SessionDir != "" {
		o.ToolResultDir = filepath.Join(o.SessionDir, "tool-results")
	}
	if o.ToolResultDir != "" {
		// The model is given the spilled file's path: make it absolute, so
		// read_file finds it whatever the process's working directory.
		if abs, err := filepath.Abs(o.ToolResultDir); err == nil {
			o.ToolResultDir = abs
		}
	}
	if o.Web.HTTPClient == nil {
		// SOCKS5_PROXY applies to the network tools as to the model:
		// web_fetch, web_search's backends and media URLs dial through it.
		if o.Web.HTTPClient, err = netproxy.EnvClient(); err != nil {
			return nil, nil, fmt.Errorf("new engine: %w", err)
		}
	}
	// A required sandbox that is not available here does not stop the
	// session: every shell command fails, saying why (Box.Wrap).
	box, err := sandbox.NewBox(o.Sandbox)
	if err != nil {
		return nil, nil, fmt.Errorf("new engine: %w", err)
	}
	if o.ToolResultDir != "" {
		// The model reads spilled results with read_file: grant the folder
		// read-only to this session.
		if err := os.MkdirAll(o.ToolResultDir, 0o700); err == nil {
			_ = ws.Grant(o.ToolResultDir, false)
		}
	}

	reg := tools.NewRegistry()
	guard := conflict.NewGuard(o.Watcher)
	perms := permission.New(permission.Options{Workspace: ws, Mode: o.Mode, AllowedCommands: o.AllowedCommands, ShellPolicy: o.ShellPolicy, Box: box})
	instructions := o.Instructions
	if instructions == "" {
		today := o.Today
		if today == "" {
			today = time.Now().Format("2006-01-02")
		}
		instructions = engine.BuildInstructions(o.AgentType, ws.Root(), today, o.Lang)
	}
	hook := o.Hook
	var tracker *vcs.SessionVCS
	if m, err := vcs.ParseMode(string(o.VCS.Mode)); err != nil {
		return nil, nil, fmt.Errorf("new engine: %w", err)
	} else if m != vcs.ModeOff {
		id := o.VCS.SessionID
		if id == "" {
			id = "default"
		}
		ctx, cancel := context.WithTimeout(context.Background(), engine.VCSHookTimeout)
		cfg := o.VCS.Config
		cfg.Mode = m
		if cfg.Confirmed == nil {
			cfg.Confirmed = o.GitConfirmed
		}
		plan := vcs.ResolvePlan(ctx, ws.Root(), cfg)
		cancel()
		if plan.Enabled() {
			tracker = vcs.NewSession(plan, id)
			hook = engine.CompositeHook{o.Hook, engine.NewVCSHook(tracker)}
		}
	}
	e, err := engine.New(engine.Options{
		Provider: o.Provider, Registry: reg, Permissions: perms, Model: o.Model,
		Instructions: instructions, Lang: o.Lang, MaxIterations: o.MaxIterations,
		ReasoningEffort: o.ReasoningEffort, Messages: o.Messages, Hook: hook,
		ContextWindow: o.ContextWindow, ThresholdPct: o.ThresholdPct, SoftThresholdPct: o.SoftThresholdPct,
		CapTokens: o.CapTokens, ToolResultDir: o.ToolResultDir, DefaultApproval: o.DefaultApproval,
		Compactor: o.Compactor, NoCompaction: o.NoCompaction, Ledger: o.Ledger,
		Prices: o.Prices, Usage: o.Usage,
	})
	if err != nil {
		return nil, nil, err
	}

	wrap := func(argv []string) ([]string, error) { return box.Wrap(ws.Root(), argv) }
	fs.RegisterFileTools(reg, ws, guard)
	shellMgr := shell.RegisterShellTool(reg, shell.Options{Workspace: ws, Env: o.ShellEnv, Wrap: wrap, GitConfirmed: o.GitConfirmed})
	e.AddCloser(func() error { return shellMgr.Close() })
	search.RegisterSearchTool(reg, ws)
	web.RegisterWebTools(reg, o.Web)
	git.RegisterConfirmedGitTools(reg, ws, o.GitConfirmed)
	diff.RegisterDiffTools(reg, ws, guard)
	ix := e.Interactor()
	interact.RegisterAskTool(reg, ix)
	interact.RegisterPlanTool(reg, ix)
	interact.RegisterDirectoryTool(reg, ix, ws)
	todos := &todo.TodoList{}
	todo.RegisterTodoTool(reg, todos)
	mediaTool := media.RegisterMediaTool(reg, ws, media.Options{AllowPrivate: o.Web.AllowPrivate, HTTPClient: o.Web.HTTPClient})
	e.AddTurnStart(mediaTool.Reset)
	if o.Terminals != nil && o.ProjectID != "" {
		terminaltools.RegisterTerminalTools(reg, o.Terminals, o.ProjectID)
	}
	engine.RegisterExploreTool(reg, engine.ExploreConfig{NewChild: func(parentCallID string) (*engine.Engine, error) {
		return newExploreChild(e, o, ws, parentCallID)
	}})
	return e, &Wired{Workspace: ws, Shell: shellMgr, Todos: todos, Sandbox: box, VCS: tracker}, nil
}

// newExploreChild builds the explore subagent: same provider and model, its
// own context, PLAN mode, read-only file, search and git tools, and a final
// tool-less report turn.
func newExploreChild(parent *engine.Engine, o EngineOptions, ws *confine.Workspace, parentCallID string) (*engine.Engine, error) {
	reg := tools.NewRegistry()
	fs.RegisterReadOnlyFileTools(reg, ws, nil)
	search.RegisterSearchTool(reg, ws)
	git.RegisterConfirmedGitTools(reg, ws, o.GitConfirmed)
	perms := permission.New(permission.Options{Workspace: ws, Mode: permission.ModePlan})
	var hook engine.Hook
	if o.SubagentHookFactory != nil {
		hook = o.SubagentHookFactory(parentCallID)
	}
	today := o.Today
	if today == "" {
		today = time.Now().Format("2006-01-02")
	}
	model := parent.Model()
	if model == "" {
		return nil, errors.New("no model configured")
	}
	return engine.New(engine.Options{
		Provider: parent.Provider(), Registry: reg, Permissions: perms, Model: model,
		Instructions:            engine.Prompts(o.Lang).Explore + "\n\n" + engine.BuildEnvBlock(ws.Root(), today, o.Lang),
		Lang:                    o.Lang,
		MaxIterations:           envInt("EXPLORE_MAX_ITERATIONS", engine.DefaultExploreMaxIterations),
		FinalizeOnMaxIterations: true,
		ReasoningEffort:         o.ReasoningEffort,
		Hook:                    hook,
		ToolResultDir:           o.ToolResultDir,
		DefaultApproval:         permission.DefaultApproval("deny"),
		// Its own context, compacted like the parent's.
		ContextWindow: o.ContextWindow, ThresholdPct: o.ThresholdPct, SoftThresholdPct: o.SoftThresholdPct,
		CapTokens: o.CapTokens, NoCompaction: o.NoCompaction,
	})
}

// envInt reads a positive integer from the environment, else def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
