// What an Electron renderer's page sends, in a real browser: Debian's
// Chromium (playwright-core) against the real sidecar binary started with
// --allow-origin electron.
//
// - A page loaded from file:// (Electron's loadFile) sends "Origin: null":
//   refused, and the sidecar's stderr says why and what to do (serve the
//   renderer from a custom scheme).
// - A custom-scheme page (protocol.handle("app", …), registered as
//   standard) sends "Origin: app://<host>". Plain Chromium cannot register
//   a scheme, so it is emulated: the same page served from
//   http://127.0.0.1:<port> with that origin allowed (a standard origin,
//   as app:// is once registered) connects and initializes. That the
//   electron preset admits "Origin: app://bundle" is tested through the
//   binary in cmd/sidecar/origins_e2e_test.go.
// - A page offering the token subprotocol without zqagent.v1 is refused
//   with a reason on stderr (the page only sees 1006).
//
//   SIDECAR_BIN   the sidecar binary (default: go build into a temp dir)
//   CHROMIUM      the browser (default /usr/bin/chromium)

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

import { chromium } from "playwright-core";
import { spawnSidecar } from "@zqagent/sidecar-client/node";

import { serveStatic } from "../serve.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "../../..");
const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const T = 60_000;

// The page: probe(url, protocols) opens a WebSocket, calls initialize and
// resolves with {open, protocol, result} or {open: false, code}.
const page = `<!doctype html><meta charset="utf-8"><title>probe</title><script>
window.probe = (url, protocols) => new Promise((resolve) => {
  const ws = new WebSocket(url, protocols);
  ws.onopen = () => ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, client: { name: "origins-test", version: "0" } } }));
  ws.onmessage = (m) => { const f = JSON.parse(m.data); if (f.id === 1) { resolve({ open: true, protocol: ws.protocol, result: f.result, error: f.error }); ws.close(); } };
  ws.onclose = (e) => resolve({ open: false, code: e.code });
});
</script>`;

function sidecarBin(tmp) {
  if (process.env.SIDECAR_BIN) return process.env.SIDECAR_BIN;
  const bin = join(tmp, "sidecar");
  execFileSync("go", ["build", "-o", bin, "./cmd/sidecar"], { cwd: repoRoot, stdio: "inherit" });
  return bin;
}

// refusals are the sidecar's "upgrade refused" lines, parsed.
const refusals = (stderr) =>
  stderr.flatMap((l) => {
    try {
      const m = JSON.parse(l);
      return m.msg === "upgrade refused" ? [m] : [];
    } catch {
      return [];
    }
  });

// waitFor polls cond until it holds or T passes (stderr lines arrive
// after the browser saw the refusal).
async function waitFor(cond, what) {
  const end = Date.now() + T;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("Electron renderer origins in Chromium", { timeout: 300_000 }, async (t) => {
  if (!existsSync(chromiumPath)) assert.fail(`no Chromium at ${chromiumPath}: run scripts/deps.sh (apt-get install chromium) or set CHROMIUM`);
  const tmp = mkdtempSync(join(tmpdir(), "zqagent-origins-"));
  const cleanup = [];
  t.after(async () => {
    for (const f of cleanup.reverse()) await Promise.resolve().then(f).catch((e) => console.error("cleanup:", e));
  });
  cleanup.push(() => rmSync(tmp, { recursive: true, force: true }));
  const site = join(tmp, "site");
  mkdirSync(site);
  writeFileSync(join(site, "index.html"), page);

  const web = await serveStatic(site);
  cleanup.push(() => web.close());
  const stderr = [];
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.endsWith("_API_KEY") || k.startsWith("OPENAI_")) delete env[k];
  const sidecar = await spawnSidecar({
    bin: sidecarBin(tmp),
    dataDir: join(tmp, "data"),
    allowOrigins: ["electron", web.origin],
    env,
    logger: { info: (l) => stderr.push(l), warn: (l) => stderr.push(l), error: (l) => stderr.push(l) },
  });
  cleanup.push(() => sidecar.stop());
  const { url, token } = sidecar.ready;

  const ctx = await chromium.launchPersistentContext(join(tmp, "profile"), {
    executablePath: chromiumPath,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  cleanup.push(() => ctx.close());
  const tab = ctx.pages()[0] ?? (await ctx.newPage());
  tab.setDefaultTimeout(T);
  const both = ["zqagent.v1", `zqagent.token.${token}`];

  await t.test("a file:// page (loadFile) sends Origin null: refused, with a hint on stderr", async () => {
    await tab.goto(pathToFileURL(join(site, "index.html")).href);
    const got = await tab.evaluate(([u, p]) => window.probe(u, p), [url, both]);
    assert.deepEqual(got, { open: false, code: 1006 });
    await waitFor(() => refusals(stderr).length >= 1, "the refusal line");
    const [r] = refusals(stderr);
    assert.equal(r.origin, "null", "Chromium sends Origin null from a file:// page");
    assert.equal(r.reason, "origin not allowed");
    assert.match(r.hint, /custom scheme/);
    assert.match(r.hint, /app:\/\//);
  });

  await t.test("a page of an allowed standard origin (app:// emulated) connects and initializes", async () => {
    await tab.goto(`${web.origin}/index.html`);
    const got = await tab.evaluate(([u, p]) => window.probe(u, p), [url, both]);
    assert.equal(got.open, true, JSON.stringify(got));
    assert.equal(got.protocol, "zqagent.v1");
    assert.equal(got.result.protocolVersion, 1);
  });

  await t.test("the token subprotocol without zqagent.v1: 1006 in the page, the reason on stderr", async () => {
    const before = refusals(stderr).length;
    const got = await tab.evaluate(([u, p]) => window.probe(u, p), [url, [`zqagent.token.${token}`]]);
    assert.deepEqual(got, { open: false, code: 1006 });
    await waitFor(() => refusals(stderr).length > before, "the refusal line");
    const r = refusals(stderr)[before];
    assert.equal(r.reason, "subprotocol zqagent.v1 not offered");
    assert.equal(r.status, 400);
    assert.match(r.hint, /zqagent\.v1/);
    assert.ok(!stderr.join("\n").includes(token), "the token is never written");
  });
});
