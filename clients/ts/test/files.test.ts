// searchFiles: files.search for a composer's "@" completion, against the
// real sidecar; a superseded call resolves to null.

import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { NotFoundError } from "../src/node.js";
import { frameValidator } from "../src/validate.js";
import { start } from "./helpers.js";

const client = { name: "ts-files-test", version: "0.0.0" };

test("searchFiles: ranked paths with UTF-16 positions; the older of two calls resolves to null", async (t) => {
  const env = await start([]);
  t.after(() => env.sidecar.stop());
  for (const p of ["cmd/api/server.go", "web/𝄞/Server.tsx", "src/service/errors/view.go"]) {
    mkdirSync(join(env.projDir, p, ".."), { recursive: true });
    writeFileSync(join(env.projDir, p), "");
  }
  const c = await env.sidecar.connect({ client, validate: frameValidator() });
  t.after(() => c.close());
  const { projectId } = await c.call("project.open", { path: env.projDir });

  const r = await c.searchFiles(projectId, "server", { limit: 2 });
  assert.ok(r);
  assert.deepEqual(
    r.results.map((m) => m.path),
    ["cmd/api/server.go", "web/𝄞/Server.tsx"],
  );
  const tsx = r.results[1]!;
  // The positions index the JavaScript string.
  assert.equal(tsx.positions.map((i) => tsx.path[i]).join(""), "Server");
  assert.equal(r.truncated, false);
  await assert.rejects(c.searchFiles("no-such-project", "x"), NotFoundError);

  for (let d = 0; d < 50; d++) {
    mkdirSync(join(env.projDir, `pkg${d}`));
    for (let f = 0; f < 200; f++) writeFileSync(join(env.projDir, `pkg${d}`, `service_${f}.go`), "");
  }
  await c.call("project.close", { projectId });
  await c.call("project.open", { path: env.projDir }); // a fresh index of 10,000 paths
  let superseded = 0;
  for (let i = 0; i < 20 && superseded === 0; i++) {
    const [older, newer] = await Promise.all([c.searchFiles(projectId, "se"), c.searchFiles(projectId, "sv")]);
    assert.ok(newer && newer.results.length > 0, "the newer call answers");
    if (older === null) superseded++;
  }
  assert.ok(superseded > 0, "the older call was never superseded");
});
