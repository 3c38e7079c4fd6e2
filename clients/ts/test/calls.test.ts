// Calls take an AbortSignal and a timeout; incoming frames can be checked
// against protocol/schema.json in development mode.

import assert from "node:assert/strict";
import { test } from "node:test";

import { InvalidFrameError, TimeoutError } from "../src/node.js";
import { frameValidator } from "../src/validate.js";
import { calls, Collector, hooked, start, text, toolCall } from "./helpers.js";

const client = { name: "ts-calls-test", version: "0.0.0" };

test("call: timeoutMs rejects with TimeoutError, a signal with its reason; a late answer is dropped and the connection goes on", async (t) => {
  const env = await start([]);
  t.after(() => env.sidecar.stop());
  // keys.status is never sent: only a timeout or an abort can end it.
  const c = await env.sidecar.connect({ client, webSocket: hooked({ send: (d) => !d.includes('"keys.status"') }) });
  t.after(() => c.close());

  const to = await c.call("keys.status", {}, { timeoutMs: 50 }).catch((e: unknown) => e);
  assert.ok(to instanceof TimeoutError, String(to));
  assert.equal(to.method, "keys.status");
  assert.equal(to.timeoutMs, 50);

  const ac = new AbortController();
  const p = c.call("keys.status", {}, { signal: ac.signal });
  const reason = new Error("the user closed the panel");
  ac.abort(reason);
  assert.equal(await p.catch((e: unknown) => e), reason);

  // Already aborted: rejects at once (AbortError by default).
  const pre = await c.call("project.list", {}, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
  assert.ok(pre instanceof Error && pre.name === "AbortError", String(pre));

  // An abort after the sidecar was asked: its answer comes later and is
  // dropped; the next calls are answered as usual.
  const ac2 = new AbortController();
  const q = c.call("project.list", {}, { signal: ac2.signal });
  ac2.abort();
  await assert.rejects(q, (e: Error) => e.name === "AbortError");
  assert.deepEqual((await c.call("project.list", {}, { timeoutMs: 60000 })).projects, []);
  assert.equal(c.state, "open");
});

test("call: the connection's callTimeoutMs applies to every call", async (t) => {
  const env = await start([]);
  t.after(() => env.sidecar.stop());
  // (initialize is a call too: 2 s leaves a loaded machine room.)
  const c = await env.sidecar.connect({ client, callTimeoutMs: 2000, webSocket: hooked({ send: (d) => !d.includes('"keys.status"') }) });
  t.after(() => c.close());
  const e = await c.call("keys.status").catch((e: unknown) => e);
  assert.ok(e instanceof TimeoutError && e.timeoutMs === 2000, String(e));
  // A call's own timeoutMs wins.
  assert.deepEqual((await c.call("project.list", {}, { timeoutMs: 60000 })).projects, []);
});

test("validate: every frame of a real session passes protocol/schema.json; a frame that does not is reported and its call rejects", async (t) => {
  const env = await start([calls("", toolCall("c1", "run_shell", { command: "echo ok" })), text("done")]);
  t.after(() => env.sidecar.stop());
  const invalid: InvalidFrameError[] = [];
  let tamper = false;
  const c = await env.sidecar.connect({
    client,
    validate: frameValidator(),
    onInvalidFrame: (e) => invalid.push(e),
    webSocket: hooked({
      message: (d) => {
        if (!tamper) return d;
        const m = JSON.parse(d);
        if (m.result?.projects) m.result.projects[0].path = 42; // a string in the schema (a member it does not list passes: ui-protocol.md §3)
        if (m.method === "session.event" && m.params.type === "turn_end") delete m.params.data.status;
        return JSON.stringify(m);
      },
    }),
  });
  t.after(() => c.close());

  // A whole turn (approval included), every frame checked.
  const { projectId } = await c.call("project.open", { path: env.projDir });
  const { sessionId } = await c.call("session.create", { projectId });
  const col = new Collector();
  const sub = await c.subscribe(sessionId, { onEvent: col.push });
  await c.call("turn.start", { sessionId, text: "go" });
  await col.type("permission_required");
  tamper = true;
  await sub.respond(sub.pending[0]!, { outcome: "once" });
  await col.type("turn_end");
  assert.ok(col.events.length > 5);
  // The tampered turn_end is reported, and still delivered.
  assert.equal(invalid.length, 1, invalid.map((e) => e.message).join("\n"));
  assert.equal(invalid[0]!.method, "session.event");
  assert.match(invalid[0]!.message, /status/);

  // A tampered response rejects its call.
  const bad = await c.call("project.list", {}).catch((e: unknown) => e);
  assert.ok(bad instanceof InvalidFrameError, String(bad));
  assert.equal(bad.method, "project.list");
  assert.ok(bad.problems.some((p) => p.includes("/projects/0/path")), bad.problems.join("; "));
  assert.equal(invalid.length, 2);
  tamper = false;
  assert.equal((await c.call("project.list", {})).projects.length, 1);
});

test("validate: the validator checks the envelope, results, errors and notifications by method", () => {
  const v = frameValidator();
  assert.deepEqual(v({ jsonrpc: "2.0", id: 1, result: { projects: [] } }, { kind: "response", method: "project.list" }), []);
  assert.notDeepEqual(v({ jsonrpc: "2.0", id: 1, result: {} }, { kind: "response", method: "project.list" }), []);
  assert.notDeepEqual(v({ id: 1, result: { projects: [] } }, { kind: "response", method: "project.list" }), [], "no jsonrpc");
  assert.notDeepEqual(v({ jsonrpc: "2.0", id: 1, error: { message: "x" } }, { kind: "response", method: "project.list" }), []);
  assert.notDeepEqual(v({ jsonrpc: "2.0", method: "terminal.exit", params: { terminalId: 1 } }, { kind: "notification", method: "terminal.exit" }), []);
  // A method newer than the schema: the envelope only.
  assert.deepEqual(v({ jsonrpc: "2.0", id: 1, result: { anything: 1 } }, { kind: "response", method: "future.method" }), []);
});
