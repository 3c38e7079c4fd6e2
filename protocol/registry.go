package protocol

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// MethodSpec describes one method: the Go types of its params and result
// (zero values).
type MethodSpec struct {
	Name   string
	Params any
	Result any
}

// NotificationSpec describes one server-to-client notification.
type NotificationSpec struct {
	Method string
	Params any
}

// EventSpec describes one event type's data.
type EventSpec struct {
	Type EventType
	Data any
}

// Methods lists every method the sidecar serves, in ui-protocol.md's order.
func Methods() []MethodSpec {
	return []MethodSpec{
		{"initialize", InitializeParams{}, InitializeResult{}},
		{"shutdown", Empty{}, OKResult{}},

		{"project.open", ProjectOpenParams{}, Project{}},
		{"project.close", ProjectIDParams{}, ProjectCloseResult{}},
		{"project.list", Empty{}, ProjectListResult{}},
		{"project.setSettings", ProjectSetSettingsParams{}, Project{}},
		{"project.trustGit", ProjectTrustGitParams{}, Project{}},
		{"project.untrustGit", ProjectIDParams{}, Project{}},
		{"worktree.list", ProjectIDParams{}, WorktreeListResult{}},
		{"worktree.create", WorktreeCreateParams{}, WorktreeCreateResult{}},
		{"worktree.remove", WorktreeRemoveParams{}, WorktreeRemoveResult{}},

		{"session.create", SessionCreateParams{}, SessionCreateResult{}},
		{"session.list", SessionListParams{}, SessionListResult{}},
		{"session.archive", SessionIDParams{}, Session{}},
		{"session.unarchive", SessionIDParams{}, Session{}},
		{"session.get", SessionIDParams{}, SessionGetResult{}},
		{"session.delete", SessionIDParams{}, DeletedResult{}},
		{"session.rename", SessionRenameParams{}, Session{}},
		{"session.subscribe", SessionSubscribeParams{}, SessionSubscribeResult{}},
		{"session.unsubscribe", SessionIDParams{}, UnsubscribeResult{}},
		{"session.setMode", SessionSetModeParams{}, Session{}},
		{"session.setModel", SessionSetModelParams{}, Session{}},
		{"session.setAgent", SessionSetAgentParams{}, Session{}},
		{"session.setPermissions", SessionSetPermissionsParams{}, Session{}},
		{"session.setLang", SessionSetLangParams{}, Session{}},
		{"session.grants", SessionIDParams{}, SessionGrantsResult{}},
		{"session.revokeGrant", SessionRevokeGrantParams{}, RevokedResult{}},
		{"session.fork", SessionForkParams{}, SessionCreateResult{}},
		{"session.export", SessionExportParams{}, SessionExportResult{}},
		{"session.import", SessionImportParams{}, SessionImportResult{}},
		{"session.rewind", SessionRewindParams{}, SessionRewindResult{}},

		{"turn.start", TurnStartParams{}, TurnResult{}},
		{"turn.interrupt", SessionIDParams{}, TurnInterruptResult{}},
		{"turn.retry", SessionIDParams{}, TurnResult{}},
		{"turn.resume", SessionIDParams{}, TurnResult{}},
		{"turn.steer", TurnSteerParams{}, TurnSteerResult{}},
		{"turn.unsteer", TurnSteerParams{}, TurnUnsteerResult{}},

		{"queue.list", SessionIDParams{}, QueueListResult{}},
		{"queue.update", QueueUpdateParams{}, QueueListResult{}},
		{"queue.move", QueueMoveParams{}, QueueListResult{}},
		{"queue.remove", QueueTurnParams{}, QueueListResult{}},

		{"request.respond", RequestRespondParams{}, RequestRespondResult{}},

		{"keys.set", KeysSetParams{}, KeyStatus{}},
		{"keys.delete", KeysProviderParams{}, KeyStatus{}},
		{"keys.status", Empty{}, KeysStatusResult{}},

		{"providers.list", Empty{}, ProvidersListResult{}},
		{"providers.set", ProvidersSetParams{}, Provider{}},
		{"providers.delete", NameParams{}, DeletedResult{}},
		{"models.list", ModelsListParams{}, ModelsListResult{}},

		{"search.get", Empty{}, SearchConfig{}},
		{"search.set", SearchSetParams{}, SearchConfig{}},

		{"agents.list", Empty{}, AgentsListResult{}},
		{"agents.add", AgentsAddParams{}, Agent{}},
		{"agents.update", AgentsUpdateParams{}, Agent{}},
		{"agents.remove", NameParams{}, RemovedResult{}},

		{"vcs.turns", SessionIDParams{}, VCSTurnsResult{}},
		{"vcs.diff", VCSDiffParams{}, VCSDiffResult{}},
		{"vcs.restore", VCSRestoreParams{}, VCSRestoreResult{}},
		{"vcs.usage", ProjectIDParams{}, VCSUsageResult{}},

		{"mcp.list", ProjectIDParams{}, MCPListResult{}},
		{"mcp.add", MCPAddParams{}, MCPServerResult{}},
		{"mcp.update", MCPUpdateParams{}, MCPServerResult{}},
		{"mcp.remove", MCPNameParams{}, RemovedResult{}},
		{"mcp.refresh", MCPNameParams{}, MCPServerResult{}},
		{"mcp.trust", MCPTrustParams{}, MCPServerResult{}},
		{"mcp.untrust", MCPNameParams{}, MCPServerResult{}},
		{"mcp.sessionAdd", MCPSessionAddParams{}, MCPSessionAddResult{}},
		{"mcp.sessionTrust", MCPSessionTrustParams{}, MCPServerResult{}},
		{"mcp.login", MCPLoginParams{}, MCPLoginResult{}},
		{"mcp.logout", MCPLoginParams{}, MCPServerResult{}},

		{"files.search", FilesSearchParams{}, FilesSearchResult{}},

		{"terminal.create", TerminalCreateParams{}, Terminal{}},
		{"terminal.write", TerminalWriteParams{}, TerminalWriteResult{}},
		{"terminal.resize", TerminalResizeParams{}, Terminal{}},
		{"terminal.kill", TerminalRef{}, KilledResult{}},
		{"terminal.list", ProjectIDParams{}, TerminalListResult{}},
		{"terminal.subscribe", TerminalSubscribeParams{}, TerminalSubscribeResult{}},
		{"terminal.unsubscribe", TerminalRef{}, UnsubscribeResult{}},
	}
}

// Notifications lists every notification the sidecar sends.
func Notifications() []NotificationSpec {
	return []NotificationSpec{
		{"session.event", SessionEvent{}},
		{"session.dropped", SessionDropped{}},
		{"session.presence", SessionPresence{}},
		{"mcp.status", MCPStatusNotification{}},
		{"mcp.changed", MCPChanged{}},
		{"terminal.output", TerminalOutput{}},
		{"terminal.exit", TerminalExit{}},
		{"terminal.dropped", TerminalDropped{}},
	}
}

// Events lists every event type with its data, in the engine's order.
func Events() []EventSpec {
	return []EventSpec{
		{EventTurnStart, TurnStartData{}},
		{EventAssistantDelta, DeltaData{}},
		{EventReasoningDelta, DeltaData{}},
		{EventAssistantMessage, AssistantMessageData{}},
		{EventToolProposed, ToolProposedData{}},
		{EventPermissionRequired, PermissionRequiredData{}},
		{EventToolStarted, ToolStartedData{}},
		{EventToolFinished, ToolFinishedData{}},
		{EventIterationEnd, IterationEndData{}},
		{EventTurnEnd, TurnEndData{}},
		{EventError, EventErrorData{}},
		{EventInterrupted, InterruptedData{}},
		{EventCompacting, CompactingData{}},
		{EventCompacted, CompactedData{}},
		{EventQueueSteering, QueueSteeringData{}},
		{EventLLMRequest, LLMRequestData{}},
		{EventAskUserQuestion, AskUserQuestionData{}},
		{EventPlanProposed, PlanProposedData{}},
		{EventDirectoryRequested, DirectoryRequestedData{}},
		{EventLLMRetry, LLMRetryData{}},
		{EventSessionNamed, SessionNamedData{}},
		{EventTurnSuspended, TurnSuspendedData{}},
		{EventUsage, UsageData{}},
		{EventRateLimits, RateLimitsData{}},
		{EventQueueChanged, QueueChangedData{}},
		{EventSessionRewound, SessionRewoundData{}},
		{EventRewindInterrupted, RewindInterruptedData{}},
		{EventRequestResolved, RequestResolvedData{}},
		{EventElicitationRequested, ElicitationRequestedData{}},
	}
}

// RequestEvents maps each request kind to the event type that opens it.
func RequestEvents() map[RequestKind]EventType {
	return map[RequestKind]EventType{
		RequestApproval:  EventPermissionRequired,
		RequestQuestion:  EventAskUserQuestion,
		RequestPlan:      EventPlanProposed,
		RequestDirectory: EventDirectoryRequested,

		RequestElicitation: EventElicitationRequested,
	}
}

// DecodeData decodes an event's data into the type Events() names for t
// and returns it (a value, e.g. TurnEndData).
func DecodeData(t EventType, data json.RawMessage) (any, error) {
	for _, e := range Events() {
		if e.Type != t {
			continue
		}
		p := reflect.New(reflect.TypeOf(e.Data))
		if err := json.Unmarshal(data, p.Interface()); err != nil {
			return nil, fmt.Errorf("decode %s data: %w", t, err)
		}
		return p.Elem().Interface(), nil
	}
	return nil, fmt.Errorf("unknown event type %q", t)
}

// Decode decodes e.Data (see DecodeData).
func (e SessionEvent) Decode() (any, error) { return DecodeData(EventType(e.Type), e.Data) }
