// The connection: JSON-RPC over one WebSocket, typed calls, notification
// routing, replay-safe session subscriptions, terminal streams, and
// automatic reconnect that resumes every subscription where it stopped.
//
// It runs in browsers and in Node: the socket comes from a factory (the
// browser's WebSocket with the token subprotocol, or `ws` with an
// Authorization header, see ./node.ts).

import { ConnectionClosedError, SidecarError, rpcError, ConflictError, InvalidFrameError, TimeoutError } from "./errors.js";
import {
  PROTOCOL_VERSIONS,
  toPendingRequest,
  toSessionEvent,
  type AnyRequestKind,
  type EventOf,
  type FilesSearchResult,
  type MethodName,
  type Methods,
  type NotificationName,
  type Notifications,
  type ParamsOf,
  type PendingRequest,
  type PresenceClient,
  type RequestKind,
  type ResponseOf,
  type ResultOf,
  type SessionEvent,
  type SubscribeResult,
} from "./protocol.js";

/** The part of the WebSocket API the client uses (browsers' and `ws`'s). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "open" | "error", listener: (ev: unknown) => void): void;
  addEventListener(type: "message", listener: (ev: { data: unknown }) => void): void;
  addEventListener(type: "close", listener: (ev: { code: number; reason: string }) => void): void;
}

/** Opens a socket to `url` carrying `token`. */
export type WebSocketFactory = (url: string, token: string) => WebSocketLike;

/** A console-compatible logger; every method optional. */
export interface Logger {
  debug?(msg: string, ...args: unknown[]): void;
  info?(msg: string, ...args: unknown[]): void;
  warn?(msg: string, ...args: unknown[]): void;
  error?(msg: string, ...args: unknown[]): void;
}

export interface ReconnectOptions {
  /** First wait after a drop (ms, default 100); doubles per failed try. */
  initialDelayMs?: number;
  /** Longest wait between tries (ms, default 5000). */
  maxDelayMs?: number;
  /**
   * Give up after this many failed tries in a row (default 10: about 25 s
   * with the default delays); the state becomes "closed". `Infinity` to
   * try forever. `setEndpoint()` starts the count again.
   */
  maxAttempts?: number;
}

/** The default `ReconnectOptions.maxAttempts`. */
export const DEFAULT_RECONNECT_ATTEMPTS = 10;

/** Per-call options (the last argument of `call`, `request`, `respond`). */
export interface CallOptions {
  /**
   * Stop waiting when it aborts: the call rejects with `signal.reason`. The
   * sidecar still finishes the call (aborting `turn.start` does not stop
   * the turn: `turn.interrupt` does).
   */
  signal?: AbortSignal;
  /** Reject with `TimeoutError` after this many ms (default: the connection's `callTimeoutMs`). */
  timeoutMs?: number;
}

/**
 * Checks one incoming frame; returns the problems found (none: valid).
 * `method` is the call a response answers, or the notification's method.
 * `@zqagent/sidecar-client/validate` makes one from protocol/schema.json.
 */
export type FrameValidator = (frame: unknown, ctx: { kind: "response" | "notification"; method: string }) => string[];

export interface ConnectOptions {
  /** The ready line's `url`. */
  url: string;
  /** The ready line's `token`. */
  token: string;
  /** Who you are (`initialize {client}`). */
  client?: { name: string; version: string };
  /** Your UI language (`initialize {locale}`), e.g. "ja-JP". */
  locale?: string;
  /** Interrupt the turns this connection started when it closes. */
  interruptOnDisconnect?: boolean;
  /** Reconnect after a drop (default true); `false` to close for good. */
  reconnect?: boolean | ReconnectOptions;
  /** Makes the socket; the default is the browser's WebSocket. */
  webSocket?: WebSocketFactory;
  logger?: Logger;
  /** Every call's timeout (ms) unless the call says otherwise (default: none). */
  callTimeoutMs?: number;
  /**
   * Development mode: check every incoming frame with this validator
   * (`frameValidator()` of `@zqagent/sidecar-client/validate`). A response
   * that fails rejects its call with `InvalidFrameError`; a notification
   * that fails is still delivered. Each failure goes to `onInvalidFrame`
   * (default: `logger.error`).
   */
  validate?: FrameValidator;
  onInvalidFrame?: (err: InvalidFrameError) => void;
}

/**
 * The connection's state: "connecting" until the first `initialize`
 * answered, "open", "reconnecting" after a drop (calls reject meanwhile),
 * "closed" for good (`close()`, `reconnect: false`, or `maxAttempts` used
 * up; `onStateChange`'s `err` says why).
 */
export type ConnectionState = "connecting" | "open" | "reconnecting" | "closed";

/** The browser's WebSocket with the token subprotocol (ui-protocol.md §2). */
export const browserWebSocket: WebSocketFactory = (url, token) => {
  const WS = (globalThis as { WebSocket?: new (url: string, protocols: string[]) => WebSocketLike }).WebSocket;
  if (!WS) throw new SidecarError("no global WebSocket: in Node, import { connect } from \"@zqagent/sidecar-client/node\"");
  return new WS(url, ["zqagent.v1", `zqagent.token.${token}`]);
};

// eslint-disable-next-line @typescript-eslint/no-empty-object-type
type Params<M extends MethodName> = {} extends ParamsOf<M>
  ? [params?: ParamsOf<M>, opts?: CallOptions]
  : [params: ParamsOf<M>, opts?: CallOptions];

interface PendingCall {
  method: string;
  resolve(v: unknown): void;
  reject(e: Error): void;
}

/**
 * Connects, initializes and resolves with the client. The first connection
 * must succeed (else it rejects); later drops reconnect by themselves.
 */
export async function connect(opts: ConnectOptions): Promise<SidecarClient> {
  const c = new SidecarClient(opts);
  try {
    await c.open();
  } catch (e) {
    c.close();
    throw e;
  }
  return c;
}

/** A connection to the sidecar. Make it with `connect()`. */
export class SidecarClient {
  /** `initialize`'s result on the current connection. */
  initializeResult: ResultOf<"initialize"> | undefined;
  #opts: ConnectOptions;
  #factory: WebSocketFactory;
  #log: Logger;
  #ws: WebSocketLike | undefined;
  #nextId = 1;
  #calls = new Map<number, PendingCall>();
  #listeners = new Map<string, Set<(p: never) => void>>();
  #stateListeners = new Set<(s: ConnectionState, err?: Error) => void>();
  #sessions = new Map<string, SessionSubscription>();
  #terminals = new Map<string, TerminalStream>();
  #state: ConnectionState = "connecting";
  #closedByUser = false;
  #reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  #reconnectAttempt = 0;
  #reconnecting = false;

  constructor(opts: ConnectOptions) {
    this.#opts = opts;
    this.#factory = opts.webSocket ?? browserWebSocket;
    this.#log = opts.logger ?? {};
  }

  get state(): ConnectionState {
    return this.#state;
  }

  /** The URL this client connects (and reconnects) to. */
  get url(): string {
    return this.#opts.url;
  }

  /**
   * Points the client at another address of the sidecar: a restarted
   * sidecar's ready line (`spawnSidecar({supervise})` calls it for the
   * clients it made). Reconnects there now and resumes every subscription
   * from its last seq; the reconnect tries count from zero again. A closed
   * client stays closed.
   */
  setEndpoint(url: string, token: string): void {
    if (this.#closedByUser || this.#state === "closed") return;
    if (this.#opts.url === url && this.#opts.token === token && this.#state === "open") return;
    this.#opts = { ...this.#opts, url, token };
    this.#reconnectAttempt = 0;
    if (this.#state === "open") {
      // Still connected to the old address: drop it, the close reconnects.
      this.#ws?.close(1000, "sidecar moved"); // browsers allow only 1000 and 3000-4999
      return;
    }
    if (this.#state === "reconnecting" && !this.#reconnecting) {
      clearTimeout(this.#reconnectTimer);
      this.#scheduleReconnect(0);
    }
  }

  /** Opens the socket and initializes (used by `connect` and reconnects). */
  async open(): Promise<void> {
    const ws = this.#factory(this.#opts.url, this.#opts.token);
    this.#ws = ws;
    await new Promise<void>((resolve, reject) => {
      let opened = false;
      ws.addEventListener("open", () => {
        opened = true;
        resolve();
      });
      ws.addEventListener("message", (ev) => this.#onMessage(ws, ev.data));
      ws.addEventListener("close", (ev) => {
        const err = new ConnectionClosedError(
          `sidecar connection closed (code ${ev.code}${ev.reason ? `: ${ev.reason}` : ""}); a refused upgrade shows as 1006, the reason is on the sidecar's stderr`,
          ev.code,
          ev.reason,
        );
        if (!opened) reject(err);
        this.#onClose(ws, err);
      });
      ws.addEventListener("error", () => {
        /* a close event follows */
      });
    });
    this.initializeResult = await this.call("initialize", {
      client: this.#opts.client ?? { name: "@zqagent/sidecar-client", version: "0.1.0" },
      protocolVersion: { min: PROTOCOL_VERSIONS.min, max: PROTOCOL_VERSIONS.max },
      ...(this.#opts.interruptOnDisconnect !== undefined && { interruptOnDisconnect: this.#opts.interruptOnDisconnect }),
      ...(this.#opts.locale !== undefined && { locale: this.#opts.locale }),
    });
    // Resume every stream where it stopped (a no-op on the first open).
    await Promise.all([
      ...[...this.#sessions.values()].map((s) => s.resubscribe().catch((e) => this.#log.warn?.("resubscribe failed", e))),
      ...[...this.#terminals.values()].map((t) => t.resubscribe().catch((e) => this.#log.warn?.("terminal resubscribe failed", e))),
    ]);
    if (this.#ws !== ws) throw new ConnectionClosedError("sidecar connection closed while initializing");
    this.#setState("open");
  }

  /**
   * Calls a method and resolves with its result, or rejects with an
   * `RpcError` subclass (or `ConnectionClosedError` when the socket closes
   * first, `TimeoutError` after `opts.timeoutMs`, `opts.signal.reason` when
   * it aborts).
   *
   *     await client.call("session.get", { sessionId }, { signal, timeoutMs: 5000 });
   */
  call<M extends MethodName>(method: M, ...params: Params<M>): Promise<ResultOf<M>> {
    return this.request(method, params[0], params[1]) as Promise<ResultOf<M>>;
  }

  /** An untyped call, for methods newer than this package. */
  request(method: string, params?: object, opts: CallOptions = {}): Promise<unknown> {
    const { signal } = opts;
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const ws = this.#ws;
    if (!ws || ws.readyState !== 1) {
      return Promise.reject(new ConnectionClosedError(`${method}: not connected (${this.#state})`));
    }
    const id = this.#nextId++;
    const timeoutMs = opts.timeoutMs ?? this.#opts.callTimeoutMs;
    return new Promise((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = () => settle(() => reject(abortReason(signal!)));
      // Whichever comes first settles; the others are undone. A late answer
      // finds no call and is dropped.
      const settle = (f: () => void) => {
        if (!this.#calls.delete(id)) return;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        f();
      };
      this.#calls.set(id, {
        method,
        resolve: (v) => settle(() => resolve(v)),
        reject: (e) => settle(() => reject(e)),
      });
      if (timeoutMs !== undefined && timeoutMs !== Infinity) {
        timer = setTimeout(() => settle(() => reject(new TimeoutError(`${method}: no answer within ${timeoutMs} ms`, method, timeoutMs))), timeoutMs);
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params: params ?? {} }));
      } catch (e) {
        settle(() => reject(e instanceof Error ? e : new SidecarError(String(e))));
      }
    });
  }

  /**
   * Registers a handler for a notification; returns the function that
   * removes it. Session and terminal streams are easier through
   * `subscribe()` and `terminal()`; this sees every notification.
   */
  on<N extends NotificationName>(method: N, handler: (params: Notifications[N]) => void): () => void {
    let set = this.#listeners.get(method);
    if (!set) this.#listeners.set(method, (set = new Set()));
    set.add(handler as (p: never) => void);
    return () => set.delete(handler as (p: never) => void);
  }

  /**
   * `session.export`: writes the session to one file at `path` (absolute,
   * e.g. from a save dialog; a file there is replaced). Refused with
   * `ConflictError` (kind `busy`) while a turn is queued, runs or waits.
   * A large session takes a while: pass a `timeoutMs` that allows it.
   */
  exportSession(sessionId: string, path: string, opts?: CallOptions): Promise<ResultOf<"session.export">> {
    return this.call("session.export", { sessionId, path }, opts);
  }

  /**
   * `session.import`: reads a file `exportSession` wrote into a new
   * session of the project. A malformed or hostile file is refused with
   * `InvalidParamsError` (`data.field: "path"`, the message says why) and
   * nothing is created; `resetSettings` names the file's settings that
   * were not taken.
   */
  importSession(projectId: string, path: string, opts?: CallOptions): Promise<ResultOf<"session.import">> {
    return this.call("session.import", { projectId, path }, opts);
  }

  /** Called on every state change (`err` says why it closed). */
  onStateChange(handler: (state: ConnectionState, err?: Error) => void): () => void {
    this.#stateListeners.add(handler);
    return () => this.#stateListeners.delete(handler);
  }

  /**
   * `files.search` for a composer's "@" completion: the open project's
   * paths ranked for `query` (fuzzy, case-insensitive), best first, each
   * with the UTF-16 offsets of its matched characters (`path[i]`), ready
   * to highlight. Call it on every keystroke: a newer call of this
   * connection supersedes the older one, which then resolves to `null`
   * (the server's -32003 `superseded`) — ignore it. Other errors reject
   * as `call` does.
   *
   *     const r = await client.searchFiles(projectId, "servgo", { limit: 20 });
   *     if (r) show(r.results);
   */
  async searchFiles(projectId: string, query: string, opts: CallOptions & { limit?: number } = {}): Promise<FilesSearchResult | null> {
    const { limit, ...callOpts } = opts;
    try {
      return await this.call("files.search", { projectId, query, ...(limit !== undefined && { limit }) }, callOpts);
    } catch (e) {
      if (e instanceof ConflictError && e.data?.kind === "superseded") return null;
      throw e;
    }
  }

  /**
   * Subscribes to a session's events. `onEvent` is installed before the
   * request is sent, so the events the server replays right after its
   * answer are never lost; each seq is delivered once, in order, also
   * across `session.dropped` and reconnects (both re-subscribe from the
   * last seq by themselves). Resolves once the server answered.
   *
   * `onPendingChange` runs with the subscribe answer's `pendingRequests`
   * (before any replayed event), and for an event that opens or closes a
   * request it runs before `onEvent` sees that event: inside `onEvent`,
   * `sub.pending` already includes (or no longer has) the request.
   */
  async subscribe(sessionId: string, opts: SubscribeOptions = {}): Promise<SessionSubscription> {
    if (this.#sessions.has(sessionId)) {
      throw new SidecarError(`session ${sessionId} is already subscribed on this connection; close that subscription first`);
    }
    const sub: SessionSubscription = new SessionSubscription(this, sessionId, opts, this.#log, () => {
      if (this.#sessions.get(sessionId) === sub) this.#sessions.delete(sessionId);
    });
    this.#sessions.set(sessionId, sub);
    try {
      await sub.resubscribe();
    } catch (e) {
      this.#sessions.delete(sessionId);
      throw e;
    }
    return sub;
  }

  /**
   * Streams a terminal's output as bytes (decoded from base64), from
   * `afterSeq` (default 0: all the scrollback holds). Re-subscribes by
   * itself after `terminal.dropped` and reconnects, from the byte after the
   * last one delivered.
   */
  async terminal(projectId: string, terminalId: string, opts: TerminalOptions = {}): Promise<TerminalStream> {
    this.#terminals.get(terminalId)?.detach();
    const t: TerminalStream = new TerminalStream(this, projectId, terminalId, opts, () => {
      if (this.#terminals.get(terminalId) === t) this.#terminals.delete(terminalId);
    });
    this.#terminals.set(terminalId, t);
    try {
      await t.resubscribe();
    } catch (e) {
      this.#terminals.delete(terminalId);
      throw e;
    }
    return t;
  }

  /**
   * Sends input to a terminal: text (keystrokes, a paste) or raw bytes.
   * Each call is one `terminal.write`, sent at once: the sidecar applies a
   * connection's writes in the order they were sent (an ordered method,
   * ui-protocol.md §3), so one write per keystroke, none awaited, reaches
   * the PTY in order.
   */
  writeTerminal(projectId: string, terminalId: string, data: string | Uint8Array, opts?: CallOptions): Promise<ResultOf<"terminal.write">> {
    return typeof data === "string"
      ? this.call("terminal.write", { projectId, terminalId, data }, opts)
      : this.call("terminal.write", { projectId, terminalId, dataBase64: encodeBase64(data) }, opts);
  }

  /**
   * Every session of a `session.list` (one project, archived or not, a
   * search or none), page after page: `params.limit` sessions per call,
   * each page's `nextCursor` passed on until the last. With a `query`,
   * each session carries its `snippet`.
   *
   *     for await (const s of client.sessions({ projectId, query: "flaky test" })) show(s.title, s.snippet);
   */
  async *sessions(params: Omit<ParamsOf<"session.list">, "cursor">, opts?: CallOptions): AsyncGenerator<ResultOf<"session.list">["sessions"][number]> {
    let cursor: string | undefined;
    do {
      const page: ResultOf<"session.list"> = await this.call("session.list", { ...params, ...(cursor !== undefined && { cursor }) }, opts);
      yield* page.sessions;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }

  /**
   * Signs in to a remote MCP server (ui-protocol.md, `mcp.login`): calls
   * `mcp.login`, hands the authorization URL to `open` (show its host to
   * the user, then open it in the system browser), and resolves with the
   * server's `mcp.status` once it is `connected`. Rejects with a
   * `SidecarError` carrying the reason (`lastError`) when the sign-in ends
   * without one (`needs_auth` again: refused, timed out; or `failed`), or
   * with `opts.signal`'s reason when it aborts (the sidecar's sign-in then
   * still ends by its own timeout).
   */
  async signInMCP(
    params: ParamsOf<"mcp.login">,
    open: (authorizationUrl: URL) => void | Promise<void>,
    opts: CallOptions = {},
  ): Promise<Notifications["mcp.status"]> {
    type Status = Notifications["mcp.status"];
    let started = false;
    let settle!: { resolve: (s: Status) => void; reject: (e: Error) => void };
    const outcome = new Promise<Status>((resolve, reject) => (settle = { resolve, reject }));
    outcome.catch(() => {}); // awaited below; may settle before that
    const off = this.on("mcp.status", (st) => {
      if (!started || st.name !== params.name || (params.projectId && st.projectId !== params.projectId)) return;
      if (st.state === "connected") settle.resolve(st);
      else if (st.state === "needs_auth" || st.state === "failed") {
        settle.reject(new SidecarError(`sign-in to MCP server ${st.name}: ${st.lastError ?? st.state}`));
      }
    });
    const { signal } = opts;
    const onAbort = () => settle.reject(abortReason(signal!));
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const { authorizationUrl } = await this.call("mcp.login", params, opts);
      // Statuses from now on are this sign-in's (the answer came first).
      started = true;
      await open(new URL(authorizationUrl));
      return await outcome;
    } finally {
      off();
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Answers a pending request with the response its kind takes. */
  respond<K extends AnyRequestKind>(
    sessionId: string,
    request: { requestId: string; kind: K },
    response: ResponseOf[K],
    opts?: CallOptions,
  ): Promise<ResultOf<"request.respond">> {
    return this.call("request.respond", { sessionId, requestId: request.requestId, response }, opts);
  }

  /**
   * Forks a session (`session.fork`): a new session whose history is this
   * one's up to and including `turnId` (absent: its last finished turn).
   * The result's `session.forkedFrom` names the source and the turn.
   */
  fork(sessionId: string, turnId?: string, opts?: CallOptions): Promise<ResultOf<"session.fork">> {
    return this.call("session.fork", turnId === undefined ? { sessionId } : { sessionId, turnId }, opts);
  }

  /**
   * Rewinds a session to just before a turn (`session.rewind`): the
   * history, and with `files: true` the workspace. The result carries the
   * turn's input and attachments for the composer. `dryRun` reports what
   * would change; the clobber guard rejects with a `ConflictError` whose
   * `data.kind` is `"clobbered"` and `data.files` names the files, until
   * `force: true`.
   *
   *     const preview = await client.rewind(sessionId, turnId, { files: true, dryRun: true });
   *     const done = await client.rewind(sessionId, turnId, { files: true, force: preview.clobbered.length > 0 && userAgreed });
   */
  rewind(
    sessionId: string,
    turnId: string,
    how: { files: boolean; dryRun?: boolean; force?: boolean },
    opts?: CallOptions,
  ): Promise<ResultOf<"session.rewind">> {
    return this.call("session.rewind", { sessionId, turnId, ...how }, opts);
  }

  /** Closes for good: no reconnect; pending calls reject. */
  close(): void {
    this.#closedByUser = true;
    clearTimeout(this.#reconnectTimer);
    const ws = this.#ws;
    this.#ws = undefined; // later frames of this socket are ignored
    ws?.close(1000, "client closed");
    this.#rejectAll(new ConnectionClosedError("closed by the client", 1000, "client closed"));
    this.#setState("closed");
  }

  #rejectAll(err: ConnectionClosedError): void {
    const calls = [...this.#calls.values()];
    for (const c of calls) c.reject(new ConnectionClosedError(`${c.method}: ${err.message}`, err.closeCode, err.reason));
  }

  #setState(s: ConnectionState, err?: Error): void {
    if (this.#state === s) return;
    this.#state = s;
    for (const h of this.#stateListeners) {
      try {
        h(s, err);
      } catch (e) {
        this.#log.error?.("state handler threw", e);
      }
    }
  }

  #onMessage(ws: WebSocketLike, raw: unknown): void {
    if (ws !== this.#ws) return;
    let msg: unknown;
    try {
      msg = JSON.parse(typeof raw === "string" ? raw : String(raw));
    } catch {
      this.#log.warn?.("sidecar sent a frame that is not JSON");
      return;
    }
    for (const m of Array.isArray(msg) ? msg : [msg]) this.#dispatch(m as Record<string, unknown>);
  }

  #dispatch(m: Record<string, unknown>): void {
    if (m.id !== undefined && m.id !== null && (("result" in m) || ("error" in m))) {
      const call = this.#calls.get(m.id as number);
      if (!call) return;
      const bad = this.#check(m, "response", call.method);
      if (bad) call.reject(bad);
      else if (m.error) call.reject(rpcError(call.method, m.error as { code: number; message: string; data?: unknown }));
      else call.resolve(withKnownKinds(call.method, m.result));
      return;
    }
    if (typeof m.method !== "string") return;
    this.#check(m, "notification", m.method);
    let params = (m.params ?? {}) as Record<string, unknown>;
    if (m.method === "session.event") params = toSessionEvent(params) as unknown as Record<string, unknown>;
    // Streams first, so their state (lastSeq, nextSeq) is current when a
    // generic listener looks.
    switch (m.method) {
      case "session.event":
        this.#sessions.get(params.sessionId as string)?.deliver(params as unknown as SessionEvent);
        break;
      case "session.dropped":
        this.#sessions.get(params.sessionId as string)?.dropped(params as unknown as Notifications["session.dropped"]);
        break;
      case "session.presence":
        this.#sessions.get(params.sessionId as string)?.presence(params as unknown as Notifications["session.presence"]);
        break;
      case "terminal.output":
        this.#terminals.get(params.terminalId as string)?.output(params as unknown as Notifications["terminal.output"]);
        break;
      case "terminal.exit":
        this.#terminals.get(params.terminalId as string)?.exit(params as unknown as Notifications["terminal.exit"]);
        break;
      case "terminal.dropped":
        this.#terminals.get(params.terminalId as string)?.dropped(params as unknown as Notifications["terminal.dropped"]);
        break;
    }
    for (const h of this.#listeners.get(m.method) ?? []) {
      try {
        (h as (p: unknown) => void)(params);
      } catch (e) {
        this.#log.error?.(`${m.method} handler threw`, e);
      }
    }
  }

  /** Development mode: the frame's problems as an error (reported), or undefined. */
  #check(m: Record<string, unknown>, kind: "response" | "notification", method: string): InvalidFrameError | undefined {
    const v = this.#opts.validate;
    if (!v) return undefined;
    let problems: string[];
    try {
      problems = v(m, { kind, method });
    } catch (e) {
      problems = [`the validator threw: ${e instanceof Error ? e.message : String(e)}`];
    }
    if (problems.length === 0) return undefined;
    const err = new InvalidFrameError(`${method}: the sidecar sent a ${kind} that does not match protocol/schema.json: ${problems.join("; ")}`, method, m, problems);
    if (this.#opts.onInvalidFrame) {
      try {
        this.#opts.onInvalidFrame(err);
      } catch (e) {
        this.#log.error?.("onInvalidFrame threw", e);
      }
    } else this.#log.error?.(err.message);
    return err;
  }

  #onClose(ws: WebSocketLike, err: ConnectionClosedError): void {
    if (ws !== this.#ws) return;
    this.#ws = undefined;
    this.#rejectAll(err);
    // While opening (first connect or a reconnect try), open() rejects and
    // its caller decides; only an open connection that drops reconnects.
    if (this.#closedByUser) return this.#setState("closed", err);
    if (this.#state !== "open") return;
    const rc = this.#opts.reconnect ?? true;
    if (rc === false) {
      this.#setState("closed", err);
      return;
    }
    this.#setState("reconnecting", err);
    this.#reconnectAttempt = 0;
    this.#scheduleReconnect();
  }

  /** Tries open() after the backoff of the current attempt (or after `delay`). */
  #scheduleReconnect(delay?: number): void {
    const rc = this.#opts.reconnect;
    const o: ReconnectOptions = typeof rc === "object" ? rc : {};
    delay ??= Math.min((o.initialDelayMs ?? 100) * 2 ** this.#reconnectAttempt, o.maxDelayMs ?? 5000);
    this.#reconnectTimer = setTimeout(() => {
      if (this.#closedByUser) return this.#setState("closed");
      this.#reconnecting = true;
      this.open().then(
        () => {
          this.#reconnecting = false;
          this.#reconnectAttempt = 0;
        },
        (e: Error) => {
          this.#reconnecting = false;
          this.#reconnectAttempt++;
          this.#log.debug?.(`reconnect ${this.#reconnectAttempt} to ${this.#opts.url} failed: ${e.message}`);
          this.#ws?.close();
          this.#ws = undefined;
          if (this.#closedByUser) return this.#setState("closed");
          if (this.#reconnectAttempt >= (o.maxAttempts ?? DEFAULT_RECONNECT_ATTEMPTS)) return this.#setState("closed", e);
          this.#scheduleReconnect();
        },
      );
    }, delay);
  }
}

/**
 * A result as this package delivers it: the pending requests of
 * session.get and session.subscribe with a kind it does not know become
 * `UnknownPendingRequest`s.
 */
function withKnownKinds(method: string, result: unknown): unknown {
  if (method !== "session.get" && method !== "session.subscribe") return result;
  const r = result as { pendingRequests?: unknown };
  if (r === null || typeof r !== "object" || !Array.isArray(r.pendingRequests)) return result;
  return { ...r, pendingRequests: r.pendingRequests.map((p: Record<string, unknown>) => toPendingRequest(p)) };
}

/** What a call rejects with when its signal aborts. */
function abortReason(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  if (r instanceof Error) return r;
  const e = new Error(r === undefined ? "the call was aborted" : String(r));
  e.name = "AbortError";
  return e;
}

export interface SubscribeOptions {
  /** Replay the events after this seq (default 0: the whole session). */
  afterSeq?: number;
  /** Every event, once each, in seq order. */
  onEvent?: (ev: SessionEvent) => void;
  /**
   * The pending requests changed (subscribe answer, opened, answered, turn
   * ended). Runs before `onEvent` of the event that changed them.
   */
  onPendingChange?: (pending: PendingRequest[]) => void;
  /** The server dropped the stream (the client re-subscribes by itself). */
  onDropped?: (p: Notifications["session.dropped"]) => void;
  /**
   * Who is attached to the session changed (subscribe answer,
   * `session.presence`): every connection subscribed, this one included.
   */
  onPresence?: (clients: PresenceClient[]) => void;
}

const openingKind: Partial<Record<SessionEvent["type"], RequestKind>> = {
  permission_required: "approval",
  ask_user_question: "question",
  plan_proposed: "plan",
  directory_requested: "directory",
  elicitation_requested: "elicitation",
};

/**
 * One session's event stream on a connection, and its pending requests.
 * `lastSeq` is the highest seq delivered; the pending list follows the
 * server's (`session.subscribe`'s `pendingRequests`, then the events).
 */
export class SessionSubscription {
  readonly sessionId: string;
  /** The highest seq delivered to `onEvent`. */
  lastSeq: number;
  /** Whether a turn ran when the (latest) subscribe was answered. */
  running = false;
  /** The connections subscribed to the session, this one included. */
  clients: PresenceClient[] = [];
  #client: SidecarClient;
  #opts: SubscribeOptions;
  #log: Logger;
  #pending = new Map<string, PendingRequest>();
  #snapshotSeq = 0;
  #forget: () => void;
  #handlers = new Set<(ev: SessionEvent) => void>();
  #closed = false;

  constructor(client: SidecarClient, sessionId: string, opts: SubscribeOptions, log: Logger, forget: () => void) {
    this.#client = client;
    this.sessionId = sessionId;
    this.lastSeq = opts.afterSeq ?? 0;
    this.#opts = opts;
    this.#log = log;
    this.#forget = forget;
    if (opts.onEvent) this.#handlers.add(opts.onEvent);
  }

  /** Adds an event handler (it sees events from now on). */
  onEvent(handler: (ev: SessionEvent) => void): () => void {
    this.#handlers.add(handler);
    return () => this.#handlers.delete(handler);
  }

  /** The unanswered requests, oldest first. */
  get pending(): PendingRequest[] {
    return [...this.#pending.values()].sort((a, b) => a.seq - b.seq);
  }

  /**
   * Answers a pending request. A request someone else answered first
   * (another window, a timeout) rejects with `ConflictError` and leaves
   * the list.
   */
  async respond<K extends AnyRequestKind>(
    request: { requestId: string; kind: K },
    response: ResponseOf[K],
    opts?: CallOptions,
  ): Promise<ResultOf<"request.respond">> {
    try {
      const r = await this.#client.respond(this.sessionId, request, response, opts);
      this.#removeWhere((p) => p.requestId === request.requestId);
      return r;
    } catch (e) {
      if (e instanceof ConflictError) this.#removeWhere((p) => p.requestId === request.requestId);
      throw e;
    }
  }

  /** Ends the subscription (`session.unsubscribe`). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#forget();
    if (this.#client.state === "open") await this.#client.call("session.unsubscribe", { sessionId: this.sessionId });
  }

  /** Subscribes (again) from `lastSeq`. Used at start, on drop, on reconnect. */
  async resubscribe(): Promise<SubscribeResult> {
    const r = await this.#client.call("session.subscribe", { sessionId: this.sessionId, afterSeq: this.lastSeq });
    // The answer comes before the replay, and the snapshot is the server's
    // truth up to r.lastSeq; later events add and remove on top of it.
    this.running = r.running;
    this.#snapshotSeq = r.lastSeq;
    this.#pending = new Map(r.pendingRequests.map((p) => [p.requestId, p]));
    this.#pendingChanged();
    this.#setClients(r.clients ?? []); // a sidecar before presence sends none
    return r;
  }

  /** @internal session.presence for this session. */
  presence(p: Notifications["session.presence"]): void {
    if (this.#closed) return;
    this.#setClients(p.clients);
  }

  #setClients(clients: PresenceClient[]): void {
    this.clients = clients;
    try {
      this.#opts.onPresence?.(clients);
    } catch (e) {
      this.#log.error?.("onPresence threw", e);
    }
  }

  /** @internal a session.event for this session. */
  deliver(ev: SessionEvent): void {
    if (this.#closed || ev.seq <= this.lastSeq) return; // once each
    this.lastSeq = ev.seq;
    this.#track(ev);
    for (const h of this.#handlers) {
      try {
        h(ev);
      } catch (e) {
        this.#log.error?.("session event handler threw", e);
      }
    }
  }

  /** @internal session.dropped for this session. */
  dropped(p: Notifications["session.dropped"]): void {
    if (this.#closed) return;
    this.#opts.onDropped?.(p);
    this.resubscribe().catch((e) => this.#log.warn?.("resubscribe after session.dropped failed", e));
  }

  #track(ev: SessionEvent): void {
    const kind = openingKind[ev.type];
    if (kind) {
      if (ev.seq > this.#snapshotSeq) {
        const d = ev.data as EventOf<"permission_required">["data"];
        this.#pending.set(d.requestId, {
          requestId: d.requestId,
          kind,
          turnId: ev.turnId ?? d.taskId,
          toolCallId: d.reqId,
          seq: ev.seq,
          data: d,
          createdAt: ev.time,
        } as PendingRequest);
        this.#pendingChanged();
      }
      return;
    }
    switch (ev.type) {
      case "request_resolved":
        // Answered by any window, `sidecar acp`, a timeout, or its turn
        // ended: the server says so once per request.
        this.#removeWhere((p) => p.requestId === ev.data.requestId);
        break;
      case "turn_end":
        // Its requests are resolved before it; a sidecar that predates
        // request_resolved closes them here too.
        this.#removeWhere((p) => p.turnId === (ev.turnId ?? ev.data.taskId));
        break;
    }
  }

  #removeWhere(pred: (p: PendingRequest) => boolean): void {
    let changed = false;
    for (const [id, p] of this.#pending) {
      if (pred(p)) {
        this.#pending.delete(id);
        changed = true;
      }
    }
    if (changed) this.#pendingChanged();
  }

  #pendingChanged(): void {
    try {
      this.#opts.onPendingChange?.(this.pending);
    } catch (e) {
      this.#log.error?.("onPendingChange threw", e);
    }
  }
}

export interface TerminalOptions {
  /** Start after this byte offset (default 0). */
  afterSeq?: number;
  /** Output bytes, in order, each byte once. `seq` is the offset of data[0]. */
  onData?: (data: Uint8Array, seq: number) => void;
  /** Bytes between `from` and `to` were lost (the scrollback moved on). */
  onGap?: (from: number, to: number) => void;
  /** The terminal's process exited. */
  onExit?: (exitCode: number) => void;
}

/** One terminal's output stream on a connection, and its input. */
export class TerminalStream {
  readonly projectId: string;
  readonly terminalId: string;
  /** The offset just past the last byte delivered. */
  nextSeq: number;
  exitCode: number | undefined;
  #client: SidecarClient;
  #opts: TerminalOptions;
  #forget: () => void;
  #detached = false;

  constructor(client: SidecarClient, projectId: string, terminalId: string, opts: TerminalOptions, forget: () => void) {
    this.#client = client;
    this.projectId = projectId;
    this.terminalId = terminalId;
    this.nextSeq = opts.afterSeq ?? 0;
    this.#opts = opts;
    this.#forget = forget;
  }

  /** Sends keystrokes or pasted text (UTF-8); writes arrive in the order sent (see `writeTerminal`). */
  write(data: string): Promise<ResultOf<"terminal.write">> {
    return this.#client.writeTerminal(this.projectId, this.terminalId, data);
  }

  /** Sends raw bytes, in order with `write`. */
  writeBytes(bytes: Uint8Array): Promise<ResultOf<"terminal.write">> {
    return this.#client.writeTerminal(this.projectId, this.terminalId, bytes);
  }

  resize(cols: number, rows: number): Promise<ResultOf<"terminal.resize">> {
    return this.#client.call("terminal.resize", { projectId: this.projectId, terminalId: this.terminalId, cols, rows });
  }

  /** Kills the terminal's processes (its last output and exit still arrive). */
  kill(): Promise<ResultOf<"terminal.kill">> {
    return this.#client.call("terminal.kill", { projectId: this.projectId, terminalId: this.terminalId });
  }

  /** Stops streaming (`terminal.unsubscribe`); the terminal keeps running. */
  async close(): Promise<void> {
    if (this.#detached) return;
    this.detach();
    if (this.#client.state === "open") await this.#client.call("terminal.unsubscribe", { projectId: this.projectId, terminalId: this.terminalId });
  }

  /** @internal */
  detach(): void {
    this.#detached = true;
    this.#forget();
  }

  /** @internal subscribes (again) from nextSeq. */
  async resubscribe(): Promise<ResultOf<"terminal.subscribe">> {
    const r = await this.#client.call("terminal.subscribe", { projectId: this.projectId, terminalId: this.terminalId, afterSeq: this.nextSeq });
    if (r.exitCode !== undefined) this.exitCode = r.exitCode;
    return r;
  }

  /** @internal */
  output(p: Notifications["terminal.output"]): void {
    if (this.#detached) return;
    let bytes = decodeBase64(p.data);
    let seq = p.seq;
    if (seq + bytes.length <= this.nextSeq) return; // already delivered
    if (seq < this.nextSeq) {
      bytes = bytes.subarray(this.nextSeq - seq);
      seq = this.nextSeq;
    }
    if (seq > this.nextSeq) this.#opts.onGap?.(this.nextSeq, seq);
    this.nextSeq = seq + bytes.length;
    this.#opts.onData?.(bytes, seq);
  }

  /** @internal */
  exit(p: Notifications["terminal.exit"]): void {
    if (this.#detached) return;
    this.exitCode = p.exitCode;
    this.#opts.onExit?.(p.exitCode);
    this.detach(); // the server ended the subscription
  }

  /** @internal */
  dropped(p: Notifications["terminal.dropped"]): void {
    if (this.#detached) return;
    this.nextSeq = Math.min(this.nextSeq, p.seq);
    this.resubscribe().catch(() => {
      /* a reconnect retries */
    });
  }
}

/** Decodes base64 (terminal output) to bytes, in browsers and Node. */
export function decodeBase64(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Encodes bytes as base64 (terminal input). */
export function encodeBase64(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(s);
}

/** Methods this package types; see `Methods`. */
export type { Methods };
