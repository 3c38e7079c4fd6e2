// Test helpers: a real sidecar binary (go build, or $SIDECAR_BIN), a
// scripted model (ZQAGENT_SCRIPT), temp dirs, and event waits with
// generous deadlines (never a sleep).

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import WebSocket from "ws";

import { spawnSidecar, type SidecarProcess, type SpawnOptions, type SessionEvent, type WebSocketFactory, type WebSocketLike } from "../src/node.js";

const repoRoot = resolve(fileURLToPath(import.meta.url), "../../../../..");

let builtBin: string | undefined;

/** The sidecar binary: $SIDECAR_BIN, else built once into a temp dir. */
export function sidecarBin(): string {
  if (process.env.SIDECAR_BIN) return process.env.SIDECAR_BIN;
  if (!builtBin) {
    const dir = mkdtempSync(join(tmpdir(), "zqagent-ts-bin-"));
    builtBin = join(dir, process.platform === "win32" ? "sidecar.exe" : "sidecar");
    execFileSync("go", ["build", "-o", builtBin, "./cmd/sidecar"], { cwd: repoRoot, stdio: "inherit" });
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  return builtBin;
}

/** A temp dir removed when the process exits. */
export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `zqagent-ts-${prefix}-`));
  process.on("exit", () => rmSync(d, { recursive: true, force: true }));
  return d;
}

// Script builders (llm/scripted's JSON form, as ui-protocol.md describes).
export type ScriptResponse = Record<string, unknown>;
export const text = (t: string, extra: ScriptResponse = {}): ScriptResponse => ({ text: t, ...extra });
export const toolCall = (id: string, name: string, args: unknown) => ({ id, name, arguments: JSON.stringify(args) });
export const calls = (textBefore: string, ...cs: ReturnType<typeof toolCall>[]): ScriptResponse => ({ text: textBefore, toolCalls: cs });

export function writeScript(dir: string, responses: ScriptResponse[]): string {
  const p = join(dir, "script.json");
  writeFileSync(p, JSON.stringify({ responses }));
  return p;
}

export interface Env {
  sidecar: SidecarProcess;
  dataDir: string;
  projDir: string;
  stderr: string[];
}

/** Spawns a sidecar playing `responses`, with a fresh data dir and project folder. */
export async function start(responses: ScriptResponse[], more: Partial<SpawnOptions> = {}): Promise<Env> {
  const root = tempDir("env");
  const dataDir = join(root, "data");
  const projDir = join(root, "proj");
  mkdirSync(projDir);
  const script = writeScript(root, responses);
  const stderr: string[] = [];
  const sidecar = await spawnSidecar({
    bin: sidecarBin(),
    dataDir,
    env: { ...cleanEnv(), ZQAGENT_SCRIPT: script },
    logger: { info: (l) => stderr.push(l), warn: (l) => stderr.push(l), error: (l) => stderr.push(l), debug: (l) => stderr.push(l) },
    ...more,
  });
  return { sidecar, dataDir, projDir, stderr };
}

/** This process's environment without secrets or a real model. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.endsWith("_API_KEY") || k === "ZQAGENT_TOKEN" || k.startsWith("OPENAI_")) continue;
    env[k] = v;
  }
  return env;
}

/** Collects events and waits for conditions on them. */
export class Collector {
  events: SessionEvent[] = [];
  #waiters: { pred: (evs: SessionEvent[]) => boolean; resolve: () => void }[] = [];

  push = (ev: SessionEvent): void => {
    this.events.push(ev);
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.pred(this.events)) return true;
      w.resolve();
      return false;
    });
  };

  /** Resolves when pred holds; rejects after `ms` with what was seen. */
  until(pred: (evs: SessionEvent[]) => boolean, what: string, ms = 60000): Promise<void> {
    if (pred(this.events)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`timed out waiting for ${what}; saw ${this.events.map((e) => `${e.seq}:${e.type}`).join(" ")}`)), ms);
      this.#waiters.push({ pred, resolve: () => (clearTimeout(t), resolve()) });
    });
  }

  type(t: string, n = 1): Promise<void> {
    return this.until((evs) => evs.filter((e) => e.type === t).length >= n, `${n}× ${t}`);
  }

  seqs(): number[] {
    return this.events.map((e) => e.seq);
  }
}

/** Waits for a promise-free condition signalled by `subscribe(cb)`. */
export function deadline<T>(p: Promise<T>, what: string, ms = 60000): Promise<T> {
  let t: ReturnType<typeof setTimeout>;
  return Promise.race([
    p.finally(() => clearTimeout(t)),
    new Promise<T>((_, reject) => (t = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms))),
  ]);
}

/**
 * `ws` with hooks: `send` returns false to swallow an outgoing frame (the
 * sidecar never sees it, so its call is never answered); `message`
 * rewrites an incoming one.
 */
export function hooked(hooks: { send?: (data: string) => boolean; message?: (data: string) => string }): WebSocketFactory {
  return (url, token) => {
    const ws = new WebSocket(url, ["zqagent.v1"], { headers: { Authorization: `Bearer ${token}` } });
    const like = {
      get readyState() {
        return ws.readyState;
      },
      send: (d: string) => {
        if (!hooks.send || hooks.send(d)) ws.send(d);
      },
      close: (code?: number, reason?: string) => ws.close(code, reason),
      addEventListener: (type: string, l: (ev: never) => void) => {
        if (type === "message") ws.addEventListener("message", (ev) => l({ data: hooks.message ? hooks.message(String(ev.data)) : ev.data } as never));
        else ws.addEventListener(type as "open", l as () => void);
      },
    };
    return like as unknown as WebSocketLike;
  };
}
