package ipc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/ipc/host"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/sandbox"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/vcs"
)

func (s *Server) sessionRoutes() map[string]handler {
	return map[string]handler{
		"session.create":         s.sessionCreate,
		"session.list":           s.sessionList,
		"session.get":            s.sessionGet,
		"session.delete":         s.sessionDelete,
		"session.rename":         s.sessionRename,
		"session.subscribe":      s.sessionSubscribe,
		"session.unsubscribe":    s.sessionUnsubscribe,
		"session.setMode":        s.sessionSetMode,
		"session.setModel":       s.sessionSetModel,
		"session.setAgent":       s.sessionSetAgent,
		"session.setPermissions": s.sessionSetPermissions,
		"session.setLang":        s.sessionSetLang,
	}
}

// The wire types of the session.* methods, under their names here.
type (
	// SessionInfo is a session on the wire.
	SessionInfo = protocol.Session
	// SandboxInfo is the session's OS sandbox as it really is on this machine.
	SandboxInfo = protocol.SandboxInfo
	// PendingRequestInfo is a pending request on the wire.
	PendingRequestInfo = protocol.PendingRequest
	// SessionCreateParams are the params of session.create.
	SessionCreateParams = protocol.SessionCreateParams
	// SessionGetResult is the result of session.get.
	SessionGetResult = protocol.SessionGetResult
	// SessionSubscribeParams are the params of session.subscribe.
	SessionSubscribeParams = protocol.SessionSubscribeParams
	// SessionSubscribeResult is the result of session.subscribe.
	SessionSubscribeResult = protocol.SessionSubscribeResult

	sessionIDParams = protocol.SessionIDParams
)

// sandboxInfo reports the loaded engine's sandbox, else what the session's
// settings resolve to here.
func (s *Server) sandboxInfo(ss store.Session) SandboxInfo {
	var st sandbox.Status
	if eng := s.loadedEngine(ss.ID); eng != nil {
		st = eng.Permissions().Sandbox()
	} else {
		st, _ = sandbox.Resolve(sessionSettings(ss).sandboxConfig()) // an unavailable required sandbox is in st.Reason
	}
	return SandboxInfo{Mode: string(st.Mode), Backend: st.Kind, Enforced: st.Enforced, Network: st.Network, Reason: st.Reason}
}

func (s *Server) sessionInfo(ctx context.Context, ss store.Session) SessionInfo {
	// The host's state when the session is loaded (the store has it too,
	// maybe a write behind), else the stored one.
	status := ss.Status
	if h := s.loadedHost(ss.ID); h != nil {
		status = string(h.State())
	}
	st, _ := host.ParseTurnState(status)
	running := st.Busy()
	return SessionInfo{
		SessionID: ss.ID, ProjectID: ss.ProjectID, Title: ss.Title, TitleSource: ss.TitleSource,
		Model: ss.Model, Mode: ss.Mode, Agent: ss.Agent, Status: status, Running: running,
		Provider: firstNonEmpty(ss.Provider, DefaultProfile), VCS: string(s.vcsModeOf(ctx, ss)), Lang: s.sessionLang(ss),
		TaskCount: ss.TaskCount, LastSeq: ss.LastSeq, CreatedAt: ss.CreatedAt, UpdatedAt: ss.UpdatedAt,
		Settings: protocol.SessionSettings(sessionSettings(ss)), Sandbox: s.sandboxInfo(ss),
	}
}

func pendingInfos(ps []store.PendingRequest) []PendingRequestInfo {
	out := make([]PendingRequestInfo, len(ps))
	for i, p := range ps {
		out[i] = PendingRequestInfo{RequestID: p.RequestID, Kind: p.Kind, TurnID: p.TurnID, ToolCallID: p.ToolCallID, Seq: p.Seq, Data: p.Data, CreatedAt: p.CreatedAt}
	}
	return out
}

func (s *Server) sessionCreate(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p SessionCreateParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	mode, err := permission.ParseMode(string(p.Mode))
	if err != nil {
		return nil, invalidField("mode", err.Error())
	}
	policy, err := permission.ParseShellPolicy(string(p.ShellPolicy))
	if err != nil {
		return nil, invalidField("shellPolicy", err.Error())
	}
	if p.ApprovalTimeoutMS < 0 {
		return nil, invalidField("approvalTimeoutMs", "must not be negative")
	}
	sbMode, err := sandbox.ParseMode(string(p.Sandbox))
	if err != nil {
		return nil, invalidField("sandbox", err.Error())
	}
	if err := validEffort(p.ReasoningEffort); err != nil {
		return nil, err
	}
	var vcsMode vcs.Mode // "": the project's
	if p.VCS != "" {
		if vcsMode, err = parseVCSMode(string(p.VCS)); err != nil {
			return nil, err
		}
	}
	lang, err := parseLang(p.Lang)
	if err != nil {
		return nil, err
	}
	if lang == "" {
		lang = s.defaultLang() // kept: the session keeps its language
	}
	if _, err := s.projectOf(ctx, p.ProjectID); err != nil {
		return nil, err
	}
	if _, err := s.profile(ctx, p.Provider); err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	ag, err := s.agent(ctx, p.Agent)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	if p.Model == "" {
		p.Model = ag.Model // the agent's model, unless the session names one
	}
	set := SessionSettings{AllowedCommands: p.AllowedCommands, ShellPolicy: string(policy), ApprovalTimeoutMS: p.ApprovalTimeoutMS, ReasoningEffort: p.ReasoningEffort,
		Sandbox: string(sbMode), SandboxNetwork: p.SandboxNetwork, Lang: lang}
	ss := store.Session{ProjectID: p.ProjectID, Title: p.Title, Model: p.Model, Mode: string(mode), Agent: p.Agent, Provider: p.Provider, Settings: withSettings(nil, set)}
	if vcsMode != "" {
		ss.Settings = withVCSMode(ss.Settings, vcsMode)
	}
	if p.Title != "" {
		ss.TitleSource = "user"
	}
	ss, err = s.opts.Store.CreateSession(ctx, ss)
	if err != nil {
		return nil, err
	}
	return protocol.SessionCreateResult{SessionID: ss.ID, Session: s.sessionInfo(ctx, ss)}, nil
}

func validEffort(e string) error {
	switch e {
	case "", "low", "medium", "high":
		return nil
	}
	return invalidField("reasoningEffort", "must be low, medium or high")
}

func (s *Server) sessionList(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p projectIDParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if _, err := s.projectOf(ctx, p.ProjectID); err != nil {
		return nil, err
	}
	list, err := s.opts.Store.Sessions(ctx, p.ProjectID)
	if err != nil {
		return nil, err
	}
	out := make([]SessionInfo, len(list))
	for i, ss := range list {
		out[i] = s.sessionInfo(ctx, ss)
	}
	return protocol.SessionListResult{Sessions: out}, nil
}

func (s *Server) sessionGet(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p sessionIDParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	st := s.opts.Store
	ss, err := st.Session(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	var msgs []llm.Message
	if h := s.loadedHost(p.SessionID); h != nil {
		if eng := h.Loaded(); eng != nil {
			msgs = eng.Messages()
		}
	}
	// The durable queue counts every acknowledged turn not started yet:
	// also those waiting behind a suspended turn, and after a restart.
	qts, err := st.QueuedTurns(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	queued := len(qts)
	if msgs == nil {
		if msgs, err = st.Messages(ctx, p.SessionID); err != nil {
			return nil, err
		}
	}
	pend, err := st.PendingRequests(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	return SessionGetResult{Session: s.sessionInfo(ctx, ss), Messages: wireMessages(msgs), PendingRequests: pendingInfos(pend), QueuedTurns: queued}, nil
}

// wireMessages is the history a UI renders: no system prompt, and no inline
// attachment bytes (refs only).
func wireMessages(msgs []llm.Message) []protocol.Message {
	out := make([]protocol.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role == llm.RoleSystem {
			continue
		}
		w := protocol.Message{Role: m.Role, Content: m.Content, Reasoning: m.Reasoning, ToolCallID: m.ToolCallID, Name: m.Name, Notice: m.Notice}
		for _, tc := range m.ToolCalls {
			w.ToolCalls = append(w.ToolCalls, protocol.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
		}
		for _, a := range m.AttachmentRefs {
			w.AttachmentRefs = append(w.AttachmentRefs, attachmentRef(a))
		}
		out = append(out, w)
	}
	return out
}

// attachmentRef is a stored attachment on the wire.
func attachmentRef(a llm.StoredAttachment) protocol.AttachmentRef {
	return protocol.AttachmentRef{Name: a.Name, MimeType: a.MimeType, Size: a.Size, Path: a.Path}
}

func (s *Server) sessionDelete(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p sessionIDParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if h := s.loadedHost(p.SessionID); h != nil {
		h.Interrupt()
		if err := h.WaitIdle(ctx); err != nil {
			return nil, fmt.Errorf("delete session: waiting for its turn to end: %w", err)
		}
		s.hosts.Forget(p.SessionID)
		if err := h.Close(); err != nil {
			s.log.Warn("close session", "session", p.SessionID, "err", err)
		}
	}
	s.closeSessionMCP(p.SessionID)
	sv, vcsErr := s.vcsOf(ctx, p.SessionID) // resolved before the row goes
	if err := s.opts.Store.DeleteSession(ctx, p.SessionID); err != nil {
		return nil, err
	}
	if dir := toolResultDir(s.opts.Store.SessionDir(p.SessionID), p.SessionID); dir != "" {
		_ = os.RemoveAll(dir) // spilled results outside the session folder (TOOL_RESULT_DIR)
	}
	if vcsErr == nil {
		// Drop the session's snapshot refs; the workspace is not touched.
		if err := sv.Forget(ctx); err != nil {
			s.log.Warn("forget change tracking", "session", p.SessionID, "err", err)
		}
	}
	return protocol.DeletedResult{Deleted: true}, nil
}

func (s *Server) sessionRename(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p protocol.SessionRenameParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	ss, err := s.opts.Store.UpdateSession(ctx, p.SessionID, func(ss *store.Session) {
		ss.Title, ss.TitleSource = p.Title, "user"
	})
	if err != nil {
		return nil, err
	}
	if h, err := s.host(ctx, p.SessionID); err == nil {
		h.RecordSessionEvent(engine.Event{Type: protocol.EventSessionNamed, Data: protocol.SessionNamedData{Name: p.Title, Source: "user"}})
	}
	return s.sessionInfo(ctx, ss), nil
}

func (s *Server) sessionSubscribe(ctx context.Context, c *conn, raw json.RawMessage) (any, error) {
	var p SessionSubscribeParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.AfterSeq < 0 {
		return nil, invalidField("afterSeq", "must not be negative")
	}
	h, err := s.host(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	pend, err := s.opts.Store.PendingRequests(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	// Fence: the connection's previous subscription of this session stops
	// before the answer is queued. What it already queued reaches the
	// client before the answer, so the new stream starts after it: no seq
	// is sent twice on one connection, none is skipped.
	// Fence and install are one step under c.subMu, so a concurrent
	// subscribe of this connection fences this one. The new pump starts
	// now but sends nothing before the answer is queued (markReady).
	c.subMu.Lock()
	defer c.subMu.Unlock()
	sent, err := c.fenceSub(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	after := max(p.AfterSeq, sent)
	sub, upTo, running := h.Subscribe(c.Conn, after)
	c.setSub(sub)
	c.Go(func() { sub.Pump(after, upTo) })
	res := SessionSubscribeResult{LastSeq: upTo, Running: running, PendingRequests: pendingInfos(pend)}
	return followUp(res, sub.MarkReady), nil
}

func (s *Server) sessionUnsubscribe(ctx context.Context, c *conn, raw json.RawMessage) (any, error) {
	var p sessionIDParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	c.subMu.Lock()
	defer c.subMu.Unlock()
	sent, err := c.fenceSub(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	return protocol.UnsubscribeResult{Unsubscribed: sent >= 0}, nil
}
