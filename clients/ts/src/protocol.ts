// The wire types of the sidecar's protocol (ui-protocol.md), as the client
// exposes them: the method map that types `call`, the notifications, and the
// event union narrowed by `type`.
//
// Field shapes follow ui-protocol.md §5–§7. Members the document marks `?`
// are optional here. Every object may carry more members than listed (the
// server may be newer than this package), so unknown members are allowed.

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

// ---------------------------------------------------------------------------
// Objects

export interface ServerInfo {
  name: string;
  version: string;
}

export interface Capabilities {
  methods: string[];
  eventTypes: string[];
  maxFrameBytes: number;
  maxBatch: number;
  provider: "openai" | "scripted" | "demo" | (string & {});
  notice?: string;
  languages: string[];
  defaultLang: string;
  [k: string]: unknown;
}

export interface ProjectSettings {
  vcs: VcsMode;
}

export type VcsMode = "off" | "auto" | "native" | "shadow";
export type Mode = "discuss" | "plan" | "interactive" | "auto";
export type ShellPolicy = "approve" | "sandbox" | "workspace" | "all";
export type SandboxMode = "auto" | "off" | "required";

export interface Project {
  projectId: string;
  path: string;
  git: boolean;
  open: boolean;
  settings: ProjectSettings;
}

export interface SessionSettings {
  allowedCommands?: string[];
  shellPolicy?: ShellPolicy;
  approvalTimeoutMs?: number;
  reasoningEffort?: "low" | "medium" | "high";
  sandbox?: SandboxMode;
  sandboxNetwork?: boolean;
  lang?: string;
}

export interface Session {
  sessionId: string;
  projectId: string;
  title: string;
  titleSource: "auto" | "user";
  model: string;
  mode: Mode;
  agent: string;
  provider: string;
  vcs: string;
  lang: string;
  status: "idle" | "running" | "interrupted" | "suspended";
  running: boolean;
  taskCount: number;
  lastSeq: number;
  createdAt: string;
  updatedAt: string;
  settings: SessionSettings;
  sandbox: { mode: SandboxMode; backend: string; enforced: boolean; network: boolean; reason?: string };
  [k: string]: unknown;
}

export type RequestKind = "approval" | "question" | "plan" | "directory";

/** An unanswered request, as `session.subscribe` and `session.get` list it. */
export type PendingRequest =
  | PendingOf<"approval", PermissionRequiredData>
  | PendingOf<"question", AskUserQuestionData>
  | PendingOf<"plan", PlanProposedData>
  | PendingOf<"directory", DirectoryRequestedData>;

interface PendingOf<K extends RequestKind, D> {
  requestId: string;
  kind: K;
  turnId: string;
  toolCallId: string;
  /** seq of the event that opened it. */
  seq: number;
  /** data of the event that opened it. */
  data: D;
  createdAt: string;
}

/** The answer of each kind of request (`request.respond {response}`). */
export interface ResponseOf {
  approval: { outcome: "once" | "always_tool" | "always_command" | "deny" };
  question: { answer: string };
  plan: { approved: boolean; feedback?: string };
  directory: { granted: boolean; path?: string; writable?: boolean };
}

export interface Message {
  role: string;
  content: string;
  reasoning?: string;
  tool_calls?: { id: string; name: string; arguments: string }[];
  tool_call_id?: string;
  name?: string;
  [k: string]: unknown;
}

export interface VcsTurn {
  number: number;
  commit: string;
  status: string;
  time: string;
  files: { path: string; status: "A" | "M" | "D" | "R"; oldPath?: string }[];
}

export interface TerminalInfo {
  id: string;
  projectId: string;
  name: string;
  cwd: string;
  command: string;
  cols: number;
  rows: number;
  alive: boolean;
  exitCode?: number;
  pid: number;
  createdAt: string;
  lastSeq: number;
}

export interface Attachment {
  name: string;
  mimeType: string;
  dataUrl: string;
}

// ---------------------------------------------------------------------------
// Methods: params and results.

/** Every method the client knows, with its params and result. */
export interface Methods {
  initialize: {
    params: {
      client: { name: string; version: string };
      protocolVersion: number;
      interruptOnDisconnect?: boolean;
      locale?: string;
    };
    result: { server: ServerInfo; protocolVersion: number; capabilities: Capabilities };
  };
  shutdown: { params: Record<string, never>; result: { ok: true } };

  "project.open": { params: { path: string; vcs?: VcsMode }; result: Project };
  "project.close": { params: { projectId: string }; result: { closed: boolean } };
  "project.list": { params: Record<string, never>; result: { projects: Project[] } };
  "project.setSettings": { params: { projectId: string; vcs?: VcsMode }; result: Project };

  "session.create": {
    params: {
      projectId: string;
      mode?: Mode;
      model?: string;
      agent?: string;
      title?: string;
      allowedCommands?: string[];
      shellPolicy?: ShellPolicy;
      approvalTimeoutMs?: number;
      reasoningEffort?: "low" | "medium" | "high";
      provider?: string;
      vcs?: VcsMode;
      sandbox?: SandboxMode;
      sandboxNetwork?: boolean;
      lang?: string;
    };
    result: { sessionId: string; session: Session };
  };
  "session.list": { params: { projectId: string }; result: { sessions: Session[] } };
  "session.get": {
    params: { sessionId: string };
    result: { session: Session; messages: Message[]; pendingRequests: PendingRequest[]; queuedTurns: number };
  };
  "session.delete": { params: { sessionId: string }; result: { deleted: true } };
  "session.rename": { params: { sessionId: string; title: string }; result: Session };
  "session.subscribe": { params: { sessionId: string; afterSeq: number }; result: SubscribeResult };
  "session.unsubscribe": { params: { sessionId: string }; result: { unsubscribed: boolean } };
  "session.setMode": { params: { sessionId: string; mode: Mode }; result: Session };
  "session.setModel": { params: { sessionId: string; model: string }; result: Session };
  "session.setAgent": { params: { sessionId: string; agent: string }; result: Session };
  "session.setPermissions": {
    params: {
      sessionId: string;
      allowedCommands?: string[];
      shellPolicy?: ShellPolicy;
      approvalTimeoutMs?: number;
      sandbox?: SandboxMode;
      sandboxNetwork?: boolean;
    };
    result: Session;
  };
  "session.setLang": { params: { sessionId: string; lang: string }; result: Session };
  "session.grants": {
    params: { sessionId: string };
    result: { grants: { kind: "tool" | "command"; name: string; grantedAt: string | null }[] };
  };
  "session.revokeGrant": {
    params: { sessionId: string; kind: "tool" | "command"; name: string };
    result: { revoked: true };
  };

  "turn.start": {
    params: { sessionId: string; text: string; attachments?: Attachment[] };
    result: { turnId: string; queued: number };
  };
  "turn.interrupt": { params: { sessionId: string }; result: { interrupted: boolean; dropped: string[] } };
  "turn.retry": { params: { sessionId: string }; result: { turnId: string; queued: number } };
  "turn.resume": { params: { sessionId: string }; result: { turnId: string; queued: number } };
  "turn.steer": { params: { sessionId: string; text: string }; result: { queued: true } };
  "turn.unsteer": { params: { sessionId: string; text: string }; result: { removed: boolean } };

  "request.respond": {
    params: { sessionId: string; requestId: string; response: ResponseOf[RequestKind] };
    result: { answered: true; resumed: boolean };
  };

  "keys.set": { params: { provider: string; apiKey: string }; result: KeyStatus };
  "keys.delete": { params: { provider: string }; result: KeyStatus };
  "keys.status": { params: Record<string, never>; result: { keys: KeyStatus[] } };

  "providers.list": { params: Record<string, never>; result: { providers: Provider[] } };
  "providers.set": { params: Partial<Provider> & { name: string }; result: Provider };
  "providers.delete": { params: { name: string }; result: { deleted: true } };
  "models.list": { params: { provider?: string }; result: { provider: string; models: string[]; cached: boolean } };

  "search.get": { params: Record<string, never>; result: SearchConfig };
  "search.set": { params: { kind: SearchConfig["kind"]; baseUrl?: string }; result: SearchConfig };

  "agents.list": { params: Record<string, never>; result: { agents: Agent[] } };
  "agents.add": { params: { name: string; prompt: string; description?: string; model?: string }; result: Agent };
  "agents.update": { params: { name: string; prompt?: string; description?: string; model?: string }; result: Agent };
  "agents.remove": { params: { name: string }; result: { removed: true } };

  "vcs.turns": {
    params: { sessionId: string };
    result: { turns: VcsTurn[]; plan: { requested: string; mode: string; status: string } };
  };
  "vcs.diff": { params: { sessionId: string; turn: number }; result: { diff: string } };
  "vcs.restore": {
    params: { sessionId: string; turn: number; paths?: string[]; dryRun?: boolean };
    result: { restored: string[]; overwritten: string[]; deleted: string[]; missing: string[]; dryRun: boolean };
  };

  "mcp.list": { params: { projectId: string }; result: { servers: McpServer[]; configs: unknown; warnings: unknown[]; configPath: string } };
  "mcp.add": { params: { projectId: string; name: string; [k: string]: unknown }; result: { server: McpServer; warnings: unknown[] } };
  "mcp.update": { params: { projectId: string; name: string; [k: string]: unknown }; result: { server: McpServer; warnings: unknown[] } };
  "mcp.remove": { params: { projectId: string; name: string }; result: { removed: boolean; [k: string]: unknown } };
  "mcp.refresh": { params: { projectId: string; name: string }; result: { server: McpServer; [k: string]: unknown } };
  "mcp.trust": { params: { projectId: string; name: string; hash: string }; result: { server: McpServer; warnings: unknown[] } };
  "mcp.untrust": { params: { projectId: string; name: string }; result: { server: McpServer; warnings: unknown[] } };

  "terminal.create": {
    params: {
      projectId: string;
      cols: number;
      rows: number;
      cwd?: string;
      shell?: string;
      command?: string[];
      env?: Record<string, string>;
      name?: string;
    };
    result: TerminalInfo;
  };
  "terminal.write": {
    params: { projectId: string; terminalId: string; data: string } | { projectId: string; terminalId: string; dataBase64: string };
    result: { written: number };
  };
  "terminal.resize": { params: { projectId: string; terminalId: string; cols: number; rows: number }; result: TerminalInfo };
  "terminal.kill": { params: { projectId: string; terminalId: string }; result: { killed: true } };
  "terminal.list": { params: { projectId: string }; result: { terminals: TerminalInfo[] } };
  "terminal.subscribe": {
    params: { projectId: string; terminalId: string; afterSeq?: number };
    result: { lastSeq: number; alive: boolean; exitCode?: number };
  };
  "terminal.unsubscribe": { params: { projectId: string; terminalId: string }; result: { unsubscribed: boolean } };
}

export type MethodName = keyof Methods;
export type ParamsOf<M extends MethodName> = Methods[M]["params"];
export type ResultOf<M extends MethodName> = Methods[M]["result"];

export interface SubscribeResult {
  lastSeq: number;
  running: boolean;
  pendingRequests: PendingRequest[];
}

export interface KeyStatus {
  provider: string;
  configured: boolean;
  source: "keychain" | "stdin" | "env" | "";
  envVar: string;
  error?: string;
}

export interface Provider {
  name: string;
  baseUrl: string;
  apiMode: "auto" | "responses" | "chat";
  defaultModel: string;
  headers: Record<string, string>;
  proxy: string;
  contextWindow: number;
  keyConfigured: boolean;
  keySource: string;
  implicit: boolean;
}

export interface SearchConfig {
  kind: "none" | "searxng" | "brave";
  baseUrl?: string;
  keyConfigured: boolean;
}

export interface Agent {
  name: string;
  description: string;
  prompt: string;
  model: string;
  builtin: boolean;
  updatedAt?: string;
}

export interface McpServer {
  name: string;
  type: "stdio" | "http" | "sse" | "builtin";
  state: "disabled" | "untrusted" | "connecting" | "connected" | "failed" | "closed";
  enabled: boolean;
  tools: number;
  lastError?: string;
  lazy: boolean;
  trust: "trusted" | "untrusted" | "changed";
  hash?: string;
  run?: Record<string, unknown>;
  toolNames?: string[];
}

// ---------------------------------------------------------------------------
// Events (ui-protocol.md §7): `data` of each `type`.

/** A card field flagged as unsafe to render raw ("Cards safe to render"). */
export interface CardWarning {
  field: string;
  kind: "control" | "ansi" | "bidi" | "invisible";
}

interface Card {
  warnings?: CardWarning[];
  /** field path → escaped text to show instead of the raw one. */
  display?: Record<string, string>;
}

export interface PermissionRequiredData extends Card {
  taskId: string;
  reqId: string;
  requestId: string;
  name: string;
  arguments: Record<string, Json>;
  reason: string;
  category: string;
  riskLevel?: string;
  command: string;
  alwaysCommand: boolean;
  alwaysCommandNote?: string;
}

export interface AskUserQuestionData extends Card {
  taskId: string;
  reqId: string;
  requestId: string;
  question: string;
  options: string[];
  allowText: boolean;
  multi: boolean;
}

export interface PlanProposedData extends Card {
  taskId: string;
  reqId: string;
  requestId: string;
  plan: string;
}

export interface DirectoryRequestedData extends Card {
  taskId: string;
  reqId: string;
  requestId: string;
  reason: string;
  path: string;
  writable: boolean;
  outsideProject: boolean;
  requestedPath?: string;
  link?: string;
  linkTarget?: string;
}

/** `data` of every event type. */
export interface EventData {
  turn_start: { taskId: string; resumed?: boolean; input: string; attachmentCount?: number; attachments?: unknown[] };
  turn_suspended: { taskId: string; reason: "sidecar_restart"; pendingRequests: string[] };
  llm_request: { taskId: string; reqId: string; logTime: string; model: string; msgCount: number; toolCount: number; compact?: boolean };
  assistant_delta: { taskId: string; text: string; reqId: string };
  reasoning_delta: { taskId: string; text: string; reqId: string };
  assistant_message: {
    taskId: string;
    text: string;
    reasoning: string;
    tool_calls: string[] | null;
    usage?: Record<string, number>;
    reqId: string;
    logTime: string;
  };
  tool_proposed: { taskId: string; reqId: string; name: string; arguments: Record<string, Json> };
  permission_required: PermissionRequiredData;
  tool_started: { taskId: string; reqId: string; name: string; startTime?: number };
  tool_finished: {
    taskId: string;
    reqId: string;
    name: string;
    status: "ok" | "error" | "denied" | "interrupted";
    reason?: string;
    duration?: number;
    result_preview?: string;
    parentReqId?: string;
  };
  iteration_end: { taskId: string; iteration: number };
  ask_user_question: AskUserQuestionData;
  plan_proposed: PlanProposedData;
  directory_requested: DirectoryRequestedData;
  queue_steering: { taskId: string; text: string; attachments?: unknown[] };
  compacting: { taskId: string; trigger: "threshold" | "overflow" | "soft"; [k: string]: unknown };
  compacted: { taskId: string; reqId: string; method: "summarized" | "trimmed" | "elided"; [k: string]: unknown };
  llm_retry: { taskId: string; attempt: number; max: number; reason: string; waitMs: number; iteration: number; reqId: string };
  error: {
    taskId: string;
    error: string;
    error_type: string;
    retriable: boolean;
    iteration: number;
    reqId: string;
    logTime: string;
    stack?: string;
  };
  interrupted: { taskId: string; iterations: number; reqId: string };
  turn_end: {
    taskId: string;
    status: "completed" | "max_iterations_exceeded" | "interrupted" | "error";
    iterations: number;
    produced_files: string[] | null;
    reason?: string;
  };
  session_named: { taskId?: string; name: string; source: "auto" | "user" };
}

export type EventType = keyof EventData;

/** One `session.event` notification's params, for one `type`. */
export interface EventOf<T extends EventType> {
  sessionId: string;
  seq: number;
  turnId?: string;
  type: T;
  data: EventData[T] & { parentReqId?: string };
  time: string;
}

/**
 * A session event: a union narrowed by `type`.
 *
 *     if (ev.type === "permission_required") ev.data.requestId // typed
 */
export type SessionEvent = { [T in EventType]: EventOf<T> }[EventType];

// ---------------------------------------------------------------------------
// Notifications (ui-protocol.md §6).

export interface Notifications {
  "session.event": SessionEvent;
  "session.dropped": { sessionId: string; lastSeq: number; reason: string };
  "mcp.status": McpServer & { projectId: string };
  "mcp.changed": {
    projectId: string;
    source: "file" | "api";
    added: string[];
    removed: string[];
    changed: string[];
    warnings: unknown[];
  };
  "terminal.output": { terminalId: string; seq: number; data: string };
  "terminal.exit": { terminalId: string; exitCode: number };
  "terminal.dropped": { terminalId: string; seq: number };
}

export type NotificationName = keyof Notifications;

/** The JSON-RPC error codes (ui-protocol.md §4). */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  Internal: -32603,
  NotInitialized: -32001,
  NotFound: -32002,
  Conflict: -32003,
  Forbidden: -32004,
  Configuration: -32005,
} as const;

/** The ready line the sidecar prints on stdout (ui-protocol.md §1). */
export interface ReadyLine {
  event: "ready";
  url: string;
  token: string;
  pid: number;
  version: string;
  protocol: number;
}

/** The protocol version this package speaks. */
export const PROTOCOL_VERSION = 1;
