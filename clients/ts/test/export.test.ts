// session.export and session.import through the client's wrappers, against
// the real sidecar binary and the scripted model.

import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { InvalidParamsError } from "../src/node.js";
import { Collector, start, tempDir, text } from "./helpers.js";

const client = { name: "ts-export-test", version: "0.0.0" };

test("exportSession / importSession: the file goes into a new session of another project with the same messages; a bad file is InvalidParamsError naming path", async (t) => {
  const env = await start([text("hello there")]);
  t.after(() => env.sidecar.stop());
  const c = await env.sidecar.connect({ client });
  t.after(() => c.close());
  const { projectId } = await c.call("project.open", { path: env.projDir });
  const { sessionId } = await c.call("session.create", { projectId, title: "Greeting" });
  const col = new Collector();
  await c.subscribe(sessionId, { onEvent: col.push });
  await c.call("turn.start", { sessionId, text: "hi" });
  await col.type("turn_end");

  const dir = tempDir("export");
  const path = join(dir, "greeting.zqsession");
  const exp = await c.exportSession(sessionId, path);
  assert.equal(exp.path, path);
  assert.ok(exp.bytes > 0 && exp.events > 0 && exp.messages === 2, JSON.stringify(exp));

  const otherDir = join(dir, "other");
  mkdirSync(otherDir);
  const other = await c.call("project.open", { path: otherDir });
  const imp = await c.importSession(other.projectId, path);
  assert.notEqual(imp.sessionId, sessionId);
  assert.equal(imp.session.title, "Greeting");
  assert.deepEqual(imp.resetSettings, []);
  const [a, b] = await Promise.all([c.call("session.get", { sessionId }), c.call("session.get", { sessionId: imp.sessionId })]);
  assert.deepEqual(b.messages, a.messages);

  const bad = join(dir, "bad.zqsession");
  writeFileSync(bad, "not a zip");
  const err = await c.importSession(other.projectId, bad).catch((e: unknown) => e);
  assert.ok(err instanceof InvalidParamsError, String(err));
  assert.equal(err.data?.field, "path");
  assert.match(err.message, /not a zip archive/);
  const { sessions } = await c.call("session.list", { projectId: other.projectId });
  assert.deepEqual(sessions.map((s) => s.sessionId), [imp.sessionId]);
});
