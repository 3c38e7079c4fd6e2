package backend

import (
	"context"
	"fmt"
	"os"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/sandbox"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/vcs"
)

// sandboxInfo reports the loaded engine's sandbox, else what the session's
// settings resolve to here.
func (b *Backend) sandboxInfo(ss store.Session) protocol.SandboxInfo {
	var st sandbox.Status
	if eng := b.loadedEngine(ss.ID); eng != nil {
		st = eng.Permissions().Sandbox()
	} else {
		st, _ = sandbox.Resolve(sandboxConfig(sessionSettings(ss))) // an unavailable required sandbox is in st.Reason
	}
	return protocol.SandboxInfo{Mode: string(st.Mode), Backend: st.Kind, Enforced: st.Enforced, Network: st.Network, Reason: st.Reason}
}

func (b *Backend) sessionInfo(ctx context.Context, ss store.Session) protocol.Session {
	// The host's state when the session is loaded (the store has it too,
	// maybe a write behind), else the stored one.
	status := ss.Status
	if h := b.loadedHost(ss.ID); h != nil {
		status = string(h.turnState())
	}
	st, _ := ParseTurnState(status)
	running := st.Busy()
	return protocol.Session{
		SessionID: ss.ID, ProjectID: ss.ProjectID, Title: ss.Title, TitleSource: ss.TitleSource,
		Model: ss.Model, Mode: ss.Mode, Agent: ss.Agent, Status: status, Running: running,
		Provider: firstNonEmpty(ss.Provider, DefaultProfile), VCS: string(b.vcsModeOf(ctx, ss)), Lang: b.sessionLang(ss),
		TaskCount: ss.TaskCount, LastSeq: ss.LastSeq, CreatedAt: ss.CreatedAt, UpdatedAt: ss.UpdatedAt,
		Settings: sessionSettings(ss), Sandbox: b.sandboxInfo(ss), Usage: sessionUsageInfo(ss),
		ForkedFrom: forkedFrom(ss), Archived: ss.Archived,
	}
}

func pendingInfos(ps []store.PendingRequest) []protocol.PendingRequest {
	out := make([]protocol.PendingRequest, len(ps))
	for i, p := range ps {
		out[i] = protocol.PendingRequest{RequestID: p.RequestID, Kind: p.Kind, TurnID: p.TurnID, ToolCallID: p.ToolCallID, Seq: p.Seq, Data: p.Data, CreatedAt: p.CreatedAt}
	}
	return out
}

func (b *Backend) CreateSession(ctx context.Context, p protocol.SessionCreateParams) (protocol.SessionCreateResult, error) {
	mode, err := permission.ParseMode(string(p.Mode))
	if err != nil {
		return protocol.SessionCreateResult{}, protocol.InvalidField("mode", err.Error())
	}
	policy, err := permission.ParseShellPolicy(string(p.ShellPolicy))
	if err != nil {
		return protocol.SessionCreateResult{}, protocol.InvalidField("shellPolicy", err.Error())
	}
	if p.ApprovalTimeoutMS < 0 {
		return protocol.SessionCreateResult{}, protocol.InvalidField("approvalTimeoutMs", "must not be negative")
	}
	sbMode, err := sandbox.ParseMode(string(p.Sandbox))
	if err != nil {
		return protocol.SessionCreateResult{}, protocol.InvalidField("sandbox", err.Error())
	}
	if err := validEffort(p.ReasoningEffort); err != nil {
		return protocol.SessionCreateResult{}, err
	}
	var vcsMode vcs.Mode // "": the project's
	if p.VCS != "" {
		if vcsMode, err = parseVCSMode(string(p.VCS)); err != nil {
			return protocol.SessionCreateResult{}, err
		}
	}
	lang, err := parseLang(p.Lang)
	if err != nil {
		return protocol.SessionCreateResult{}, err
	}
	if lang == "" {
		lang = b.defaultLang() // kept: the session keeps its language
	}
	if _, err := b.projectOf(ctx, p.ProjectID); err != nil {
		return protocol.SessionCreateResult{}, err
	}
	if _, err := b.profile(ctx, p.Provider); err != nil {
		return protocol.SessionCreateResult{}, fmt.Errorf("provider: %w", err)
	}
	ag, err := b.agent(ctx, p.Agent)
	if err != nil {
		return protocol.SessionCreateResult{}, fmt.Errorf("agent: %w", err)
	}
	if p.Model == "" {
		p.Model = ag.Model // the agent's model, unless the session names one
	}
	set := protocol.SessionSettings{AllowedCommands: p.AllowedCommands, ShellPolicy: string(policy), ApprovalTimeoutMS: p.ApprovalTimeoutMS, ReasoningEffort: p.ReasoningEffort,
		Sandbox: string(sbMode), SandboxNetwork: p.SandboxNetwork, Lang: lang}
	ss := store.Session{ProjectID: p.ProjectID, Title: p.Title, Model: p.Model, Mode: string(mode), Agent: p.Agent, Provider: p.Provider, Settings: withSettings(nil, set)}
	if vcsMode != "" {
		ss.Settings = withVCSMode(ss.Settings, vcsMode)
	}
	if p.Title != "" {
		ss.TitleSource = "user"
	}
	ss, err = b.opts.Store.CreateSession(ctx, ss)
	if err != nil {
		return protocol.SessionCreateResult{}, err
	}
	return protocol.SessionCreateResult{SessionID: ss.ID, Session: b.sessionInfo(ctx, ss)}, nil
}

func validEffort(e string) error {
	switch e {
	case "", "low", "medium", "high":
		return nil
	}
	return protocol.InvalidField("reasoningEffort", "must be low, medium or high")
}

func (b *Backend) SessionView(ctx context.Context, p protocol.SessionIDParams) (protocol.SessionGetResult, error) {
	st := b.opts.Store
	ss, err := st.Session(ctx, p.SessionID)
	if err != nil {
		return protocol.SessionGetResult{}, err
	}
	var msgs []llm.Message
	if h := b.loadedHost(p.SessionID); h != nil {
		if eng := h.Loaded(); eng != nil {
			msgs = eng.Messages()
		}
	}
	// The durable queue counts every acknowledged turn not started yet:
	// also those waiting behind a suspended turn, and after a restart.
	qts, err := st.QueuedTurns(ctx, p.SessionID)
	if err != nil {
		return protocol.SessionGetResult{}, err
	}
	queued := len(qts)
	if msgs == nil {
		if msgs, err = st.Messages(ctx, p.SessionID); err != nil {
			return protocol.SessionGetResult{}, err
		}
	}
	pend, err := st.PendingRequests(ctx, p.SessionID)
	if err != nil {
		return protocol.SessionGetResult{}, err
	}
	return protocol.SessionGetResult{Session: b.sessionInfo(ctx, ss), Messages: wireMessages(msgs), PendingRequests: pendingInfos(pend), QueuedTurns: queued}, nil
}

// wireMessages is the history a UI renders: no system prompt, and no inline
// attachment bytes (refs only).
func wireMessages(msgs []llm.Message) []protocol.Message {
	out := make([]protocol.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role == llm.RoleSystem {
			continue
		}
		w := protocol.Message{Role: m.Role, Content: m.Content, Reasoning: m.Reasoning, ToolCallID: m.ToolCallID, Name: m.Name, Notice: m.Notice, TurnID: m.TurnID}
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

func (b *Backend) DeleteSession(ctx context.Context, p protocol.SessionIDParams) (protocol.DeletedResult, error) {
	if h := b.loadedHost(p.SessionID); h != nil {
		h.Interrupt()
		if err := h.WaitIdle(ctx); err != nil {
			return protocol.DeletedResult{}, fmt.Errorf("delete session: waiting for its turn to end: %w", err)
		}
		b.hosts.Forget(p.SessionID)
		if err := h.Close(); err != nil {
			b.log.Warn("close session", "session", p.SessionID, "err", err)
		}
	}
	b.closeSessionMCP(p.SessionID)
	sv, vcsErr := b.vcsOf(ctx, p.SessionID) // resolved before the row goes
	if err := b.opts.Store.DeleteSession(ctx, p.SessionID); err != nil {
		return protocol.DeletedResult{}, err
	}
	if dir := toolResultDir(b.opts.Store.SessionDir(p.SessionID), p.SessionID); dir != "" {
		_ = os.RemoveAll(dir) // spilled results outside the session folder (TOOL_RESULT_DIR)
	}
	if vcsErr == nil {
		// Drop the session's snapshot refs; the workspace is not touched.
		if err := sv.Forget(ctx); err != nil {
			b.log.Warn("forget change tracking", "session", p.SessionID, "err", err)
		}
	}
	return protocol.DeletedResult{Deleted: true}, nil
}

func (b *Backend) RenameSession(ctx context.Context, p protocol.SessionRenameParams) (protocol.Session, error) {
	ss, err := b.opts.Store.UpdateSession(ctx, p.SessionID, func(ss *store.Session) {
		ss.Title, ss.TitleSource = p.Title, "user"
	})
	if err != nil {
		return protocol.Session{}, err
	}
	if h, err := b.host(ctx, p.SessionID); err == nil {
		h.RecordSessionEvent(engine.Event{Type: protocol.EventSessionNamed, Data: protocol.SessionNamedData{Name: p.Title, Source: "user"}})
	}
	return b.sessionInfo(ctx, ss), nil
}

// Subscribe subscribes sink to the session's events after afterSeq.
// fence runs once the session is known, before the subscription registers:
// it stops the client's previous subscription of the session and reports
// the last seq that one queued (-1: none), where the new stream starts when
// it is further on. The subscription's pump runs on sink's goroutine and
// sends nothing before MarkReady (after the answer is queued).
// who is the connection as session.presence lists it.
func (b *Backend) Subscribe(ctx context.Context, sink Client, who protocol.PresenceClient, p protocol.SessionSubscribeParams, fence func() (int64, error)) (*Subscription, protocol.SessionSubscribeResult, error) {
	if p.AfterSeq < 0 {
		return nil, protocol.SessionSubscribeResult{}, protocol.InvalidField("afterSeq", "must not be negative")
	}
	h, err := b.host(ctx, p.SessionID)
	if err != nil {
		return nil, protocol.SessionSubscribeResult{}, err
	}
	pend, err := b.opts.Store.PendingRequests(ctx, p.SessionID)
	if err != nil {
		return nil, protocol.SessionSubscribeResult{}, err
	}
	sent, err := fence()
	if err != nil {
		return nil, protocol.SessionSubscribeResult{}, err
	}
	after := max(p.AfterSeq, sent)
	sub, upTo, running := h.Subscribe(sink, after, who)
	clients := h.Clients()
	sink.Go(func() { sub.Pump(after, upTo) })
	return sub, protocol.SessionSubscribeResult{LastSeq: upTo, Running: running, PendingRequests: pendingInfos(pend), Clients: clients}, nil
}
