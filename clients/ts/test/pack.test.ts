// The package installs like a package: `npm pack` gives a tarball with the
// built dist/ and no install-time script, and `npm install` of that tarball,
// or of a copy of this folder without node_modules (--install-links), into
// a fresh project works without devDependencies: the consumer spawns the
// real sidecar and calls it. `ws` is the only runtime dependency (npm takes
// it from its cache when it can: --prefer-offline).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { sidecarBin, tempDir } from "./helpers.js";

const pkg = resolve(fileURLToPath(import.meta.url), "../../..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** This environment without `npm test`'s lifecycle variables. */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("npm_lifecycle_") && !k.startsWith("npm_package_")) env[k] = v;
  return env;
}

function run(cmd: string, args: string[], cwd: string): string {
  try {
    return execFileSync(cmd, args, { cwd, env: npmEnv(), encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(" ")} in ${cwd} failed: ${x.message}\n${x.stdout ?? ""}\n${x.stderr ?? ""}`);
  }
}

// The consumer: the public entry points only, against the real sidecar.
const consumer = `
import { spawnSidecar, ErrorCode, TimeoutError } from "@zqagent/sidecar-client/node";
import { connect, SidecarClient } from "@zqagent/sidecar-client";
const sidecar = await spawnSidecar({ bin: process.argv[2], dataDir: process.argv[3] });
const c = await sidecar.connect({ client: { name: "consumer", version: "1.0.0" } });
const { projects } = await c.call("project.list", {}, { timeoutMs: 60000 });
c.close();
const validate = await import("@zqagent/sidecar-client/validate").then(() => "loaded", (e) => e.message);
const exit = await sidecar.stop();
console.log(JSON.stringify({ projects, exit, notFound: ErrorCode.NotFound, connect: typeof connect, client: typeof SidecarClient, timeout: typeof TimeoutError, validate }));
`;

/** A fresh project that installs `spec` and runs the consumer in it. */
function installAndUse(spec: string, ...flags: string[]): Record<string, unknown> {
  const dir = tempDir("consumer");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true, type: "module" }));
  writeFileSync(join(dir, "main.mjs"), consumer);
  run(npm, ["install", "--prefer-offline", "--no-audit", "--no-fund", ...flags, spec], dir);
  assert.ok(!existsSync(join(dir, "node_modules/typescript")), "no devDependency was installed");
  const out = run(process.execPath, ["main.mjs", sidecarBin(), join(dir, "data")], dir);
  return JSON.parse(out.trim().split("\n").at(-1)!);
}

function checkUse(r: Record<string, unknown>): void {
  assert.deepEqual(r.projects, []);
  assert.deepEqual(r.exit, { code: 0, signal: null });
  assert.equal(r.notFound, -32002);
  assert.equal(r.connect, "function");
  assert.equal(r.client, "function");
  assert.equal(r.timeout, "function");
  // The validator needs the optional peer ajv, which this project lacks.
  assert.match(String(r.validate), /ajv/);
}

test("npm pack: dist/ built, no install-time script, ws the only dependency; the tarball installs and works", () => {
  const dest = tempDir("pack");
  const [info] = JSON.parse(run(npm, ["pack", "--json", "--pack-destination", dest], pkg)) as { filename: string; files: { path: string }[] }[];
  const files = info!.files.map((f) => f.path);
  for (const f of ["package.json", "README.md", "dist/index.js", "dist/index.d.ts", "dist/node.js", "dist/node.d.ts", "dist/validate.js", "dist/generated/schema.js"]) {
    assert.ok(files.includes(f), `${f} is in the pack: ${files.join(" ")}`);
  }
  assert.ok(!files.some((f) => /^(test|build|node_modules|scripts)\//.test(f)), files.join(" "));

  const tarball = join(dest, info!.filename);
  const manifest = JSON.parse(run("tar", ["-xzOf", tarball, "package/package.json"], dest));
  for (const s of ["prepare", "preinstall", "install", "postinstall"]) assert.equal(manifest.scripts?.[s], undefined, `no ${s} script`);
  assert.deepEqual(Object.keys(manifest.dependencies), ["ws"]);
  assert.equal(manifest.peerDependenciesMeta?.ajv?.optional, true);

  checkUse(installAndUse(tarball));
});

test("npm install --install-links of a checkout without node_modules works (nothing to build at install)", () => {
  // dist/ as a checkout has it after `npm pack` or `npm run build` (the
  // test above built it); no node_modules, so no TypeScript.
  run(npm, ["run", "--silent", "build"], pkg);
  const copy = join(tempDir("checkout"), "ts");
  for (const f of ["package.json", "README.md", "src", "dist"]) cpSync(join(pkg, f), join(copy, f), { recursive: true });
  checkUse(installAndUse(copy, "--install-links"));
});
