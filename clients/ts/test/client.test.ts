// The client against the real sidecar binary and the scripted model.

import assert from "node:assert/strict";
import { test } from "node:test";

import WebSocket from "ws";

import {
  connect,
  ConflictError,
  ConnectionClosedError,
  InvalidParamsError,
  NotFoundError,
  RpcError,
  SpawnError,
  spawnSidecar,
  type ConnectionState,
  type PendingRequest,
  type PresenceClient,
  type WebSocketLike,
} from "../src/node.js";
import { calls, cleanEnv, Collector, deadline, sidecarBin, start, tempDir, text, toolCall } from "./helpers.js";

const client = { name: "ts-client-test", version: "0.0.0" };

/**
 * A command's output line in a terminal: at the start of a line, or right
 * after the prompt when the shell printed its prompt only after the typed
 * command's echo (input typed before the shell started).
 */
const line = (text: string) => new RegExp(`(?:^|[$#] )${text}\r?$`, "m");

test("spawnSidecar: ready line, the token passed on stdin, stderr to the logger, stop by closing stdin", async () => {
  const token = "tok-" + "x".repeat(40);
  const env = await start([text("hi")], { token, logLevel: "debug", keys: { openai: "sk-test-" + "k".repeat(24) } });
  const { ready } = env.sidecar;
  assert.equal(ready.event, "ready");
  assert.equal(ready.token, token);
  assert.match(ready.url, /^ws:\/\/127\.0\.0\.1:\d+\/rpc$/);
  assert.equal(ready.protocol, 1);

  const c = await env.sidecar.connect({ client });
  assert.equal(c.initializeResult?.protocolVersion, 1);
  assert.equal(c.initializeResult?.capabilities.provider, "scripted");
  // The key went on stdin too, and is held in memory only.
  const { keys } = await c.call("keys.status");
  assert.equal(keys.find((k) => k.provider === "openai")?.source, "stdin");
  c.close();

  // A wrong token is refused before the upgrade.
  await assert.rejects(connect({ url: ready.url, token: "wrong-" + "y".repeat(30), client, reconnect: false }), ConnectionClosedError);

  const exit = await env.sidecar.stop();
  assert.equal(exit.code, 0);
  assert.ok(env.stderr.length > 0, "the sidecar's log reached the logger");
  assert.ok(!env.stderr.some((l) => l.includes(token) || l.includes("sk-test-")), "the token and keys are never logged");
});

test("spawnSidecar: an exit before the ready line rejects with SpawnError and the stderr tail", async () => {
  const dataDir = tempDir("bad");
  const err = await spawnSidecar({ bin: sidecarBin(), dataDir, args: ["--log-level", "nonsense"], env: cleanEnv() }).then(
    () => assert.fail("spawned"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof SpawnError, String(err));
  assert.notEqual(err.exitCode, 0);
  assert.ok(err.stderr.length > 0, "stderr tail is kept");
});

test("call: typed results and Error subclasses with code and data", async (t) => {
  const env = await start([]);
  t.after(() => env.sidecar.stop());
  const c = await env.sidecar.connect({ client });
  t.after(() => c.close());

  const p = await c.call("project.open", { path: env.projDir });
  assert.equal(typeof p.projectId, "string");
  const { sessionId, session } = await c.call("session.create", { projectId: p.projectId });
  assert.equal(session.sessionId, sessionId);
  assert.equal(session.mode, "interactive");

  const nf = await c.call("session.get", { sessionId: "nope" }).catch((e: unknown) => e);
  assert.ok(nf instanceof NotFoundError && nf instanceof RpcError && nf instanceof Error);
  assert.equal(nf.code, -32002);
  assert.equal(nf.method, "session.get");

  const bad = await c.request("session.subscribe", { sessionId, afterSeq: "x" }).catch((e: unknown) => e);
  assert.ok(bad instanceof InvalidParamsError, String(bad));
  assert.equal(bad.code, -32602);
  assert.match(bad.message, /afterSeq/);
  // error.data is machine-readable.
  const ver = await c.request("initialize", { protocolVersion: 99 }).catch((e: unknown) => e);
  assert.ok(ver instanceof InvalidParamsError, String(ver));
  assert.deepEqual(ver.data, { kind: "unsupported_version", field: "protocolVersion", supported: { min: 1, max: 1 } });
  const features = c.initializeResult!.capabilities.features;
  assert.ok(features.includes("terminals"));
  if (features.includes("errorData")) {
    // Every error carries it where the sidecar says so.
    assert.deepEqual(bad.data, { kind: "wrong_type", field: "afterSeq", expected: "integer" });
    assert.equal(nf.data?.kind, "not_found");
  }
});

test("subscribe: replayed events are never lost, each seq once and in order", async (t) => {
  // Long turns: many events land in the socket right behind the subscribe
  // answer. Tool rounds, not one long text, since the sidecar may coalesce
  // a stream's deltas into few events.
  const rounds = (tag: string) => [
    ...Array.from({ length: 30 }, (_, i) => calls("", toolCall(`${tag}${i}`, "list_files", { path: "." }))),
    text("done"),
  ];
  const env = await start([...rounds("a"), ...rounds("b")]);
  t.after(() => env.sidecar.stop());
  const c = await env.sidecar.connect({ client });
  t.after(() => c.close());
  const { projectId } = await c.call("project.open", { path: env.projDir });
  const { sessionId } = await c.call("session.create", { projectId, mode: "auto" });

  // Run a turn to its end with nobody subscribed.
  const live = new Collector();
  const first = await c.subscribe(sessionId, { onEvent: live.push });
  await c.call("turn.start", { sessionId, text: "go" });
  await live.type("turn_end");
  await first.close();
  const total = live.events.length;
  assert.ok(total > 100, `a long turn (${total} events)`);

  // Each fresh subscription from 0 gets all of them, the first included.
  for (let i = 0; i < 5; i++) {
    const col = new Collector();
    const sub = await c.subscribe(sessionId, { afterSeq: 0, onEvent: col.push });
    await col.until((evs) => evs.length >= total, `${total} replayed events`);
    assert.deepEqual(col.seqs(), Array.from({ length: total }, (_, k) => k + 1));
    assert.equal(col.events[0]!.type, "turn_start");
    await sub.close();
  }

  // From the middle, while a second turn streams live: no gap, no duplicate.
  const col = new Collector();
  await c.call("turn.start", { sessionId, text: "again" });
  await c.subscribe(sessionId, { afterSeq: 50, onEvent: col.push });
  await col.type("turn_end", 2);
  const seqs = col.seqs();
  assert.equal(seqs[0], 51);
  seqs.forEach((s, k) => assert.equal(s, 51 + k));
});

test("pending requests: listed, answered with respond, conflict when answered twice; the event union narrows", async (t) => {
  const env = await start([
    calls("", toolCall("c1", "run_shell", { command: "echo approved > a.txt" })),
    calls("", toolCall("q1", "ask_user", { question: "Which color?", options: ["red", "blue"] })),
    text("done"),
  ]);
  t.after(() => env.sidecar.stop());
  const c = await env.sidecar.connect({ client });
  t.after(() => c.close());
  const { projectId } = await c.call("project.open", { path: env.projDir });
  const { sessionId } = await c.call("session.create", { projectId });

  const col = new Collector();
  const lists: PendingRequest[][] = [];
  const sub = await c.subscribe(sessionId, { onEvent: col.push, onPendingChange: (p) => lists.push(p) });
  await c.call("turn.start", { sessionId, text: "go" });
  await col.type("permission_required");
  assert.equal(sub.pending.length, 1);
  const perm = sub.pending[0]!;
  assert.equal(perm.kind, "approval");
  if (perm.kind === "approval") {
    assert.equal(perm.data.name, "run_shell"); // narrowed: data is PermissionRequiredData
    assert.equal(perm.data.arguments.command, "echo approved > a.txt");
  }
  const ev = col.events.find((e) => e.type === "permission_required")!;
  if (ev.type === "permission_required") assert.equal(ev.data.requestId, perm.requestId);

  // A second window sees the same pending request from its subscribe answer.
  // Presence: both windows are listed, the first learns of the second.
  const joined = new Promise<PresenceClient[]>((res) => {
    c.on("session.presence", (p) => res(p.clients));
  });
  const c2 = await env.sidecar.connect({ client: { name: "window-2", version: "2" } });
  t.after(() => c2.close());
  const col2 = new Collector();
  const sub2 = await c2.subscribe(sessionId, { onEvent: col2.push });
  assert.deepEqual(sub2.pending.map((p) => p.requestId), [perm.requestId]);
  assert.equal(sub2.clients.length, 2);
  assert.equal(sub2.clients[1]!.name, "window-2");
  assert.deepEqual((await joined).map((x) => x.name), sub2.clients.map((x) => x.name));
  assert.deepEqual(sub.clients, sub2.clients);

  assert.deepEqual(await sub.respond(perm, { outcome: "once" }), { answered: true, resumed: false });
  assert.equal(sub.pending.length, 0);
  // The other window closes its card on request_resolved, before the tool runs.
  await col2.type("request_resolved");
  const resolved = col2.events.at(-1)!;
  assert.ok(resolved.type === "request_resolved" && resolved.data.requestId === perm.requestId && resolved.data.outcome === "approved");
  assert.equal(sub2.pending.length, 0);
  const late = await sub2.respond(perm, { outcome: "deny" }).catch((e: unknown) => e);
  assert.ok(late instanceof ConflictError, String(late));
  if (c.initializeResult!.capabilities.features.includes("errorData")) assert.equal(late.data?.kind, "already_answered");

  await col.type("ask_user_question");
  const q = sub.pending[0]!;
  assert.equal(q.kind, "question");
  await sub.respond({ requestId: q.requestId, kind: "question" }, { answer: "blue" });
  await col.type("turn_end");
  const end = col.events.at(-1)!;
  assert.ok(end.type === "turn_end" && end.data.status === "completed");
  assert.equal(sub.pending.length, 0);
  assert.ok(lists.some((l) => l.length === 1) && lists.at(-1)!.length === 0);
});

test("reconnect: a dropped socket rejects pending calls, reconnects and resumes from the last seq", async (t) => {
  const env = await start([text("slow ".repeat(150), { chunkSize: 2, delay: 5 })]);
  t.after(() => env.sidecar.stop());
  // A factory that keeps the raw sockets, so the test can cut one.
  const sockets: WebSocket[] = [];
  const c = await env.sidecar.connect({
    client,
    reconnect: { initialDelayMs: 10 },
    webSocket: (url, token) => {
      const ws = new WebSocket(url, ["zqagent.v1"], { headers: { Authorization: `Bearer ${token}` } });
      sockets.push(ws);
      return ws as unknown as WebSocketLike;
    },
  });
  t.after(() => c.close());
  const states: ConnectionState[] = [];
  c.onStateChange((s) => states.push(s));
  const { projectId } = await c.call("project.open", { path: env.projDir });
  const { sessionId } = await c.call("session.create", { projectId, mode: "auto" });
  const col = new Collector();
  await c.subscribe(sessionId, { onEvent: col.push });
  await c.call("turn.start", { sessionId, text: "go" });
  await col.until((evs) => evs.length >= 20, "20 events");

  const inFlight = c.call("session.get", { sessionId });
  sockets[0]!.terminate();
  await assert.rejects(inFlight, ConnectionClosedError);

  await col.type("turn_end");
  const seqs = col.seqs();
  seqs.forEach((s, k) => assert.equal(s, k + 1, "no gap, no duplicate"));
  assert.ok(sockets.length >= 2, "a new socket was opened");
  await deadline(
    new Promise<void>((r) => (c.state === "open" ? r() : c.onStateChange((s) => s === "open" && r()))),
    "open again",
  );
  assert.deepEqual(states.slice(0, 2), ["reconnecting", "open"]);
  // The new connection works.
  assert.equal((await c.call("session.get", { sessionId })).session.sessionId, sessionId);
});

test("close: pending calls reject with ConnectionClosedError and no reconnect follows", async (t) => {
  const env = await start([]);
  t.after(() => env.sidecar.stop());
  const c = await env.sidecar.connect({ client });
  const p = c.call("project.list");
  c.close();
  await assert.rejects(p, ConnectionClosedError);
  await assert.rejects(c.call("project.list"), ConnectionClosedError);
  await deadline(new Promise<void>((r) => (c.state === "closed" ? r() : c.onStateChange((s) => s === "closed" && r()))), "closed");
});

test("terminal: output decoded from base64, input in order, exit", async (t) => {
  const env = await start([]);
  t.after(() => env.sidecar.stop());
  const c = await env.sidecar.connect({ client });
  t.after(() => c.close());
  const { projectId } = await c.call("project.open", { path: env.projDir });
  const info = await c.call("terminal.create", { projectId, cols: 80, rows: 24, command: ["/bin/sh"] });
  let out = "";
  const dec = new TextDecoder();
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  let exited!: (code: number) => void;
  const exit = new Promise<number>((r) => (exited = r));
  const term = await c.terminal(projectId, info.id, {
    onData: (bytes) => {
      assert.ok(bytes instanceof Uint8Array);
      out += dec.decode(bytes, { stream: true });
      for (const w of waiters.filter((w) => w.re.test(out))) w.resolve();
    },
    onExit: exited,
  });
  const saw = (re: RegExp) =>
    deadline(new Promise<void>((resolve) => (re.test(out) ? resolve() : waiters.push({ re, resolve }))), `${re}`).catch((e: Error) => {
      throw new Error(`${e.message} in ${JSON.stringify(out)}`);
    });
  await term.write("echo h''i\r");
  await saw(line("hi"));
  // One write per keystroke, none awaited (as xterm.js's onData gives
  // them): they reach the shell in order.
  await Promise.all([..."echo abcdefghijklmnopqrstuvwxyz0123456789\r"].map((ch) => term.write(ch)));
  await saw(line("abcdefghijklmnopqrstuvwxyz0123456789"));
  await term.write("exit 3\r");
  assert.equal(await deadline(exit, "terminal.exit"), 3);
  assert.ok(term.nextSeq > 0);
});

test("terminal: a reconnect resumes after the last byte delivered (nothing twice)", async (t) => {
  const env = await start([]);
  t.after(() => env.sidecar.stop());
  const sockets: WebSocket[] = [];
  const c = await env.sidecar.connect({
    client,
    reconnect: { initialDelayMs: 10 },
    webSocket: (url, token) => {
      const ws = new WebSocket(url, ["zqagent.v1"], { headers: { Authorization: `Bearer ${token}` } });
      sockets.push(ws);
      return ws as unknown as WebSocketLike;
    },
  });
  t.after(() => c.close());
  const { projectId } = await c.call("project.open", { path: env.projDir });
  const info = await c.call("terminal.create", { projectId, cols: 80, rows: 24, command: ["/bin/sh"] });
  let out = "";
  const dec = new TextDecoder();
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  const term = await c.terminal(projectId, info.id, {
    onData: (bytes) => {
      out += dec.decode(bytes, { stream: true });
      for (const w of waiters.filter((w) => w.re.test(out))) w.resolve();
    },
  });
  const saw = (re: RegExp) =>
    deadline(new Promise<void>((resolve) => (re.test(out) ? resolve() : waiters.push({ re, resolve }))), `${re}`).catch((e: Error) => {
      throw new Error(`${e.message} in ${JSON.stringify(out)}`);
    });
  await term.write("echo o''ne\r");
  await saw(line("one"));
  const reopened = new Promise<void>((r) => c.onStateChange((s) => s === "open" && r()));
  sockets[0]!.terminate();
  await deadline(reopened, "reconnected");
  await term.write("echo t''wo\r");
  await saw(line("two"));
  assert.equal(out.match(new RegExp(line("one").source, "gm"))?.length, 1, `"one" once: ${JSON.stringify(out)}`);
  assert.equal(out.match(/echo o''ne/g)?.length, 1, "its echo once");
});
