package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/mcp"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

// MCP per project (issue 8): project.open creates the project's
// mcp.Manager from <workspace>/.agent/mcp.json, watches the file and
// connects the trusted servers in the background (the file comes with the
// repository: a server the user has not approved by mcp.trust, or whose
// config changed since, is never started or contacted; approvals live in
// the database, mcp_trust.go); every session engine of the
// project attaches its registry to that manager (two projects never share
// tools); project.close and Server.Close close the manager, which kills its
// stdio children. mcp.status and mcp.changed go to every initialized
// connection: projects are process-wide, not tied to a connection.

// mcpProjects holds the MCP managers of the open projects. mu is a leaf
// lock: no manager method, store call or send runs under it.
type mcpProjects struct {
	mu        sync.Mutex
	byProject map[string]*projectMCP
	closed    bool
}

// projectMCP is one open project's MCP manager and the goroutines that
// connect its servers in the background (owned here, waited for by close).
type projectMCP struct {
	id     string
	path   string // the config file
	mgr    *mcp.Manager
	ctx    context.Context // ends on close; background connects run under it
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex // serializes config edits with their save; guards the fields below
	warnings []protocol.MCPWarning
	closed   bool
}

// wireWarnings are config warnings on the wire (never null).
func wireWarnings(ws []protocol.MCPWarning) []protocol.MCPWarning {
	return append([]protocol.MCPWarning{}, ws...)
}

// wireConfigs are server configs on the wire, in the file's entry format.
func wireConfigs(cfgs []mcp.ServerConfig) ([]protocol.MCPServerConfig, error) {
	out := make([]protocol.MCPServerConfig, len(cfgs))
	for i, c := range cfgs {
		b, err := json.Marshal(c)
		if err != nil {
			return nil, fmt.Errorf("encode MCP server config %q: %w", c.Name, err)
		}
		out[i] = b
	}
	return out, nil
}

// openMCP creates the project's manager when it has none: the file is
// loaded (its warnings kept for mcp.list), watched, and its servers are
// connected in the background so that project.open stays fast.
func (b *Backend) openMCP(projectID, root string) {
	if b.mcpOf(projectID) != nil {
		return
	}
	path := mcp.DefaultConfigPath(root)
	cfgs, warns, err := mcp.LoadConfigFile(path)
	if err != nil {
		warns = append(warns, protocol.MCPWarning{File: path, Message: err.Error()})
	}
	var ws *confine.Workspace
	if w, err := confine.New(root); err == nil {
		ws = w
	}
	ctx, cancel := context.WithCancel(b.ctx)
	pm := &projectMCP{id: projectID, path: path, ctx: ctx, cancel: cancel, warnings: nonNilWarnings(warns)}
	pm.mgr = mcp.NewManager(mcp.WithBuiltinConfigs(cfgs), mcp.Options{
		Workspace: root,
		Builtin:   mcp.BuiltinContext{Workspace: ws, Vision: b.ocrVision},
		Trust:     &mcpTrust{st: b.opts.Store, projectID: projectID},
		Secrets:   b.mcpSecrets(), // sign-ins (mcp_oauth.go)
		OnStatus: func(st protocol.MCPStatus) {
			b.broadcast("mcp.status", protocol.MCPStatusNotification{ProjectID: projectID, MCPStatus: st})
		},
		Logger: b.log.With("project", projectID),
	})
	b.mcp.mu.Lock()
	if b.mcp.closed || b.mcp.byProject[projectID] != nil {
		b.mcp.mu.Unlock()
		cancel()
		_ = pm.mgr.CloseAll() // lost a race with another open, or the server closes
		return
	}
	if b.mcp.byProject == nil {
		b.mcp.byProject = map[string]*projectMCP{}
	}
	b.mcp.byProject[projectID] = pm
	b.mcp.mu.Unlock()

	if err := pm.mgr.Watch(ctx, path, pm.onFileChange(b)); err != nil {
		b.log.Warn("watch MCP config", "project", projectID, "err", err)
	}
	b.attachLoaded(pm)
	pm.mu.Lock()
	pm.goLocked(func() { pm.mgr.ConnectAll(pm.ctx) })
	pm.mu.Unlock()
}

// onFileChange is the watch callback: the file was edited by hand.
func (pm *projectMCP) onFileChange(s *Backend) func(added, removed, changed []string, warnings []protocol.MCPWarning) {
	return func(added, removed, changed []string, warnings []protocol.MCPWarning) {
		pm.mu.Lock()
		pm.warnings = nonNilWarnings(warnings)
		pm.mu.Unlock()
		s.broadcast("mcp.changed", newMCPChanged(pm.id, "file", added, removed, changed, warnings))
	}
}

// goLocked runs f in a goroutine owned by pm unless pm is closed. pm.mu
// must be held (close sets closed under it before waiting).
func (pm *projectMCP) goLocked(f func()) {
	if !pm.closed {
		pm.wg.Go(f)
	}
}

// close disconnects every server (killing stdio children) and waits for
// the background connects.
func (pm *projectMCP) close() error {
	pm.mu.Lock()
	pm.closed = true
	pm.mu.Unlock()
	pm.cancel()
	err := pm.mgr.CloseAll()
	pm.wg.Wait()
	if err != nil {
		return fmt.Errorf("close MCP servers of project %s: %w", pm.id, err)
	}
	return nil
}

// closeMCP closes a project's manager (project.close).
func (b *Backend) closeMCP(projectID string) {
	b.mcp.mu.Lock()
	pm := b.mcp.byProject[projectID]
	delete(b.mcp.byProject, projectID)
	b.mcp.mu.Unlock()
	if pm == nil {
		return
	}
	if err := pm.close(); err != nil {
		b.log.Warn("close MCP", "project", projectID, "err", err)
	}
}

// closeAllMCP closes every manager; no new one is created afterwards.
func (b *Backend) closeAllMCP() error {
	b.mcp.mu.Lock()
	b.mcp.closed = true
	pms := make([]*projectMCP, 0, len(b.mcp.byProject))
	for _, pm := range b.mcp.byProject {
		pms = append(pms, pm)
	}
	b.mcp.byProject = nil
	b.mcp.mu.Unlock()
	var errs []error
	for _, pm := range pms {
		errs = append(errs, pm.close())
	}
	return errors.Join(errs...)
}

func (b *Backend) mcpOf(projectID string) *projectMCP {
	b.mcp.mu.Lock()
	defer b.mcp.mu.Unlock()
	return b.mcp.byProject[projectID]
}

// attachMCP gives a session engine its project's MCP tools (when the
// project is open) and detaches them when the engine is closed.
func (b *Backend) attachMCP(eng *engine.Engine, projectID string) {
	if pm := b.mcpOf(projectID); pm != nil {
		attachEngine(pm, eng)
	}
}

func attachEngine(pm *projectMCP, eng *engine.Engine) {
	reg := eng.Registry()
	pm.mgr.Attach(reg)
	eng.AddCloser(func() error {
		pm.mgr.Detach(reg)
		return nil
	})
}

// attachLoaded attaches the engines of the project already loaded (a
// project reopened while one of its turns still ran).
func (b *Backend) attachLoaded(pm *projectMCP) {
	var engs []*engine.Engine
	for _, h := range b.hosts.All() {
		if h.ProjectID() != pm.id {
			continue
		}
		if eng := h.Loaded(); eng != nil {
			engs = append(engs, eng)
		}
	}
	for _, eng := range engs {
		attachEngine(pm, eng)
	}
}

// broadcast sends a notification to every initialized connection.
func (b *Backend) broadcast(method string, params any) { b.opts.Broadcast(method, params) }

// projectMCPFor returns an open project's manager: -32002 for an unknown
// project and for one that is not open.
func (b *Backend) projectMCPFor(ctx context.Context, projectID string) (*projectMCP, error) {
	if pm := b.mcpOf(projectID); pm != nil {
		return pm, nil
	}
	if _, err := b.projectOf(ctx, projectID); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: project %s is not open (call project.open)", ErrNotFound, projectID)
}

// serverInfo reports one server, or ErrNotFound.
func (pm *projectMCP) serverInfo(name string) (protocol.MCPServer, error) {
	for _, info := range pm.servers() {
		if info.Name == name {
			return info, nil
		}
	}
	return protocol.MCPServer{}, fmt.Errorf("%w: MCP server %q: %w", ErrNotFound, name, mcp.ErrUnknownServer)
}

// servers reports every server with the names its tools are registered
// under (read from a scratch registry).
func (pm *projectMCP) servers() []protocol.MCPServer { return serversOf(pm.mgr) }

// serversOf reports every server of mgr with the names its tools are
// registered under.
func serversOf(mgr *mcp.Manager) []protocol.MCPServer {
	reg := tools.NewRegistry()
	mgr.Attach(reg)
	specs := reg.Specs()
	mgr.Detach(reg)
	names := map[string][]string{}
	for _, sp := range specs {
		if srv, ok := strings.CutPrefix(sp.Source, "mcp:"); ok {
			names[srv] = append(names[srv], sp.Name)
		}
	}
	sts := mgr.Status()
	out := make([]protocol.MCPServer, len(sts))
	for i, st := range sts {
		out[i] = protocol.MCPServer{MCPStatus: st, ToolNames: nonNilStrings(names[st.Name])}
	}
	return out
}

// save writes the manager's configs to the project's file. pm.mu is held.
func (pm *projectMCP) saveLocked() error {
	if err := mcp.SaveConfigFile(pm.path, pm.mgr.Configs()); err != nil {
		return fmt.Errorf("save %s: %w", pm.path, err)
	}
	return nil
}

// parseServerParam parses the config param of mcp.add and mcp.update.
func parseServerParam(raw json.RawMessage, name string) (mcp.ServerConfig, []protocol.MCPWarning, error) {
	cfg, warns, err := mcp.ParseServer(raw, name)
	if err != nil {
		return mcp.ServerConfig{}, nil, protocol.InvalidField("config", err.Error())
	}
	if strings.TrimSpace(cfg.Name) == "" {
		return mcp.ServerConfig{}, nil, protocol.InvalidField("config.name", "required")
	}
	if err := cfg.Validate(); err != nil {
		return mcp.ServerConfig{}, nil, protocol.InvalidField("config", err.Error())
	}
	return cfg, nonNilWarnings(warns), nil
}

func nonNilWarnings(w []protocol.MCPWarning) []protocol.MCPWarning {
	if w == nil {
		return []protocol.MCPWarning{}
	}
	return w
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func newMCPChanged(projectID, source string, added, removed, changed []string, warnings []protocol.MCPWarning) protocol.MCPChanged {
	return protocol.MCPChanged{
		ProjectID: projectID, Source: source,
		Added: nonNilStrings(added), Removed: nonNilStrings(removed), Changed: nonNilStrings(changed),
		Warnings: wireWarnings(warnings),
	}
}

// ocrPrompt asks a multimodal model for the text of an image.
const ocrPrompt = "Transcribe all the text in this image exactly, preserving line breaks and reading order. Reply with the text only."

// ocrVision is the OCR preset's last fallback (after macOS Vision and
// tesseract): the default provider profile's model reads the image. It is
// resolved at call time, so a key or profile set later is used.
func (b *Backend) ocrVision(ctx context.Context, imageDataURL string) (string, error) {
	prof, err := b.profile(ctx, DefaultProfile)
	if err != nil {
		return "", err
	}
	prov, model, err := b.providers.provider(ctx, prof, "", b.defaultLang())
	if err != nil {
		return "", err
	}
	resp, err := prov.Chat(ctx, llm.ChatRequest{
		Model:     model,
		ReqID:     "ocr",
		MaxTokens: 4096,
		Messages: []llm.Message{{
			Role:        llm.RoleUser,
			Content:     ocrPrompt,
			Attachments: []llm.Attachment{{Name: "image", MimeType: dataURLMime(imageDataURL), DataURL: imageDataURL}},
		}},
	})
	return resp.Text, err
}

// dataURLMime returns the media type of a data URL ("image/png").
func dataURLMime(u string) string {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "application/octet-stream"
	}
	mt, _, _ := strings.Cut(rest, ";")
	return mt
}
