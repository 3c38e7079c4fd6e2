// session.fork through the typed wrapper: the fork names its source, its
// history is the source's up to the forked turn, and an unfinished or
// unknown turn is refused with the documented codes.

import assert from "node:assert/strict";
import { test } from "node:test";

import { NotFoundError } from "../src/index.js";
import { Collector, start, text } from "./helpers.js";

const client = { name: "ts-fork-test", version: "0.0.0" };

test("fork: a session forked at its first turn has that turn's history and forkedFrom; the source is untouched", async (t) => {
  const env = await start([text("first answer"), text("second answer")]);
  t.after(() => env.sidecar.stop());
  const c = await env.sidecar.connect({ client });
  t.after(() => c.close());
  const { projectId } = await c.call("project.open", { path: env.projDir });
  const { sessionId } = await c.call("session.create", { projectId, title: "Work" });
  const col = new Collector();
  await c.subscribe(sessionId, { onEvent: col.push });
  const { turnId: first } = await c.call("turn.start", { sessionId, text: "one" });
  await col.type("turn_end");
  await c.call("turn.start", { sessionId, text: "two" });
  await col.type("turn_end", 2);

  const forked = await c.fork(sessionId, first);
  assert.notEqual(forked.sessionId, sessionId);
  assert.deepEqual(forked.session.forkedFrom, { sessionId, turnId: first });
  assert.equal(forked.session.title, "Work (fork)");
  const view = await c.call("session.get", { sessionId: forked.sessionId });
  assert.deepEqual(view.messages.map((m) => `${m.role}:${m.content}`), ["user:one", "assistant:first answer"]);
  const source = await c.call("session.get", { sessionId });
  assert.equal(source.messages.length, 4);
  assert.equal(source.session.forkedFrom, undefined);

  const latest = await c.fork(sessionId);
  assert.notEqual(latest.session.forkedFrom?.turnId, first);
  const unknown = await c.fork(sessionId, "turn_unknown").catch((e: unknown) => e);
  assert.ok(unknown instanceof NotFoundError && unknown.code === -32002, String(unknown));
});
