// The client survives a sidecar crash: spawnSidecar({supervise}) restarts
// a sidecar killed with SIGKILL on the same data dir, and a connected client
// follows the new address and resumes its subscriptions, pending approval
// included. And a client whose sidecar is gone for good stops retrying.

import assert from "node:assert/strict";
import { copyFileSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";

import WebSocket from "ws";

import { ConnectionClosedError, DEFAULT_RECONNECT_ATTEMPTS, type ConnectionState, type ExitEvent, type PendingRequest, type RestartEvent, type WebSocketLike } from "../src/node.js";
import { calls, Collector, deadline, sidecarBin, start, tempDir, text, toolCall, writeScript } from "./helpers.js";

const client = { name: "ts-supervise-test", version: "0.0.0" };

const stateIs = (c: { state: ConnectionState; onStateChange(h: (s: ConnectionState, err?: Error) => void): () => void }, want: ConnectionState) =>
  deadline(
    new Promise<void>((r) => {
      if (c.state === want) return r();
      const off = c.onStateChange((s) => s === want && (off(), r()));
    }),
    `state ${want}`,
  );

test("supervise: kill -9 of the sidecar under a client; it restarts, the client resumes, the pending approval is back and answerable", async (t) => {
  const env = await start([calls("", toolCall("c1", "run_shell", { command: "echo approved > a.txt" })), text("unused")], {
    supervise: { initialDelayMs: 20 },
  });
  t.after(() => env.sidecar.stop());
  const c = await env.sidecar.connect({ client, reconnect: { initialDelayMs: 20, maxDelayMs: 500 } });
  t.after(() => c.close());
  const { projectId } = await c.call("project.open", { path: env.projDir });
  const { sessionId } = await c.call("session.create", { projectId });

  const col = new Collector();
  const lists: PendingRequest[][] = [];
  let pendingInOnEvent: string[] | undefined;
  const sub = await c.subscribe(sessionId, {
    onEvent: (ev) => {
      if (ev.type === "permission_required") pendingInOnEvent ??= sub.pending.map((p) => p.requestId);
      col.push(ev);
    },
    onPendingChange: (p) => lists.push(p),
  });
  await c.call("turn.start", { sessionId, text: "go" });
  await col.type("permission_required");
  assert.equal(sub.pending.length, 1);
  const perm = sub.pending[0]!;
  // onPendingChange ran before onEvent saw the event that opened it.
  assert.deepEqual(pendingInOnEvent, [perm.requestId]);
  const seenBefore = col.events.length;

  // The restarted sidecar plays the script from its start: after the
  // answer, the model only says it is done.
  writeScript(dirname(env.dataDir), [text("done after the restart")]);

  const oldPid = env.sidecar.child.pid!;
  const oldUrl = env.sidecar.ready.url;
  const exits: ExitEvent[] = [];
  env.sidecar.on("exit", (e) => exits.push(e));
  const restarted = new Promise<RestartEvent>((r) => env.sidecar.on("restart", r));
  const states: ConnectionState[] = [];
  c.onStateChange((s) => states.push(s));
  const listsBefore = lists.length;

  process.kill(oldPid, "SIGKILL");
  const ev = await deadline(restarted, "the restart event");
  assert.deepEqual(exits[0], { code: null, signal: "SIGKILL", restarting: true });
  assert.equal(ev.attempt, 1);
  assert.equal(ev.previous.signal, "SIGKILL");
  assert.notEqual(env.sidecar.child.pid, oldPid, "a new process");
  assert.equal(env.sidecar.ready, ev.ready);
  assert.notEqual(ev.ready.url, oldUrl, "on a new port");

  await stateIs(c, "open");
  assert.equal(c.url, ev.ready.url, "the client follows the new url");
  assert.equal(states[0], "reconnecting");
  // New events arrive after the restart: the turn is suspended, not over.
  await col.type("turn_suspended");
  assert.ok(col.events.length > seenBefore);
  // The pending approval came back from the new process's subscribe answer.
  assert.deepEqual(sub.pending.map((p) => p.requestId), [perm.requestId]);
  assert.ok(
    lists.slice(listsBefore).some((l) => l.some((p) => p.requestId === perm.requestId)),
    "onPendingChange reported it after the reconnect",
  );

  // It can be answered: the turn resumes and ends.
  assert.deepEqual(await sub.respond(perm, { outcome: "once" }), { answered: true, resumed: true });
  await col.type("turn_end");
  const end = col.events.at(-1)!;
  assert.ok(end.type === "turn_end" && end.data.status === "completed", JSON.stringify(end));
  assert.equal(readFileSync(join(env.projDir, "a.txt"), "utf8").trim(), "approved");
  assert.deepEqual(col.seqs(), Array.from({ length: col.events.length }, (_, k) => k + 1), "each seq once, in order, across the crash");
  assert.equal(sub.pending.length, 0);

  // stop() ends it for good: no restart.
  const exit = await env.sidecar.stop();
  assert.equal(exit.code, 0);
  assert.deepEqual(exits.at(-1), { code: 0, signal: null, restarting: false });
  assert.equal(exits.length, 2);
});

test("supervise off: a killed sidecar is not restarted and exited resolves", async () => {
  const env = await start([]);
  const exits: ExitEvent[] = [];
  env.sidecar.on("exit", (e) => exits.push(e));
  let restarts = 0;
  env.sidecar.on("restart", () => restarts++);
  env.sidecar.child.kill("SIGKILL");
  assert.deepEqual(await deadline(env.sidecar.exited, "exited"), { code: null, signal: "SIGKILL" });
  assert.deepEqual(exits, [{ code: null, signal: "SIGKILL", restarting: false }]);
  assert.equal(restarts, 0);
});

test("reconnect: maxAttempts has a finite default; then the client is closed with the reason", async () => {
  const env = await start([]);
  let sockets = 0;
  const c = await env.sidecar.connect({
    client,
    reconnect: { initialDelayMs: 1, maxDelayMs: 1 },
    webSocket: (url, token) => {
      sockets++;
      return new WebSocket(url, ["zqagent.v1"], { headers: { Authorization: `Bearer ${token}` } }) as unknown as WebSocketLike;
    },
  });
  let why: Error | undefined;
  const closed = new Promise<void>((r) => c.onStateChange((s, err) => s === "closed" && ((why = err), r())));
  await env.sidecar.stop();
  await deadline(closed, "closed after the reconnect tries");
  assert.equal(sockets, 1 + DEFAULT_RECONNECT_ATTEMPTS);
  assert.ok(why instanceof ConnectionClosedError, String(why));
  await assert.rejects(c.call("project.list"), ConnectionClosedError);
});

test("setEndpoint: an open client moves to the new address at once", async (t) => {
  const a = await start([]);
  t.after(() => a.sidecar.stop());
  const b = await start([]);
  t.after(() => b.sidecar.stop());
  const c = await a.sidecar.connect({ client });
  t.after(() => c.close());
  await c.call("project.open", { path: a.projDir });
  const states: ConnectionState[] = [];
  c.onStateChange((s) => states.push(s));
  const reopened = stateIsAfterDrop(c);
  c.setEndpoint(b.sidecar.ready.url, b.sidecar.ready.token);
  await reopened;
  assert.deepEqual(states, ["reconnecting", "open"]);
  assert.equal(c.url, b.sidecar.ready.url);
  assert.deepEqual((await c.call("project.list")).projects, [], "talking to the other sidecar");
});

/** Resolves when the client is open again after a drop. */
function stateIsAfterDrop(c: { onStateChange(h: (s: ConnectionState) => void): () => void }): Promise<void> {
  let dropped = false;
  return deadline(
    new Promise<void>((r) => {
      const off = c.onStateChange((s) => {
        if (s === "reconnecting") dropped = true;
        if (s === "open" && dropped) (off(), r());
      });
    }),
    "open again",
  );
}

test("supervise: restarts that keep failing give up after maxRestarts; exited resolves", async () => {
  // A copy of the binary, removed after the start: every restart fails.
  const bin = join(tempDir("bin"), "sidecar");
  copyFileSync(sidecarBin(), bin);
  const env = await start([], { bin, supervise: { initialDelayMs: 1, maxRestarts: 2 } });
  const exits: ExitEvent[] = [];
  env.sidecar.on("exit", (e) => exits.push(e));
  let restarts = 0;
  env.sidecar.on("restart", () => restarts++);
  rmSync(bin);
  env.sidecar.child.kill("SIGKILL");
  await deadline(env.sidecar.exited, "exited after giving up");
  assert.equal(restarts, 0);
  assert.deepEqual(
    exits.map((e) => e.restarting),
    [true, true, false],
    "the kill, the first failed restart, then giving up",
  );
  assert.match(String(exits.at(-1)!.error), /gave up after 2 restarts.*cannot start/s);
});

test("supervise: stop() while a restart waits cancels it", async () => {
  const env = await start([], { supervise: { initialDelayMs: 600000 } });
  const exited = new Promise<ExitEvent>((r) => env.sidecar.on("exit", r));
  let restarts = 0;
  env.sidecar.on("restart", () => restarts++);
  env.sidecar.child.kill("SIGKILL");
  assert.equal((await deadline(exited, "exit")).restarting, true);
  assert.deepEqual(await deadline(env.sidecar.stop(), "stop"), { code: null, signal: "SIGKILL" });
  assert.equal(restarts, 0);
});
