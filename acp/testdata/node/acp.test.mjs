// Drives `sidecar acp` with the official ACP TypeScript client
// (@agentclientprotocol/sdk) over the child's stdio. Run by acp/node_test.go
// with SIDECAR_BIN set; the scripted provider (ZQAGENT_SCRIPT) stands in for
// the model.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";

const BIN = process.env.SIDECAR_BIN;
if (!BIN) throw new Error("SIDECAR_BIN is not set (run this through go test ./acp/)");

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "zq-acp-")));
const dataDir = path.join(tmp, "data");
const project = path.join(tmp, "project");
fs.mkdirSync(project);
fs.writeFileSync(path.join(project, "notes.txt"), "the file on disk\n");
after(async () => {
  if (ed && ed.child.exitCode === null) {
    ed.child.kill();
    await ed.exited;
  }
  fs.rmSync(tmp, { recursive: true, force: true });
});

// A 1×1 PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const call = (id, name, args) => ({ id, name, arguments: JSON.stringify(args) });
// The first process plays this; the second (after the restart) only loads.
const script1 = {
  responses: [
    // prompt 1: a command allowed once, a command rejected, an answer.
    { reasoning: "Two commands to run.", text: "I will run a command.", toolCalls: [call("call_allow", "run_shell", { command: "touch allowed.txt" })] },
    { toolCalls: [call("call_reject", "run_shell", { command: "touch rejected.txt" })] },
    { text: "Done: one ran, one was refused." },
    // prompt 2: streams, then stalls until cancelled.
    { text: "Streaming a long answer", chunkSize: 4, delay: 10, stall: true },
    // prompt 3: the editor's file system and a plan.
    { toolCalls: [call("call_read", "read_file", { path: "notes.txt" })] },
    { toolCalls: [call("call_write", "write_file", { path: "out.txt", content: "written through the editor\n" })] },
    { toolCalls: [call("call_todo", "todo_write", { todos: [
      { id: "1", content: "Read the notes", status: "completed" },
      { id: "2", content: "Write the output", status: "in_progress", priority: "high" },
    ] })] },
    { text: "Files done." },
  ],
};
const scriptPath = (name, s) => {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, JSON.stringify(s));
  return p;
};

// start spawns `sidecar acp` and connects the ACP client to its stdio.
function start(script) {
  const child = spawn(BIN, ["acp", "--data-dir", dataDir], {
    env: { ...process.env, ZQAGENT_SCRIPT: script, ZQAGENT_TOKEN: "", OPENAI_API_KEY: "" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const ed = {
    child, exited, stderr: () => stderr,
    updates: [], // session/update params, in order
    asks: [], // session/request_permission params
    answers: [], // option ids (or "cancelled") to answer the next asks with
    reads: [], writes: [],
    listeners: new Set(),
  };
  const app = acp.client({ name: "zqagent-node-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      ed.updates.push(params);
      for (const l of ed.listeners) l(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      ed.asks.push(params);
      const id = ed.answers.shift();
      if (!id || id === "cancelled") return { outcome: { outcome: "cancelled" } };
      return { outcome: { outcome: "selected", optionId: id } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
      ed.reads.push(params);
      return { content: "the unsaved editor buffer\nsecond line\n" };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
      ed.writes.push(params);
      return {};
    });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  ed.conn = app.connect(stream);
  ed.agent = ed.conn.agent;
  ed.stop = async () => {
    child.stdin.end(); // EOF: the sidecar exits cleanly
    const r = await exited;
    ed.conn.close();
    return r;
  };
  return ed;
}

const kinds = (ups, sid) => ups.filter((u) => u.sessionId === sid).map((u) => u.update.sessionUpdate);
const texts = (ups, sid, kind) =>
  ups.filter((u) => u.sessionId === sid && u.update.sessionUpdate === kind).map((u) => u.update.content.text).join("");
const toolUpdates = (ups, id) => ups.filter((u) => u.update.toolCallId === id).map((u) => u.update);

let firstSession;
let ed;

test("initialize, session/new, modes, refusals", async () => {
  ed = start(scriptPath("script1.json", script1));
  const init = await ed.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
    clientInfo: { name: "node-test", version: "1" },
  });
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentCapabilities.loadSession, true);
  assert.equal(init.agentCapabilities.promptCapabilities.image, true);

  const s = await ed.agent.request(acp.methods.agent.session.new, { cwd: project, mcpServers: [] });
  firstSession = s.sessionId;
  assert.ok(firstSession);
  assert.deepEqual(s.modes.availableModes.map((m) => m.id), ["discuss", "plan", "interactive", "auto"]);
  assert.equal(s.modes.currentModeId, "interactive");

  // project.open's refusals: a filesystem root, a path that does not exist.
  await assert.rejects(ed.agent.request(acp.methods.agent.session.new, { cwd: "/", mcpServers: [] }), /filesystem root/);
  await assert.rejects(ed.agent.request(acp.methods.agent.session.new, { cwd: path.join(tmp, "nope"), mcpServers: [] }), /does not exist/);

  // Modes on a second session: one of ours works, another id is refused.
  const s2 = await ed.agent.request(acp.methods.agent.session.new, { cwd: project, mcpServers: [] });
  await ed.agent.request(acp.methods.agent.session.setMode, { sessionId: s2.sessionId, modeId: "plan" });
  await assert.rejects(ed.agent.request(acp.methods.agent.session.setMode, { sessionId: s2.sessionId, modeId: "yolo" }));
});

test("a prompt whose commands need permission: allow once, then reject", async () => {
  ed.answers.push("allow_once", "reject_once");
  const res = await ed.agent.request(acp.methods.agent.session.prompt, {
    sessionId: firstSession,
    prompt: [{ type: "text", text: "run two commands" }],
  });
  assert.equal(res.stopReason, "end_turn");
  assert.equal(ed.asks.length, 2);
  const ask = ed.asks[0];
  assert.equal(ask.toolCall.toolCallId, "call_allow");
  assert.equal(ask.toolCall.kind, "execute");
  assert.deepEqual(ask.options.map((o) => o.kind), ["allow_once", "allow_always", "reject_once", "reject_always"]);
  assert.equal(ed.asks[1].toolCall.toolCallId, "call_reject");

  const ups = ed.updates;
  assert.match(texts(ups, firstSession, "agent_message_chunk"), /I will run a command\.Done: one ran, one was refused\./);
  assert.equal(texts(ups, firstSession, "agent_thought_chunk"), "Two commands to run.");
  const allow = toolUpdates(ups, "call_allow");
  assert.equal(allow[0].sessionUpdate, "tool_call");
  assert.equal(allow[0].kind, "execute");
  assert.equal(allow[0].status, "pending");
  assert.equal(allow.at(-1).status, "completed");
  assert.equal(toolUpdates(ups, "call_reject").at(-1).status, "failed");
  assert.ok(fs.existsSync(path.join(project, "allowed.txt")), "the allowed command ran");
  assert.ok(!fs.existsSync(path.join(project, "rejected.txt")), "the rejected command did not run");
});

test("session/cancel mid-stream ends the prompt with cancelled", async () => {
  let cancelled = false;
  const listener = (u) => {
    if (!cancelled && u.sessionId === firstSession && u.update.sessionUpdate === "agent_message_chunk") {
      cancelled = true;
      ed.agent.notify(acp.methods.agent.session.cancel, { sessionId: firstSession });
    }
  };
  ed.listeners.add(listener);
  const res = await ed.agent.request(acp.methods.agent.session.prompt, {
    sessionId: firstSession,
    prompt: [{ type: "text", text: "say something long" }],
  });
  ed.listeners.delete(listener);
  assert.ok(cancelled, "a chunk streamed before the cancel");
  assert.equal(res.stopReason, "cancelled");
});

test("file tools go through the editor's fs/* (still asking to write); todo_write is a plan; an image prompt", async () => {
  ed.answers.push("allow_once"); // write_file asks in interactive mode; read_file does not
  const res = await ed.agent.request(acp.methods.agent.session.prompt, {
    sessionId: firstSession,
    // An image rides along (promptCapabilities.image).
    prompt: [{ type: "text", text: "work with the files" }, { type: "image", mimeType: "image/png", data: PNG }],
  });
  assert.equal(res.stopReason, "end_turn");

  assert.equal(ed.reads.length, 1);
  assert.equal(ed.reads[0].path, path.join(project, "notes.txt"));
  const read = toolUpdates(ed.updates, "call_read");
  assert.equal(read[0].kind, "read");
  assert.deepEqual(read[0].locations, [{ path: path.join(project, "notes.txt") }]);
  assert.match(JSON.stringify(read.at(-1).content), /the unsaved editor buffer/);

  const ask = ed.asks.at(-1);
  assert.equal(ask.toolCall.toolCallId, "call_write");
  assert.equal(ed.writes.length, 1);
  assert.equal(ed.writes[0].path, path.join(project, "out.txt"));
  assert.equal(ed.writes[0].content, "written through the editor\n");
  assert.ok(!fs.existsSync(path.join(project, "out.txt")), "the editor, not the sidecar, wrote out.txt");
  const write = toolUpdates(ed.updates, "call_write");
  assert.equal(write[0].kind, "edit");
  assert.deepEqual(write[0].content, [{ type: "diff", path: path.join(project, "out.txt"), newText: "written through the editor\n" }]);
  assert.equal(write.at(-1).status, "completed");

  const atts = fs.readdirSync(path.join(dataDir, "sessions", firstSession, "attachments"));
  assert.equal(atts.length, 1, "the image was saved as the turn's attachment");

  const plan = ed.updates.filter((u) => u.update.sessionUpdate === "plan").at(-1);
  assert.deepEqual(plan.update.entries, [
    { content: "Read the notes", priority: "medium", status: "completed" },
    { content: "Write the output", priority: "high", status: "in_progress" },
  ]);
});

test("session/load after a restart replays the stored history", async () => {
  const r = await ed.stop();
  assert.equal(r.code, 0, "the first process exits cleanly on stdin EOF:\n" + ed.stderr());

  ed = start(scriptPath("script2.json", { responses: [] }));
  await ed.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const res = await ed.agent.request(acp.methods.agent.session.load, { sessionId: firstSession, cwd: project, mcpServers: [] });
  assert.equal(res.modes.currentModeId, "interactive");

  const ups = ed.updates; // all of them arrived before the response
  assert.equal(texts(ups, firstSession, "user_message_chunk"), "run two commandssay something longwork with the files");
  assert.match(texts(ups, firstSession, "agent_message_chunk"), /I will run a command\.Done: one ran, one was refused\..*Files done\./s);
  assert.match(texts(ups, firstSession, "agent_thought_chunk"), /Two commands to run\./);
  assert.equal(toolUpdates(ups, "call_allow").at(-1).status, "completed");
  assert.equal(toolUpdates(ups, "call_reject").at(-1).status, "failed");
  assert.equal(toolUpdates(ups, "call_write")[0].kind, "edit");
  assert.ok(kinds(ups, firstSession).includes("plan"));
  assert.equal(ed.asks.length, 0, "answered approvals are not asked again");

  const r2 = await ed.stop();
  assert.equal(r2.code, 0, ed.stderr());
});

test("a permission request shows what runs: flagged characters escaped, every line of the command", async () => {
  // The model hides a second command behind a right-to-left override and
  // Hangul-filler "blanks" (bash does not split on them: `touch` runs), and
  // another on the second line of a command.
  const hidden = "echo build ok\u3164#\u3164; touch pwned\u202e";
  const twoLines = "echo one\ntouch second-line";
  ed = start(scriptPath("script3.json", { responses: [
    { toolCalls: [call("call_hidden", "run_shell", { command: hidden })] },
    { toolCalls: [call("call_lines", "run_shell", { command: twoLines })] },
    { text: "Both refused." },
  ] }));
  await ed.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const s = await ed.agent.request(acp.methods.agent.session.new, { cwd: project, mcpServers: [] });
  ed.answers.push("reject_once", "reject_once");
  const res = await ed.agent.request(acp.methods.agent.session.prompt, {
    sessionId: s.sessionId,
    prompt: [{ type: "text", text: "run them" }],
  });
  assert.equal(res.stopReason, "end_turn");
  assert.equal(ed.asks.length, 2);

  const [a, b] = ed.asks.map((x) => x.toolCall);
  assert.equal(a.toolCallId, "call_hidden");
  assert.equal(a.title, "⚠ Run echo build ok\\u3164#\\u3164; touch pwned\\u202e", "escaped and flagged");
  assert.doesNotMatch(a.title, /[\u202e\u3164]/);
  assert.equal(a.content[0].type, "content");
  assert.equal(a.content[0].content.text,
    "⚠ `arguments.command` holds bidi overrides that reorder how text shows and blanks that are not spaces to a shell (shown escaped).");
  assert.equal(a.content[1].content.text, "```\necho build ok\\u3164#\\u3164; touch pwned\\u202e\n```");
  assert.equal(a.rawInput.command, hidden, "rawInput is what runs, byte for byte");

  assert.equal(b.toolCallId, "call_lines");
  assert.equal(b.title, "Run echo one … (2 lines)");
  assert.deepEqual(b.content, [{ type: "content", content: { type: "text", text: "```\necho one\ntouch second-line\n```" } }],
    "the content shows every line of the command");

  const r = await ed.stop();
  assert.equal(r.code, 0, ed.stderr());
});
