// session.rewind through the typed wrapper: a dry run changes nothing; a
// rewind with files brings the files and the history back and returns the
// turn's input; the clobber guard is a ConflictError naming the files in
// data.files until force.

import assert from "node:assert/strict";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { ConflictError, NotFoundError } from "../src/index.js";
import { Collector, calls, start, text, toolCall } from "./helpers.js";

const client = { name: "ts-rewind-test", version: "0.0.0" };

test("rewind: history and files back to before a turn, its input returned; clobber refused until force", async (t) => {
  const env = await start([
    calls("", toolCall("w1", "write_file", { path: "a.txt", content: "one\n" })),
    text("wrote a"),
    calls("", toolCall("w2", "write_file", { path: "a.txt", content: "two\n" })),
    text("rewrote a"),
  ]);
  t.after(() => env.sidecar.stop());
  const c = await env.sidecar.connect({ client });
  t.after(() => c.close());
  const { projectId } = await c.call("project.open", { path: env.projDir, vcs: "shadow" });
  const { sessionId } = await c.call("session.create", { projectId, mode: "auto" });
  const col = new Collector();
  await c.subscribe(sessionId, { onEvent: col.push });
  await c.call("turn.start", { sessionId, text: "write one" });
  await col.type("turn_end");
  const { turnId: second } = await c.call("turn.start", { sessionId, text: "write two" });
  await col.type("turn_end", 2);
  const file = join(env.projDir, "a.txt");
  assert.equal(readFileSync(file, "utf8"), "two\n");

  const preview = await c.rewind(sessionId, second, { files: true, dryRun: true });
  assert.equal(preview.dryRun, true);
  assert.equal(preview.input, "write two");
  assert.deepEqual(preview.files, [{ path: "a.txt", status: "M" }]);
  assert.deepEqual(preview.droppedTurns.map((d) => d.turnId), [second]);
  assert.equal(readFileSync(file, "utf8"), "two\n", "a dry run changes nothing");

  writeFileSync(join(env.projDir, "b.txt"), "the user's\n");
  const refused = await c.rewind(sessionId, second, { files: true }).catch((e: unknown) => e);
  assert.ok(refused instanceof ConflictError, String(refused));
  assert.equal(refused.data?.kind, "clobbered");
  assert.deepEqual(refused.data?.files, ["b.txt"]);

  const done = await c.rewind(sessionId, second, { files: true, force: true });
  assert.equal(done.input, "write two");
  assert.deepEqual(done.clobbered, ["b.txt"]);
  assert.equal(readFileSync(file, "utf8"), "one\n");
  assert.equal(existsSync(join(env.projDir, "b.txt")), false);
  const view = await c.call("session.get", { sessionId });
  assert.deepEqual(view.messages.filter((m) => m.role === "user").map((m) => m.content), ["write one"]);
  await col.type("session_rewound");

  const gone = await c.rewind(sessionId, second, { files: false }).catch((e: unknown) => e);
  assert.ok(gone instanceof NotFoundError, String(gone));
});
