// Additive changes never break a client (ui-protocol.md §3, "What may
// change within version 1"): this build's real frames, with a member the
// schema does not list in every object the sidecar sends and with an event
// type, a request kind, a feature and an error kind it does not list, pass
// the frame validator and reach the shell, the unknown ones as such.

import assert from "node:assert/strict";
import { test } from "node:test";

import { InvalidFrameError, NotFoundError, type PendingRequest, type SessionEvent } from "../src/node.js";
import { frameValidator } from "../src/validate.js";
import { calls, Collector, hooked, start, text, toolCall } from "./helpers.js";

const client = { name: "ts-additive-test", version: "0.0.0" };

/** Adds `zqFuture: "x"` to every object in v (a string: the maps the sidecar sends hold strings). */
function withFuture(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withFuture);
  if (v === null || typeof v !== "object") return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = withFuture(x);
  out.zqFuture = "x";
  return out;
}

/** What a newer sidecar of version 1 might send instead of frame `d`. */
function newer(d: string): string {
  const m = JSON.parse(d) as Record<string, any>;
  for (const k of ["result", "params", "error"]) if (m[k] !== undefined) m[k] = withFuture(m[k]);
  // A new event type (the sidecar's iteration_end events stand in for it).
  if (m.method === "session.event" && m.params.type === "iteration_end") m.params.type = "future_event";
  const caps = m.result?.capabilities;
  if (caps) {
    caps.features.push("mcpOAuth");
    caps.eventTypes.push("future_event");
  }
  // A new request kind, in session.get's list.
  for (const p of m.result?.pendingRequests ?? []) if (m.result.session) p.kind = "future_kind";
  if (m.error?.data) m.error.data.kind = "rate_limited";
  return JSON.stringify(m);
}

test("additive: this build's frames with new members, an unknown event type, request kind, feature and error kind pass the validator and reach the shell", async (t) => {
  const env = await start([calls("", toolCall("c1", "run_shell", { command: "echo ok" })), text("done")]);
  t.after(() => env.sidecar.stop());
  const invalid: InvalidFrameError[] = [];
  const c = await env.sidecar.connect({
    client,
    validate: frameValidator(),
    onInvalidFrame: (e) => invalid.push(e),
    webSocket: hooked({ message: newer }),
  });
  t.after(() => c.close());
  assert.ok(c.initializeResult?.capabilities.features.includes("mcpOAuth"));

  const { projectId } = await c.call("project.open", { path: env.projDir });
  const { sessionId } = await c.call("session.create", { projectId });
  const col = new Collector();
  const pendings: PendingRequest[][] = [];
  const sub = await c.subscribe(sessionId, { onEvent: col.push, onPendingChange: (p) => pendings.push(p) });
  await c.call("turn.start", { sessionId, text: "go" });
  await col.type("permission_required");

  // The pending request, from the event: a known kind, with the new member.
  const fromEvent = sub.pending[0]!;
  assert.equal(fromEvent.kind, "approval");
  assert.equal(fromEvent.data.zqFuture, "x");
  // session.get's copy has a kind this package does not know.
  const got = await c.call("session.get", { sessionId });
  assert.equal(got.pendingRequests.length, 1);
  const unknownReq = got.pendingRequests[0]!;
  assert.equal(unknownReq.kind, "unknown");
  assert.ok(unknownReq.kind === "unknown" && unknownReq.requestKind === "future_kind");
  assert.equal(unknownReq.requestId, fromEvent.requestId);
  // It can still be answered (the sidecar knows its kind and checks the answer).
  await sub.respond(unknownReq, { outcome: "once" });
  await col.type("turn_end");

  // The new event type arrives as "unknown", in seq order, data as sent.
  const unknown = col.events.filter((e): e is Extract<SessionEvent, { type: "unknown" }> => e.type === "unknown");
  assert.ok(unknown.length >= 1, col.events.map((e) => e.type).join(" "));
  assert.equal(unknown[0]!.eventType, "future_event");
  assert.equal(unknown[0]!.data.zqFuture, "x");
  assert.equal(typeof unknown[0]!.data.taskId, "string", "the data is as sent");
  assert.deepEqual(col.seqs(), col.events.map((_, i) => i + 1), "every event once, in order");
  assert.equal(sub.lastSeq, col.events.length);
  const end = col.events.at(-1)!;
  assert.ok(end.type === "turn_end" && end.data.status === "completed" && end.zqFuture === "x");
  assert.deepEqual(sub.pending, []);

  // An error with a new kind and member is still the error of its code.
  const e = await c.call("session.get", { sessionId: "nope" }).catch((e: unknown) => e);
  assert.ok(e instanceof NotFoundError, String(e));
  assert.equal(e.data?.kind, "rate_limited");

  // None of it was reported.
  assert.deepEqual(invalid.map((e) => e.message), []);
});

test("additive: the validator takes a newer sidecar's additions and still reports what breaks a client", () => {
  const v = frameValidator();
  const ev = (type: string, data: unknown, extra: Record<string, unknown> = {}) => ({
    jsonrpc: "2.0",
    method: "session.event",
    params: { sessionId: "s", seq: 1, turnId: "t", type, data, time: "2026-12-01T10:00:00Z", ...extra },
  });
  const turnEnd = { taskId: "t", status: "completed", iterations: 1, produced_files: [] };
  const ok = (frame: unknown, kind: "response" | "notification", method: string) => assert.deepEqual(v(frame, { kind, method }), [], JSON.stringify(frame));
  const bad = (frame: unknown, kind: "response" | "notification", method: string) => assert.notDeepEqual(v(frame, { kind, method }), [], JSON.stringify(frame));
  ok(ev("turn_end", { ...turnEnd, cost: { usd: 0.1 } }, { origin: "acp" }), "notification", "session.event");
  ok(ev("future_event", { requests: { limit: 10 } }), "notification", "session.event");
  ok({ jsonrpc: "2.0", id: 1, result: { turnId: "t", queued: 0, x: 1 } }, "response", "turn.start");
  ok({ jsonrpc: "2.0", id: 1, error: { code: -32003, message: "m", data: { kind: "rate_limited", retryAfterMs: 5 } } }, "response", "turn.start");
  ok({ jsonrpc: "2.0", method: "session.future", params: { sessionId: "s" } }, "notification", "session.future");
  // What breaks a client still fails: a known type with wrong data, a missing
  // member, an unknown value of a closed enum, data that is not an object.
  bad(ev("turn_end", { taskId: "t", text: "hi", reqId: "r" }), "notification", "session.event");
  bad(ev("turn_end", { ...turnEnd, status: "done" }), "notification", "session.event");
  bad(ev("future_event", []), "notification", "session.event");
  bad({ jsonrpc: "2.0", id: 1, result: { turnId: "t" } }, "response", "turn.start");
});
