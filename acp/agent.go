package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
)

// cancelGrace bounds how long a cancelled prompt waits for its turn's end.
const cancelGrace = 30 * time.Second

// Agent implements the ACP agent side over the sidecar's JSON-RPC API.
type Agent struct {
	conn    *sdk.AgentSideConnection // set by Serve before the first message
	log     *slog.Logger
	version string
	locale  string          // the language tag of new sessions that name none
	ctx     context.Context // Serve's lifetime: questions and updates run under it
	wg      *sync.WaitGroup // Serve's goroutines

	rpcMu   sync.Mutex      // guards rpc, methods, changed
	rpc     *client.Client  // the backend's connection; nil between two backends
	methods map[string]bool // the methods rpc's backend routes (its initialize result)
	changed chan struct{}   // closed (and replaced) when rpc changes

	mu       sync.Mutex // guards caps, sessions
	caps     sdk.ClientCapabilities
	sessions map[string]*session
}

var (
	_ sdk.Agent       = (*Agent)(nil)
	_ sdk.AgentLoader = (*Agent)(nil)
)

// setClient makes rpc the connection every method uses from now on;
// methods are the methods its backend routes.
func (a *Agent) setClient(rpc *client.Client, methods map[string]bool) {
	a.rpcMu.Lock()
	defer a.rpcMu.Unlock()
	a.rpc, a.methods = rpc, methods
	close(a.changed)
	a.changed = make(chan struct{})
}

// client returns the backend's connection; while the backend changes
// hands (the owner went away, or this process handed the data dir over) it
// waits for the next one, until ctx or Serve ends.
func (a *Agent) client(ctx context.Context) (*client.Client, error) {
	for {
		a.rpcMu.Lock()
		rpc, changed := a.rpc, a.changed
		a.rpcMu.Unlock()
		if rpc != nil {
			select {
			case <-rpc.Done():
			default:
				return rpc, nil
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-a.ctx.Done():
			return nil, ErrClosed
		}
	}
}

// call is a call on the backend's connection (client).
func (a *Agent) call(ctx context.Context, method string, params, result any) error {
	rpc, err := a.client(ctx)
	if err != nil {
		return err
	}
	return rpc.Call(ctx, method, params, result)
}

func (a *Agent) session(id sdk.SessionId) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[string(id)]
	if s == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnknownSession, id)
	}
	return s, nil
}

func (a *Agent) lookup(id string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// editorFS reports which fs/* methods the editor offered, for a session it
// opened: the hosted server also runs the sessions of an ACP process that
// joined it, whose editor is not this one.
func (a *Agent) editorFS(sid sdk.SessionId) (read, write bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sessions[string(sid)] == nil {
		return false, false
	}
	return a.caps.Fs.ReadTextFile, a.caps.Fs.WriteTextFile
}

// Initialize implements sdk.Agent.
func (a *Agent) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	a.mu.Lock()
	a.caps = p.ClientCapabilities
	a.mu.Unlock()
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:         true,
			PromptCapabilities:  sdk.PromptCapabilities{Image: true, EmbeddedContext: true},
			SessionCapabilities: a.sessionCapabilities(),
			McpCapabilities:     sdk.McpCapabilities{Http: true, Sse: true},
		},
		AgentInfo:   &sdk.Implementation{Name: "zqagent", Title: sdk.Ptr("zqagent sidecar"), Version: a.version},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate implements sdk.Agent: keys come from the keychain or the
// environment, as for the WebSocket sidecar; there is nothing to do here.
func (a *Agent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// NewSession implements sdk.Agent: cwd is opened as a project (with
// project.open's refusals: not a directory, a filesystem root, the home
// directory) and a session is created in it.
func (a *Agent) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	mcps, err := mcpConfigs(p.McpServers)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	var pr protocol.Project
	if err := a.call(ctx, "project.open", protocol.ProjectOpenParams{Path: p.Cwd}, &pr); err != nil {
		return sdk.NewSessionResponse{}, wireError(err)
	}
	var created protocol.SessionCreateResult
	create := protocol.SessionCreateParams{ProjectID: pr.ProjectID, Lang: a.sessionLang(p.Meta)}
	if err := a.call(ctx, "session.create", create, &created); err != nil {
		return sdk.NewSessionResponse{}, wireError(err)
	}
	info, err := a.sessionInfo(ctx, created.SessionID)
	if err != nil {
		return sdk.NewSessionResponse{}, wireError(err)
	}
	s := newSession(created.SessionID, pr.Path)
	s.lang = info.Lang
	if _, err := a.attach(ctx, s, info.LastSeq); err != nil {
		return sdk.NewSessionResponse{}, wireError(err)
	}
	if err := a.addMCP(ctx, s, mcps); err != nil {
		a.detach(s.id)
		return sdk.NewSessionResponse{}, wireError(err)
	}
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(created.SessionID), Modes: modeState(info.Mode)}, nil
}

// sessionLang is the language of a new session: session/new's
// _meta.zqagent.lang or _meta.lang (a tag such as "ja" or "zh-TW"), else
// the editor user's OS locale (Options.Locale), mapped to one of the six
// prompt languages; "" leaves it to the owner's default. An unsupported
// tag in _meta is refused by session.create (invalid params); an OS locale
// without prompts (fr_FR) means English, as for the desktop sidecar.
func (a *Agent) sessionLang(meta map[string]any) string {
	if z, ok := meta["zqagent"].(map[string]any); ok {
		if l, ok := z["lang"].(string); ok && l != "" {
			return l
		}
	}
	if l, ok := meta["lang"].(string); ok && l != "" {
		return l
	}
	if a.locale == "" {
		return ""
	}
	if l, ok := engine.MatchLang(a.locale); ok {
		return l
	}
	return "en"
}

// LoadSession implements sdk.AgentLoader: the stored history is replayed as
// session/update notifications before the response, then the session's
// pending approvals are asked again.
func (a *Agent) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	mcps, err := mcpConfigs(p.McpServers)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	info, err := a.sessionInfo(ctx, string(p.SessionId))
	if err != nil {
		return sdk.LoadSessionResponse{}, wireError(err)
	}
	root, err := a.projectPath(ctx, info.ProjectID)
	if err != nil {
		return sdk.LoadSessionResponse{}, wireError(err)
	}
	s := newSession(info.SessionID, root)
	s.lang = info.Lang
	s.startLoad()
	res, err := a.attach(ctx, s, 0)
	if err != nil {
		return sdk.LoadSessionResponse{}, wireError(err)
	}
	select {
	case <-s.replayUntil(res.LastSeq):
	case <-ctx.Done():
		return sdk.LoadSessionResponse{}, ctx.Err()
	}
	if err := a.addMCP(ctx, s, mcps); err != nil {
		a.detach(s.id)
		return sdk.LoadSessionResponse{}, wireError(err)
	}
	for _, pr := range res.PendingRequests {
		if typ, ok := pendingEventType[pr.Kind]; ok {
			a.ask(s, pr.TurnID, typ, pr.Data)
		}
	}
	return sdk.LoadSessionResponse{Modes: modeState(info.Mode)}, nil
}

// pendingEventType is the event type of a pending request's kind (the
// wire's kind names, ui-protocol.md).
var pendingEventType = map[string]string{
	"approval":  string(protocol.EventPermissionRequired),
	"question":  string(protocol.EventAskUserQuestion),
	"plan":      string(protocol.EventPlanProposed),
	"directory": string(protocol.EventDirectoryRequested),
}

// attach registers the session and subscribes to its events after seq
// after (0: its whole history, for session/load).
func (a *Agent) attach(ctx context.Context, s *session, after int64) (protocol.SessionSubscribeResult, error) {
	a.mu.Lock()
	if a.sessions[s.id] != nil {
		a.mu.Unlock()
		return protocol.SessionSubscribeResult{}, fmt.Errorf("%w: %s", ErrLoaded, s.id)
	}
	a.sessions[s.id] = s
	a.mu.Unlock()
	s.handled(after) // events up to after are not this connection's to show
	rpc, err := a.client(ctx)
	if err != nil {
		a.detach(s.id)
		return protocol.SessionSubscribeResult{}, err
	}
	res, err := rpc.Subscribe(ctx, s.id, after)
	if err != nil {
		a.detach(s.id)
		return protocol.SessionSubscribeResult{}, err
	}
	return res, nil
}

func (a *Agent) detach(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.sessions, id)
}

func (a *Agent) sessionInfo(ctx context.Context, id string) (protocol.Session, error) {
	var res protocol.SessionGetResult
	if err := a.call(ctx, "session.get", protocol.SessionIDParams{SessionID: id}, &res); err != nil {
		return protocol.Session{}, err
	}
	return res.Session, nil
}

func (a *Agent) projectPath(ctx context.Context, projectID string) (string, error) {
	var res protocol.ProjectListResult
	if err := a.call(ctx, "project.list", protocol.Empty{}, &res); err != nil {
		return "", err
	}
	for _, p := range res.Projects {
		if p.ProjectID == projectID {
			return p.Path, nil
		}
	}
	return "", fmt.Errorf("project %s of the session is gone", projectID)
}

// Prompt implements sdk.Agent: a turn is started (queued behind a running
// one) and its events stream as session updates until its turn_end, which
// gives the stop reason.
func (a *Agent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, wireError(err)
	}
	text, atts, err := promptInput(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, wireError(err)
	}
	// The editor's MCP servers are asked about before the first turn that
	// could use them; a cancelled prompt asks no more.
	if err := a.askMCP(ctx, s); err != nil {
		if ctx.Err() != nil {
			return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
		}
		return sdk.PromptResponse{}, wireError(err)
	}
	var started protocol.TurnResult
	params := protocol.TurnStartParams{SessionID: s.id, Text: text, Attachments: atts}
	// turn.start is not cancelled with the prompt: a session/cancel that
	// lands while it is in flight (the turn may already be asking for an
	// approval) must stop the turn that started, below, not leave it
	// running behind an error.
	if err := a.call(context.WithoutCancel(ctx), "turn.start", params, &started); err != nil {
		return sdk.PromptResponse{}, wireError(err)
	}
	ended := s.wait(started.TurnID)
	var e turnEnd
	select {
	case e = <-ended:
	case <-ctx.Done():
		// session/cancel (the SDK cancels the prompt's context) or the
		// editor went away: stop the turn and report how it ended.
		a.interrupt(s.id)
		t := time.NewTimer(cancelGrace)
		defer t.Stop()
		select {
		case e = <-ended:
		case <-t.C:
			s.unwait(started.TurnID)
			return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
		case <-a.ctx.Done():
			return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
		}
	case <-a.ctx.Done():
		return sdk.PromptResponse{}, wireError(ErrClosed)
	}
	reason, err := stopReason(e.end, e.lastErr)
	if err != nil {
		return sdk.PromptResponse{}, wireError(err)
	}
	return sdk.PromptResponse{StopReason: reason}, nil
}

// promptInput turns a prompt's content blocks into turn.start's text and
// attachments: text as is, embedded text resources and resource links as
// text that names them, images as attachments.
func promptInput(blocks []sdk.ContentBlock) (string, []protocol.Attachment, error) {
	var parts []string
	var atts []protocol.Attachment
	for _, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.Image != nil:
			name := fmt.Sprintf("image-%d", len(atts)+1)
			if b.Image.Uri != nil {
				name = *b.Image.Uri
			}
			atts = append(atts, protocol.Attachment{Name: name, MimeType: b.Image.MimeType, DataURL: "data:" + b.Image.MimeType + ";base64," + b.Image.Data})
		case b.ResourceLink != nil:
			parts = append(parts, "@"+b.ResourceLink.Uri)
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			parts = append(parts, fmt.Sprintf("<file uri=%q>\n%s\n</file>", r.Uri, r.Text))
		}
	}
	text := strings.Join(parts, "\n")
	if strings.TrimSpace(text) == "" && len(atts) == 0 {
		return "", nil, ErrBadPrompt
	}
	return text, atts, nil
}

// interrupt stops the session's running turn.
func (a *Agent) interrupt(id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), 5*time.Second)
	defer cancel()
	if err := a.call(ctx, "turn.interrupt", protocol.SessionIDParams{SessionID: id}, nil); err != nil {
		a.log.Warn("acp: interrupt", "session", id, "err", err)
	}
}

// Cancel implements sdk.Agent (session/cancel).
func (a *Agent) Cancel(_ context.Context, p sdk.CancelNotification) error {
	if _, err := a.session(p.SessionId); err != nil {
		return wireError(err)
	}
	a.interrupt(string(p.SessionId))
	return nil
}

// SetSessionMode implements sdk.Agent: session.setMode with one of our four
// modes.
func (a *Agent) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	if _, err := a.session(p.SessionId); err != nil {
		return sdk.SetSessionModeResponse{}, wireError(err)
	}
	err := a.call(ctx, "session.setMode", protocol.SessionSetModeParams{SessionID: string(p.SessionId), Mode: protocol.Mode(p.ModeId)}, nil)
	return sdk.SetSessionModeResponse{}, wireError(err)
}

// ListSessions implements sdk.Agent (session/list, offered as
// sessionCapabilities.list): the sessions of the data dir, of every project
// or of the project at cwd, newest first, with their titles (the names the
// sidecar gave them, in their language); archived sessions are left out
// (session.archive). One page: nextCursor is never set, and a cursor is
// refused.
func (a *Agent) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	if p.Cursor != nil {
		return sdk.ListSessionsResponse{}, sdk.NewInvalidParams(map[string]any{"cursor": "this agent lists every session in one page; no cursor is issued"})
	}
	var projects protocol.ProjectListResult
	if err := a.call(ctx, "project.list", protocol.Empty{}, &projects); err != nil {
		return sdk.ListSessionsResponse{}, wireError(err)
	}
	want := ""
	if p.Cwd != nil {
		want = filepath.Clean(*p.Cwd)
		if r, err := filepath.EvalSymlinks(want); err == nil {
			want = r
		}
	}
	type row struct {
		info    sdk.SessionInfo
		updated time.Time
	}
	var rows []row
	for _, pr := range projects.Projects {
		if want != "" && filepath.Clean(pr.Path) != want {
			continue
		}
		// Every page of the project's sessions that are not archived.
		limit := protocol.SessionListMaxLimit
		cursor := ""
		for {
			var list protocol.SessionListResult
			if err := a.call(ctx, "session.list", protocol.SessionListParams{ProjectID: pr.ProjectID, Limit: &limit, Cursor: cursor}, &list); err != nil {
				return sdk.ListSessionsResponse{}, wireError(err)
			}
			for _, ss := range list.Sessions {
				info := sdk.SessionInfo{SessionId: sdk.SessionId(ss.SessionID), Cwd: pr.Path, UpdatedAt: sdk.Ptr(ss.UpdatedAt.UTC().Format(time.RFC3339))}
				if ss.Title != "" {
					info.Title = sdk.Ptr(sessionTitle(ss.Title))
				}
				rows = append(rows, row{info, ss.UpdatedAt})
			}
			if list.NextCursor == "" {
				break
			}
			cursor = list.NextCursor
		}
	}
	slices.SortStableFunc(rows, func(x, y row) int { return y.updated.Compare(x.updated) })
	out := make([]sdk.SessionInfo, len(rows))
	for i, r := range rows {
		out[i] = r.info
	}
	return sdk.ListSessionsResponse{Sessions: out}, nil
}

// ResumeSession implements sdk.Agent; the capability is not offered.
func (a *Agent) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}

// CloseSession implements sdk.Agent; the capability is not offered.
func (a *Agent) CloseSession(context.Context, sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	return sdk.CloseSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionClose)
}

// SetSessionConfigOption implements sdk.Agent; no config options are
// offered (modes are the session modes).
func (a *Agent) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetConfigOption)
}

// ask puts an interactive event to the editor on its own goroutine (the
// dispatcher never waits for the user) and answers the request with
// request.respond. An editor that does not answer (it went away) leaves the
// request pending in the store, answerable after a session/load.
//
// The question is withdrawn (its context cancelled, which the SDK sends as
// $/cancel_request) when its turn ends before the editor answered: the turn
// was interrupted, or the other front door answered and the turn went on to
// its end.
func (a *Agent) ask(s *session, turnID, typ string, raw json.RawMessage) {
	ctx, done := s.askContext(a.ctx, turnID)
	a.wg.Go(func() {
		defer done()
		resp, requestID, err := a.askNow(ctx, s, typ, raw)
		if err != nil {
			a.log.Info("acp: question to the editor", "session", s.id, "type", typ, "err", err)
			return
		}
		err = a.respond(s.id, requestID, resp)
		if client.Code(err) == protocol.CodeConflict || client.Code(err) == protocol.CodeNotFound {
			return // answered elsewhere first, or the turn was interrupted: the first answer wins
		}
		if err != nil {
			a.log.Warn("acp: respond", "session", s.id, "request", requestID, "err", err)
		}
	})
}

// respond answers a request on the backend; an answer given while the
// backend changed hands goes to the next one (the request is in the store).
func (a *Agent) respond(sessionID, requestID string, resp any) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), reconnectTimeout)
	defer cancel()
	for {
		rpc, err := a.client(ctx)
		if err != nil {
			return err
		}
		err = rpc.Respond(ctx, sessionID, requestID, resp)
		if !errors.Is(err, client.ErrClosed) {
			return err
		}
	}
}

// askNow asks the editor and returns the response for request.respond.
func (a *Agent) askNow(ctx context.Context, s *session, typ string, raw json.RawMessage) (any, string, error) {
	req := sdk.RequestPermissionRequest{SessionId: sdk.SessionId(s.id)}
	switch protocol.EventType(typ) {
	case protocol.EventPermissionRequired:
		var d protocol.PermissionRequiredData
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, "", err
		}
		req.ToolCall = s.tr.callUpdate(d)
		req.Options = permissionOptions(d)
		out, err := a.conn.RequestPermission(ctx, req)
		if err != nil {
			return nil, "", err
		}
		return protocol.ApprovalResponse{Outcome: string(approvalOutcome(d, out.Outcome))}, d.RequestID, nil
	case protocol.EventPlanProposed:
		var d protocol.PlanProposedData
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, "", err
		}
		tx := cardTextOf(s.lang)
		req.ToolCall = sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(d.ReqID), Title: sdk.Ptr(flagTitle(tx.approvePlan, d.Warnings)), Kind: sdk.Ptr(sdk.ToolKindSwitchMode),
			Status: sdk.Ptr(sdk.ToolCallStatusPending), Content: append(warningContent(d.Warnings), sdk.ToolContent(sdk.TextBlock(engine.DisplayProse(d.Plan))))}
		req.Options = yesNoOptions(tx.approvePlan, tx.rejectPlan)
		out, err := a.conn.RequestPermission(ctx, req)
		if err != nil {
			return nil, "", err
		}
		return protocol.PlanResponse{Approved: allowed(out.Outcome)}, d.RequestID, nil
	case protocol.EventDirectoryRequested:
		var d protocol.DirectoryRequestedData
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, "", err
		}
		tx := cardTextOf(s.lang)
		access := tx.readOnly
		if d.Writable {
			access = tx.readWrite
		}
		title := oneLine(engine.DisplayText(fmt.Sprintf(tx.grantAccess, access, d.Path)))
		req.ToolCall = sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(d.ReqID), Title: sdk.Ptr(flagTitle(title, d.Warnings)),
			Kind: sdk.Ptr(sdk.ToolKindOther), Status: sdk.Ptr(sdk.ToolCallStatusPending), Locations: []sdk.ToolCallLocation{{Path: d.Path}},
			Content: append(warningContent(d.Warnings), sdk.ToolContent(sdk.TextBlock(engine.DisplayProse(d.Reason))))}
		req.Options = yesNoOptions(tx.grant, tx.refuse)
		out, err := a.conn.RequestPermission(ctx, req)
		if err != nil {
			return nil, "", err
		}
		return protocol.DirectoryResponse{Granted: allowed(out.Outcome)}, d.RequestID, nil
	case protocol.EventAskUserQuestion:
		var d protocol.AskUserQuestionData
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, "", err
		}
		if len(d.Options) == 0 {
			return protocol.QuestionResponse{Answer: noAnswer}, d.RequestID, nil
		}
		// The title is the question's first line; the content has all of it.
		question := engine.DisplayProse(d.Question)
		req.ToolCall = sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(d.ReqID), Title: sdk.Ptr(flagTitle(oneLine(question), d.Warnings)), Kind: sdk.Ptr(sdk.ToolKindOther),
			Status: sdk.Ptr(sdk.ToolCallStatusPending), Content: append(warningContent(d.Warnings), sdk.ToolContent(sdk.TextBlock(question)))}
		req.Options = questionOptions(d)
		out, err := a.conn.RequestPermission(ctx, req)
		if err != nil {
			return nil, "", err
		}
		return protocol.QuestionResponse{Answer: questionAnswer(d, out.Outcome)}, d.RequestID, nil
	}
	return nil, "", errors.New("not an interactive event: " + typ)
}
