// The generated types are checked current against protocol/schema.json:
// `npm run gen:check` passes on the committed file and fails as soon as the
// schema changes without `npm run gen`.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { tempDir } from "./helpers.js";

const pkg = resolve(fileURLToPath(import.meta.url), "../../..");
const gen = (env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, [join(pkg, "scripts/gen-types.mjs"), "--check"], { env: { ...process.env, ...env }, encoding: "utf8" });

test("gen:check: the committed types are what the schema gives", () => {
  const r = gen();
  assert.equal(r.status, 0, r.stderr);
});

test("gen:check: a changed schema fails the check until regenerated", () => {
  const schema = JSON.parse(readFileSync(join(pkg, "../../protocol/schema.json"), "utf8"));
  schema.$defs.Project.properties.newField = { type: "string" };
  const path = join(tempDir("schema"), "schema.json");
  writeFileSync(path, JSON.stringify(schema));
  const r = gen({ ZQAGENT_SCHEMA: path });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /npm run gen/);
});
