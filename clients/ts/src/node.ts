// Node and Electron main: spawn the sidecar and connect with `ws`.
//
//     import { spawnSidecar } from "@zqagent/sidecar-client/node";
//     const sidecar = await spawnSidecar({ bin, dataDir, keys: { openai: key } });
//     const client = await sidecar.connect({ client: { name: "my-app", version: "1.0.0" } });
//     …
//     await sidecar.stop(); // closes stdin: the sidecar exits cleanly
//
// With `supervise: true` a sidecar that dies (crash, kill -9) is restarted
// on the same data dir and the clients from `sidecar.connect()` follow it.

import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import WebSocket from "ws";

import { connect as connectWith, type ConnectOptions, type Logger, type SidecarClient, type WebSocketFactory, type WebSocketLike } from "./client.js";
import { SpawnError } from "./errors.js";
import type { ReadyLine, SecretsLine } from "./protocol.js";

export * from "./index.js";

/** `ws` with `Authorization: Bearer <token>` (ui-protocol.md §2). */
export const nodeWebSocket: WebSocketFactory = (url, token) =>
  new WebSocket(url, ["zqagent.v1"], { headers: { Authorization: `Bearer ${token}` } }) as unknown as WebSocketLike;

/** connect() for Node: the same as the browser's, over `ws`. */
export function connect(opts: ConnectOptions): Promise<SidecarClient> {
  return connectWith({ webSocket: nodeWebSocket, ...opts });
}

export interface SpawnOptions {
  /** Path of the sidecar binary. */
  bin: string;
  /** `--data-dir` (default: the user config dir's zqagent). */
  dataDir?: string;
  /** `--allow-origin`, one per entry (a renderer that connects directly). */
  allowOrigins?: string[];
  /** `--port` (default 0: any free port). */
  port?: number;
  /** `--log-level` (default info). */
  logLevel?: "debug" | "info" | "warn" | "error";
  /** More arguments, as they are. */
  args?: string[];
  /** The connection token (default: 256 random bits). Sent on stdin; a restart reuses it. */
  token?: string;
  /** API keys by provider profile, held in the sidecar's memory. Sent on stdin (again on a restart). */
  keys?: Record<string, string>;
  /** The child's environment (default: this process's). Never put secrets here. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Receives each stderr line (the sidecar's log; never a secret). */
  logger?: Logger;
  /** How long to wait for the ready line (ms, default 30000), at start and at each restart. */
  readyTimeoutMs?: number;
  /**
   * Restart the sidecar when it exits without `stop()` (a crash, kill -9,
   * OOM), with backoff, on the same data dir: its sessions, turns and
   * pending requests are in the database, so nothing answered is lost.
   * Clients made by `connect()` follow the new address and resume every
   * subscription from its last seq. `true` for the defaults.
   */
  supervise?: boolean | SuperviseOptions;
}

export interface SuperviseOptions {
  /** Wait before the first restart (ms, default 250); doubles per failure in a row. */
  initialDelayMs?: number;
  /** Longest wait between restarts (ms, default 10000). */
  maxDelayMs?: number;
  /**
   * Give up after this many restarts in a row that failed to start or died
   * within `stableMs` (default 5); then `exited` resolves and `exit` says
   * `restarting: false`.
   */
  maxRestarts?: number;
  /** A sidecar that ran this long (ms, default 60000) resets the count. */
  stableMs?: number;
}

/** How a sidecar process ended. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** `exit`: a sidecar process ended. */
export interface ExitEvent extends ExitInfo {
  /** Whether the supervisor restarts it (false: `stop()`, no `supervise`, or gave up). */
  restarting: boolean;
  /** Why it gives up (restarts used up). */
  error?: Error;
}

/** `restart`: a new sidecar process is ready (clients from `connect()` already follow it). */
export interface RestartEvent {
  /** The new process's ready line (its url differs unless `port` is fixed). */
  ready: ReadyLine;
  /** Restarts in a row so far, this one included (1 after a single crash). */
  attempt: number;
  /** How the previous process ended. */
  previous: ExitInfo;
}

export interface SidecarEvents {
  exit: ExitEvent;
  restart: RestartEvent;
}

export interface SidecarProcess {
  /** The ready line of the current process. */
  readonly ready: ReadyLine;
  /** The current process. */
  readonly child: ChildProcess;
  /**
   * Resolves when the sidecar exited for good: without `supervise` when the
   * process exits; with it after `stop()` or when restarts gave up.
   */
  exited: Promise<ExitInfo>;
  /**
   * connect() to this sidecar (Node `ws`, bearer token). With `supervise`,
   * the client follows each restart (`SidecarClient.setEndpoint`).
   */
  connect(opts?: Omit<ConnectOptions, "url" | "token">): Promise<SidecarClient>;
  /**
   * Closes stdin (the sidecar shuts down cleanly: turns persisted, children
   * killed) and waits for the exit; SIGKILL after `timeoutMs` (default
   * 15000). No restart follows.
   */
  stop(timeoutMs?: number): Promise<ExitInfo>;
  /** Registers a handler for `exit` or `restart`; returns its remover. */
  on<E extends keyof SidecarEvents>(event: E, handler: (e: SidecarEvents[E]) => void): () => void;
}

/** One started process. */
interface Started {
  ready: ReadyLine;
  child: ChildProcess;
  exited: Promise<ExitInfo>;
  startedAt: number;
}

/**
 * Spawns the sidecar and resolves with its ready line. Secrets go on stdin
 * (`--secrets-stdin`), never in the environment or the arguments; stdin
 * stays open for the sidecar's life (its EOF means "exit"); stderr lines go
 * to `logger`. Rejects with `SpawnError` (with the last stderr lines) when it
 * exits before it is ready. With `supervise`, restarts it when it dies.
 */
export async function spawnSidecar(opts: SpawnOptions): Promise<SidecarProcess> {
  const token = opts.token ?? randomBytes(32).toString("hex");
  const first = await startOnce(opts, token);
  return new Supervisor(opts, token, first);
}

class Supervisor implements SidecarProcess {
  exited: Promise<ExitInfo>;
  #opts: SpawnOptions;
  #token: string;
  #sup: Required<SuperviseOptions> | undefined;
  #cur: Started;
  #log: Logger;
  #stopping = false;
  #restarts = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #starting: Promise<Started> | undefined;
  #last: ExitInfo = { code: null, signal: null };
  #done!: (r: ExitInfo) => void;
  #clients = new Set<SidecarClient>();
  #handlers: { [E in keyof SidecarEvents]: Set<(e: SidecarEvents[E]) => void> } = { exit: new Set(), restart: new Set() };

  constructor(opts: SpawnOptions, token: string, first: Started) {
    this.#opts = opts;
    this.#token = token;
    this.#log = opts.logger ?? {};
    const s = opts.supervise;
    this.#sup = s
      ? { initialDelayMs: 250, maxDelayMs: 10000, maxRestarts: 5, stableMs: 60000, ...(s === true ? {} : s) }
      : undefined;
    this.#cur = first;
    this.exited = new Promise((resolve) => (this.#done = resolve));
    this.#watch(first);
  }

  get ready(): ReadyLine {
    return this.#cur.ready;
  }

  get child(): ChildProcess {
    return this.#cur.child;
  }

  async connect(c: Omit<ConnectOptions, "url" | "token"> = {}): Promise<SidecarClient> {
    const client = await connect({ ...c, url: this.#cur.ready.url, token: this.#cur.ready.token });
    // It may have restarted while this client initialized.
    if (client.url !== this.#cur.ready.url) client.setEndpoint(this.#cur.ready.url, this.#cur.ready.token);
    if (this.#sup) {
      this.#clients.add(client);
      client.onStateChange((st) => st === "closed" && this.#clients.delete(client));
    }
    return client;
  }

  async stop(timeoutMs = 15000): Promise<ExitInfo> {
    this.#stopping = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const starting = this.#starting;
    if (starting) await starting.catch(() => {}); // #restart stops it or it failed
    const child = this.#cur.child;
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin!.end();
      const t = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      await this.#cur.exited;
      clearTimeout(t);
    }
    // Settled already when the exit above was watched; else (stopped while
    // a restart waited or failed) the last exit is the final one.
    this.#finish(this.#last);
    return this.exited;
  }

  on<E extends keyof SidecarEvents>(event: E, handler: (e: SidecarEvents[E]) => void): () => void {
    const set = this.#handlers[event] as Set<(e: SidecarEvents[E]) => void>;
    set.add(handler);
    return () => set.delete(handler);
  }

  #emit<E extends keyof SidecarEvents>(event: E, e: SidecarEvents[E]): void {
    for (const h of this.#handlers[event] as Set<(e: SidecarEvents[E]) => void>) {
      try {
        h(e);
      } catch (err) {
        this.#log.error?.(`sidecar ${event} handler threw`, err);
      }
    }
  }

  #finish(r: ExitInfo): void {
    this.#done(r);
  }

  #watch(p: Started): void {
    p.exited.then((r) => {
      if (p !== this.#cur) return;
      this.#last = r;
      if (this.#stopping || !this.#sup) {
        this.#emit("exit", { ...r, restarting: false });
        return this.#finish(r);
      }
      if (Date.now() - p.startedAt >= this.#sup.stableMs) this.#restarts = 0;
      this.#log.warn?.(`sidecar exited unexpectedly (${r.signal ?? `status ${r.code}`}); restarting`);
      this.#again(r, r);
    });
  }

  /** Schedules the next restart, or gives up. `r` is how the last try ended. */
  #again(r: ExitInfo, previous: ExitInfo, err?: Error): void {
    const sup = this.#sup!;
    if (this.#restarts >= sup.maxRestarts) {
      const error = new SpawnError(`sidecar: gave up after ${this.#restarts} restarts in a row${err ? `: ${err.message}` : ""}`, r.code, "");
      this.#emit("exit", { ...r, restarting: false, error });
      return this.#finish(r);
    }
    this.#emit("exit", { ...r, restarting: true });
    const delay = Math.min(sup.initialDelayMs * 2 ** this.#restarts, sup.maxDelayMs);
    this.#restarts++;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#restart(previous);
    }, delay);
  }

  async #restart(previous: ExitInfo): Promise<void> {
    if (this.#stopping) return;
    this.#starting = startOnce(this.#opts, this.#token);
    let p: Started;
    try {
      p = await this.#starting;
    } catch (e) {
      this.#starting = undefined;
      if (this.#stopping) return;
      const err = e as SpawnError;
      this.#log.warn?.(`sidecar restart failed: ${err.message}`);
      return this.#again({ code: err.exitCode ?? null, signal: null }, previous, err);
    }
    this.#starting = undefined;
    this.#cur = p;
    this.#watch(p);
    if (this.#stopping) return; // stop() ends it
    for (const c of this.#clients) c.setEndpoint(p.ready.url, p.ready.token);
    this.#emit("restart", { ready: p.ready, attempt: this.#restarts, previous });
  }
}

/** Starts one sidecar process and waits for its ready line. */
function startOnce(opts: SpawnOptions, token: string): Promise<Started> {
  const args = ["--secrets-stdin"];
  if (opts.dataDir) args.push("--data-dir", opts.dataDir);
  if (opts.port !== undefined) args.push("--port", String(opts.port));
  if (opts.logLevel) args.push("--log-level", opts.logLevel);
  for (const o of opts.allowOrigins ?? []) args.push("--allow-origin", o);
  args.push(...(opts.args ?? []));

  const child = spawn(opts.bin, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ["pipe", "pipe", "pipe"],
    windowsHide: true,
  });
  const log = opts.logger ?? {};
  const tail: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (line) => {
    tail.push(line);
    if (tail.length > 20) tail.shift();
    logLine(log, line);
  });
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });
  // A write error (the sidecar gone) surfaces through "exit"; keep it quiet.
  child.stdin!.on("error", () => {});
  const secrets: SecretsLine = { token };
  if (opts.keys && Object.keys(opts.keys).length) secrets.keys = opts.keys;
  child.stdin!.write(JSON.stringify(secrets) + "\n");

  return new Promise((resolve, reject) => {
    let done = false;
    const fail = (msg: string, code: number | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      // stderr may still be flushing: give its last lines a moment.
      setImmediate(() => reject(new SpawnError(msg, code, tail.join("\n"))));
    };
    const timer = setTimeout(() => {
      fail(`sidecar: no ready line within ${opts.readyTimeoutMs ?? 30000} ms`, null);
      child.kill("SIGKILL");
    }, opts.readyTimeoutMs ?? 30000);
    child.once("error", (e) => fail(`sidecar: cannot start ${opts.bin}: ${e.message}`, null));
    exited.then(({ code, signal }) => fail(`sidecar exited before it was ready (${signal ?? `status ${code}`})`, code));
    const rl = createInterface({ input: child.stdout! });
    rl.once("line", (line) => {
      rl.close();
      let ready: ReadyLine;
      try {
        ready = JSON.parse(line) as ReadyLine;
      } catch {
        child.kill("SIGKILL");
        return fail(`sidecar: the ready line is not JSON: ${line.slice(0, 200)}`, null);
      }
      if (ready.event !== "ready" || !ready.url) {
        child.kill("SIGKILL");
        return fail("sidecar: unexpected first stdout line", null);
      }
      done = true;
      clearTimeout(timer);
      resolve({ ready, child, exited, startedAt: Date.now() });
    });
  });
}

/** logLine passes a stderr line to the logger at its level (JSON or text). */
function logLine(log: Logger, line: string): void {
  let level = "info";
  const m = /level[=":]+\s*"?([A-Za-z]+)/.exec(line);
  if (m?.[1]) level = m[1].toLowerCase();
  const f = level.startsWith("err") ? log.error : level.startsWith("warn") ? log.warn : level.startsWith("debug") ? log.debug : log.info;
  f?.call(log, line);
}
