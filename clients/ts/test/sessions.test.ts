// client.sessions(): session.list page after page, with a search's
// snippets and the archive filter, against a real sidecar.

import assert from "node:assert/strict";
import { test } from "node:test";

import { frameValidator } from "../src/validate.js";
import { start, text } from "./helpers.js";

const client = { name: "ts-sessions-test", version: "0.0.0" };

test("sessions: pages through every session; a query's hits carry snippets; archived ones are apart", async (t) => {
  const env = await start([text("the zanzibar plan")]);
  t.after(() => env.sidecar.stop());
  const c = await env.sidecar.connect({ client, validate: frameValidator(), onInvalidFrame: (e) => assert.fail(e) });
  t.after(() => c.close());
  const { projectId } = await c.call("project.open", { path: env.projDir });
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) ids.push((await c.call("session.create", { projectId, title: `session ${i}` })).sessionId);

  const seen: string[] = [];
  for await (const s of c.sessions({ projectId, limit: 3 })) seen.push(s.sessionId);
  assert.deepEqual(seen, [...ids].reverse(), "every session once, newest first, over three pages");

  const hits = [];
  for await (const s of c.sessions({ projectId, query: "session 4" })) hits.push(s);
  assert.equal(hits.length, 1);
  const sn = hits[0]!.snippet!;
  assert.equal(sn.text, "session 4");
  assert.deepEqual(sn.highlights.map(([a, b]) => sn.text.slice(a, b)), ["session", "4"]);

  const archived = await c.call("session.archive", { sessionId: ids[2]! });
  assert.equal(archived.archived, true);
  const rest: string[] = [];
  for await (const s of c.sessions({ projectId, limit: 2 })) rest.push(s.sessionId);
  assert.equal(rest.length, 6);
  assert.ok(!rest.includes(ids[2]!));
  const only: string[] = [];
  for await (const s of c.sessions({ projectId, archived: true })) only.push(s.sessionId);
  assert.deepEqual(only, [ids[2]]);
});
