// Node and Electron main: spawn the sidecar and connect with `ws`.
//
//     import { spawnSidecar } from "@zqagent/sidecar-client/node";
//     const sidecar = await spawnSidecar({ bin, dataDir, keys: { openai: key } });
//     const client = await sidecar.connect({ client: { name: "my-app", version: "1.0.0" } });
//     …
//     await sidecar.stop(); // closes stdin: the sidecar exits cleanly

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
  /** The connection token (default: 256 random bits). Sent on stdin. */
  token?: string;
  /** API keys by provider profile, held in the sidecar's memory. Sent on stdin. */
  keys?: Record<string, string>;
  /** The child's environment (default: this process's). Never put secrets here. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Receives each stderr line (the sidecar's log; never a secret). */
  logger?: Logger;
  /** How long to wait for the ready line (ms, default 30000). */
  readyTimeoutMs?: number;
}

export interface SidecarProcess {
  /** The ready line. */
  ready: ReadyLine;
  child: ChildProcess;
  /** Resolves when the process exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** connect() to this sidecar (Node `ws`, bearer token). */
  connect(opts?: Omit<ConnectOptions, "url" | "token">): Promise<SidecarClient>;
  /**
   * Closes stdin (the sidecar shuts down cleanly: turns persisted, children
   * killed) and waits for the exit; SIGKILL after `timeoutMs` (default 15000).
   */
  stop(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns the sidecar and resolves with its ready line. Secrets go on stdin
 * (`--secrets-stdin`), never in the environment or the arguments; stdin
 * stays open for the sidecar's life (its EOF means "exit"); stderr lines go
 * to `logger`. Rejects with `SpawnError` (with the last stderr lines) when it
 * exits before it is ready.
 */
export function spawnSidecar(opts: SpawnOptions): Promise<SidecarProcess> {
  const args = ["--secrets-stdin"];
  if (opts.dataDir) args.push("--data-dir", opts.dataDir);
  if (opts.port !== undefined) args.push("--port", String(opts.port));
  if (opts.logLevel) args.push("--log-level", opts.logLevel);
  for (const o of opts.allowOrigins ?? []) args.push("--allow-origin", o);
  args.push(...(opts.args ?? []));
  const token = opts.token ?? randomBytes(32).toString("hex");

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
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
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
        return fail(`sidecar: the ready line is not JSON: ${line.slice(0, 200)}`, null);
      }
      if (ready.event !== "ready" || !ready.url) return fail("sidecar: unexpected first stdout line", null);
      done = true;
      clearTimeout(timer);
      resolve({
        ready,
        child,
        exited,
        connect: (c = {}) => connect({ ...c, url: ready.url, token: ready.token }),
        stop: async (timeoutMs = 15000) => {
          if (child.exitCode === null && child.signalCode === null) {
            child.stdin!.end();
            const t = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
            const r = await exited;
            clearTimeout(t);
            return r;
          }
          return exited;
        },
      });
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
