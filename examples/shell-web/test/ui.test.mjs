// The reference shell in a real browser: Debian's Chromium driven by
// playwright-core, against the real sidecar binary and the scripted model.
// Each step saves a screenshot into $UI_ARTIFACTS (default: artifacts/ui/ at
// the repository root, git-ignored).
//
//   SIDECAR_BIN   the sidecar binary (default: go build into a temp dir)
//   CHROMIUM      the browser (default /usr/bin/chromium; scripts/deps.sh installs it)

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { chromium } from "playwright-core";
import { spawnSidecar } from "@zqagent/sidecar-client/node";

import { serveStatic } from "../serve.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "../../..");
const artifacts = process.env.UI_ARTIFACTS ?? join(repoRoot, "artifacts", "ui");
const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const T = 60_000; // generous deadline of every wait

// The scripted model's answers, in the order the steps below ask for them
// (one queue for the whole sidecar).
const call = (id, name, args) => ({ id, name, arguments: JSON.stringify(args) });
const script = (outside) => ({
  responses: [
    // 1. a streamed turn with reasoning
    { reasoning: "Let me think about a greeting.", text: "Hello! I am the scripted model, streaming.", delay: 5, chunkSize: 3 },
    // 2. approve once
    { text: "I will write notes.txt.", toolCalls: [call("w1", "write_file", { path: "notes.txt", content: "version 1\n" })] },
    { text: "Wrote notes.txt." },
    // 3. deny
    { toolCalls: [call("r1", "run_shell", { command: "rm notes.txt" })] },
    { text: "OK, I left notes.txt alone." },
    // 4. always allow write_file: the second write asks nothing
    { toolCalls: [call("w2", "write_file", { path: "notes.txt", content: "version 2\n" })] },
    { toolCalls: [call("w3", "write_file", { path: "other.txt", content: "other\n" })] },
    { text: "Both files written." },
    // 5. a question
    { toolCalls: [call("q1", "ask_user", { question: "Which color?", options: ["red", "blue"] })] },
    { text: "You chose blue." },
    // 6. a plan and a directory request
    { toolCalls: [call("p1", "propose_plan", { plan: "1. Read the docs\n2. Fix the bug" })] },
    { toolCalls: [call("d1", "request_directory", { path: outside, reason: "read the shared docs" })] },
    { text: "Plan approved and directory granted." },
    // 7. reload the page while an approval waits
    { toolCalls: [call("r2", "run_shell", { command: "echo hi > reload.txt" })] },
    { text: "After the reload." },
    // 8. interrupt a turn that streams and then stalls
    { text: "This turn will be interrupted…", stall: true },
    // 9. steer a running turn (it waits on a question meanwhile)
    { toolCalls: [call("q2", "ask_user", { question: "Continue?", options: ["yes"] })] },
    { text: "Steered as asked." },
    // 10. always allow a command: the next touch asks nothing
    { toolCalls: [call("t1", "run_shell", { command: "touch a.txt" })] },
    { toolCalls: [call("t2", "run_shell", { command: "touch b.txt" })] },
    { text: "Touched both." },
  ],
});

function sidecarBin(tmp) {
  if (process.env.SIDECAR_BIN) return process.env.SIDECAR_BIN;
  const bin = join(tmp, "sidecar");
  execFileSync("go", ["build", "-o", bin, "./cmd/sidecar"], { cwd: repoRoot, stdio: "inherit" });
  return bin;
}

test("the reference shell in Chromium", { timeout: 300_000 }, async (t) => {
  if (!existsSync(chromiumPath)) assert.fail(`no Chromium at ${chromiumPath}: run scripts/deps.sh (apt-get install chromium) or set CHROMIUM`);
  mkdirSync(artifacts, { recursive: true });
  // This run's screenshots only (NN-step.png; nothing else is touched).
  for (const f of readdirSync(artifacts)) if (/^\d\d-[\w-]+\.png$/.test(f)) rmSync(join(artifacts, f));
  const tmp = mkdtempSync(join(tmpdir(), "zqagent-ui-"));
  // Cleanup in this order, each step even when one before failed: the
  // browser, the clients, the sidecar, the server, then the files.
  const cleanup = [];
  t.after(async () => {
    for (const f of cleanup.reverse()) await Promise.resolve().then(f).catch((e) => console.error("cleanup:", e));
  });
  cleanup.push(() => rmSync(tmp, { recursive: true, force: true }));
  const projDir = join(tmp, "proj");
  const outside = join(tmp, "shared-docs");
  mkdirSync(projDir);
  mkdirSync(outside);
  writeFileSync(join(tmp, "script.json"), JSON.stringify(script(outside)));

  // The page's origin must be allowed: serve first, then spawn.
  const web = await serveStatic(join(here, "..", "dist"));
  cleanup.push(() => web.close());
  const stderr = [];
  const env = { ...process.env, ZQAGENT_SCRIPT: join(tmp, "script.json") };
  for (const k of Object.keys(env)) if (k.endsWith("_API_KEY") || k.startsWith("OPENAI_")) delete env[k];
  const sidecar = await spawnSidecar({
    bin: sidecarBin(tmp),
    dataDir: join(tmp, "data"),
    allowOrigins: [web.origin],
    env,
    logger: { info: (l) => stderr.push(l), warn: (l) => stderr.push(l), error: (l) => stderr.push(l) },
  });
  cleanup.push(() => sidecar.stop());

  // A second client, from Node, watches the same session's events.
  const watcher = await sidecar.connect({ client: { name: "ui-test-watcher", version: "0" } });
  cleanup.push(() => watcher.close());

  const ctx = await chromium.launchPersistentContext(join(tmp, "profile"), {
    executablePath: chromiumPath,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1400, height: 860 },
  });
  cleanup.push(() => ctx.close());
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  page.setDefaultTimeout(T);
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(e));
  page.on("console", (m) => m.type() === "error" && pageErrors.push(new Error(m.text())));
  const dialogs = []; // every alert/confirm the page opened
  page.on("dialog", (d) => {
    dialogs.push(`${d.type()}: ${d.message()}`);
    d.accept(); // the restore confirm()
  });
  let n = 0;
  const shot = async (name) => {
    n++;
    await page.screenshot({ path: join(artifacts, `${String(n).padStart(2, "0")}-${name}.png`) });
  };
  const ends = (status = "completed") => page.locator(`[data-end="${status}"]`);
  const send = async (text) => {
    await page.locator("#input").fill(text);
    await page.locator("#input").press("Enter");
  };
  const dialog = page.locator("dialog#request[open]");
  const waitEnds = (k, status = "completed") => ends(status).nth(k - 1).waitFor();

  const frag = new URLSearchParams({ url: sidecar.ready.url, token: sidecar.ready.token });
  await page.goto(`${web.origin}/#${frag}`);
  await page.locator('#conn[data-state="open"]').waitFor();

  // Open the project and create a session.
  await page.locator("#project-path").fill(projDir);
  await page.getByRole("button", { name: "Open", exact: true }).click();
  await page.locator("#new-session").click();
  await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).has("session"));
  const sessionId = await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get("session"));
  const seen = [];
  await watcher.subscribe(sessionId, { onEvent: (ev) => seen.push(ev) });

  await t.test("stream a turn with reasoning", async () => {
    await send("hello");
    await page.locator(".assistant", { hasText: "Hello! I am the scripted model, streaming." }).waitFor();
    await page.locator(".reasoning-text", { hasText: "Let me think about a greeting." }).waitFor();
    await waitEnds(1);
    await shot("streamed-turn");
  });

  await t.test("approve once", async () => {
    await send("write the notes");
    await dialog.waitFor();
    assert.equal(await dialog.getAttribute("data-kind"), "approval");
    await page.locator("#request-title", { hasText: "Allow write_file?" }).waitFor();
    // The card shows what will change: a unified diff creating the file.
    assert.equal(await dialog.locator("pre.diff").textContent(), "--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1,1 @@\n+version 1\n");
    await shot("approval-dialog");
    await dialog.getByRole("button", { name: "Allow once" }).click();
    await waitEnds(2);
    assert.equal(readFileSync(join(projDir, "notes.txt"), "utf8"), "version 1\n");
    await page.locator('.tool[data-tool="write_file"][data-status="ok"]').first().waitFor();
    await shot("approved-once");
  });

  await t.test("deny", async () => {
    await send("delete the notes");
    await dialog.waitFor();
    await page.locator("#request-title", { hasText: "Allow run_shell?" }).waitFor();
    assert.equal(await dialog.locator("pre.diff").count(), 0, "no diff for a command");
    await page.locator("#deny-note").fill("keep the notes");
    await shot("deny-dialog");
    await dialog.getByRole("button", { name: "Deny" }).click();
    await waitEnds(3);
    await page.locator('.tool[data-tool="run_shell"][data-status="denied"]').waitFor();
    assert.ok(existsSync(join(projDir, "notes.txt")), "a denied command did not run");
    // The note reached the model: its tool result quotes it.
    const { messages } = await watcher.call("session.get", { sessionId });
    const denied = messages.filter((m) => m.role === "tool").map((m) => m.content).find((c) => c.includes('"denied"'));
    assert.match(denied ?? "", /with this note: keep the notes/);
    await shot("denied");
  });

  await t.test("always allow the tool: no second dialog", async () => {
    const before = seen.filter((e) => e.type === "permission_required").length;
    await send("update the notes");
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Always allow write_file" }).click();
    await waitEnds(4);
    assert.equal(readFileSync(join(projDir, "notes.txt"), "utf8"), "version 2\n");
    assert.equal(readFileSync(join(projDir, "other.txt"), "utf8"), "other\n");
    const turn = page.locator(".turn").nth(3);
    assert.equal(await turn.locator('.tool[data-tool="write_file"][data-status="ok"]').count(), 2);
    assert.equal(seen.filter((e) => e.type === "permission_required").length, before + 1, "one card for two writes");
    assert.equal(await dialog.count(), 0);
    await shot("always-tool");
  });

  await t.test("answer a question", async () => {
    await send("ask me something");
    await dialog.waitFor();
    assert.equal(await dialog.getAttribute("data-kind"), "question");
    await page.locator("#request-body", { hasText: "Which color?" }).waitFor();
    await shot("question");
    await dialog.getByRole("button", { name: "blue" }).click();
    await waitEnds(5);
    await page.locator(".assistant", { hasText: "You chose blue." }).waitFor();
    const fin = seen.find((e) => e.type === "tool_finished" && e.data.reqId === "q1");
    assert.equal(fin?.data.status, "ok");
  });

  await t.test("plan and directory dialogs", async () => {
    await send("plan it");
    await dialog.waitFor();
    assert.equal(await dialog.getAttribute("data-kind"), "plan");
    await shot("plan");
    await dialog.getByRole("button", { name: "Approve plan" }).click();
    await page.locator('dialog#request[open][data-kind="directory"]').waitFor();
    await page.locator("#request-body", { hasText: "outside the project" }).waitFor();
    await shot("directory");
    await dialog.getByRole("button", { name: "Grant" }).click();
    await waitEnds(6);
    await page.locator(".assistant", { hasText: "Plan approved and directory granted." }).waitFor();
  });

  await t.test("reload mid-approval: same transcript, same pending card", async () => {
    await send("write reload.txt");
    await dialog.waitFor();
    const requestId = await dialog.getAttribute("data-request-id");
    const transcript = await page.locator("#transcript").innerText();
    await shot("before-reload");
    await page.reload();
    await page.locator('#conn[data-state="open"]').waitFor();
    await page.locator(`dialog#request[open][data-request-id="${requestId}"]`).waitFor();
    // The replay redraws the same transcript (then compare, for a readable diff).
    await page
      .waitForFunction((want) => document.getElementById("transcript").innerText === want, transcript, { timeout: T })
      .catch(() => {});
    assert.equal(await page.locator("#transcript").innerText(), transcript);
    await shot("after-reload");
    await dialog.getByRole("button", { name: "Allow once" }).click();
    await waitEnds(7);
    await page.locator(".assistant", { hasText: "After the reload." }).waitFor();
    assert.equal(readFileSync(join(projDir, "reload.txt"), "utf8"), "hi\n");
  });

  await t.test("interrupt a running turn", async () => {
    await send("stream and stall");
    await page.locator(".assistant", { hasText: "This turn will be interrupted" }).waitFor();
    await page.locator("#interrupt:not([disabled])").click();
    await waitEnds(1, "interrupted");
    await shot("interrupted");
  });

  await t.test("steer a running turn", async () => {
    await send("steer me");
    await page.locator('dialog#request[open][data-kind="question"]').waitFor();
    await page.locator("#input").fill("also check the docs");
    await page.locator("#steer:not([disabled])").click();
    await dialog.getByRole("button", { name: "yes" }).click();
    await page.locator(".steer", { hasText: "also check the docs" }).waitFor();
    await waitEnds(8);
    await page.locator(".assistant", { hasText: "Steered as asked." }).waitFor();
    await shot("steered");
  });

  await t.test("always allow the command: no second dialog", async () => {
    const before = seen.filter((e) => e.type === "permission_required").length;
    await send("touch two files");
    await dialog.waitFor();
    await shot("always-command-dialog");
    await dialog.getByRole("button", { name: 'Always allow "touch"' }).click();
    await waitEnds(9);
    assert.ok(existsSync(join(projDir, "a.txt")) && existsSync(join(projDir, "b.txt")));
    assert.equal(seen.filter((e) => e.type === "permission_required").length, before + 1, "one card for two commands");
    const { grants } = await watcher.call("session.grants", { sessionId });
    assert.deepEqual(grants.map((g) => `${g.kind}:${g.name}`), ["tool:write_file", "command:touch"]);
  });

  await t.test("echo hi in the terminal panel", async () => {
    await page.locator("#new-terminal").click();
    await page.locator("#terminal[data-terminal-id] .xterm").waitFor();
    // Type at the prompt, as a user does (a login shell may drop what is
    // typed while it starts).
    const rows = () => [...document.querySelectorAll("#terminal .xterm-rows > div")].map((r) => r.textContent.replace(/\u00a0/g, " ").trim());
    await page.waitForFunction(`(${rows})().some((r) => /[$#%>]$/.test(r))`, null, { timeout: T });
    await page.locator("#terminal .xterm").click();
    await page.keyboard.type("echo hi");
    await page.keyboard.press("Enter");
    // A row of its own that reads "hi": the command's output, not its echo.
    await page.waitForFunction(`(${rows})().includes("hi")`, null, { timeout: T }).catch(async (e) => {
      await shot("terminal-failed");
      throw e;
    });
    await shot("terminal");
  });

  await t.test("diff and restore a turn: the file comes back", async () => {
    await page.locator("#refresh-turns").click();
    const first = page.locator('#turns li[data-turn-number="1"]');
    await first.waitFor();
    await first.getByRole("button", { name: "Diff" }).click();
    await page.locator("#diff", { hasText: "+version 1" }).waitFor();
    await shot("diff");
    await first.getByRole("button", { name: "Restore" }).click();
    await page.locator("#diff", { hasText: "restored turn 1" }).waitFor();
    assert.equal(readFileSync(join(projDir, "notes.txt"), "utf8"), "version 1\n");
    assert.ok(!existsSync(join(projDir, "other.txt")), "a file created later is gone");
    await shot("restored");
  });

  await t.test("@ mentions: search per keystroke, highlight, pick; a hostile file name is text", async () => {
    const hostile = "<img src=x onerror=alert(1)>.txt";
    mkdirSync(join(projDir, "src"));
    for (const f of ["src/server.go", "src/service.go", hostile]) writeFileSync(join(projDir, f), "x\n");
    const input = page.locator("#input");
    const list = page.locator("#mentions:not([hidden])");
    const options = list.locator('li[role="option"]');
    // The list of the answer to the last keystroke (earlier ones may show first).
    const answered = (query) => page.locator(`#mentions[data-query="${query}"]:not([hidden])`).waitFor();
    await input.fill("look at ");
    await input.pressSequentially("@srvgo");
    await answered("srvgo");
    await options.filter({ hasText: "src/server.go" }).waitFor();
    // Each shown path has its matched characters in <mark>s: the query's.
    for (const li of await options.all()) {
      const marks = await li.locator("mark").allTextContents();
      assert.equal(marks.join("").toLowerCase(), "srvgo", `highlight of ${await li.textContent()}`);
    }
    assert.ok((await options.count()) >= 2, "both src/serv*.go");
    assert.equal(await options.nth(0).getAttribute("aria-selected"), "true");
    await shot("mentions");
    // ArrowDown selects the second, Enter picks it (and sends nothing).
    await input.press("ArrowDown");
    assert.equal(await options.nth(1).getAttribute("aria-selected"), "true");
    const second = await options.nth(1).textContent();
    await input.press("Enter");
    await list.waitFor({ state: "detached" });
    assert.equal(await input.inputValue(), `look at @${second} `);
    // Escape closes the list and leaves the text alone.
    await input.pressSequentially("and @onerr");
    await answered("onerr");
    await input.press("Escape");
    await list.waitFor({ state: "detached" });
    assert.equal(await input.inputValue(), `look at @${second} and @onerr`);
    // The next keystroke searches again; the hostile name is shown as text.
    await input.pressSequentially("or");
    await answered("onerror");
    const bad = options.filter({ hasText: "onerror" });
    assert.equal(await bad.textContent(), hostile);
    assert.equal(await page.locator("#mentions img").count(), 0, "a file name is never parsed as HTML");
    await shot("mentions-hostile");
    await input.press("Tab");
    await list.waitFor({ state: "detached" });
    assert.equal(await input.inputValue(), `look at @${second} and @${hostile} `);
    await input.fill("");
    assert.deepEqual(dialogs.filter((d) => d.startsWith("alert")), [], "no script of a file name ran");
  });

  assert.deepEqual(pageErrors.map(String), [], "no error in the page");
});
