// The reference shell: a whole agent UI on @zqagent/sidecar-client in one
// plain file, no framework. Copy what you need.
//
// How it is built:
//   - connect() once; the client reconnects by itself and resumes every
//     subscription from its last seq (the header shows the state);
//   - the transcript is drawn ONLY from session events: a live turn, a
//     replay after a reload and a replay in another window go through the
//     same render(ev) and look the same;
//   - the pending-request dialog is drawn from SessionSubscription.pending,
//     which the client keeps (the subscribe answer's pendingRequests, then
//     the events); a reload finds the same pending card; request_resolved
//     (another window answered, a timeout, the turn ended) closes it;
//   - the header lists the windows attached to the session (presence);
//   - where we are (project, session) lives in the URL fragment, so a
//     reload comes back to it.

import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import {
  connect,
  type PendingRequest,
  type PresenceClient,
  type Project,
  type Session,
  type SessionEvent,
  type SessionSubscription,
  type SidecarClient,
  type TerminalStream,
} from "@zqagent/sidecar-client";

// ---------------------------------------------------------------------------
// Small DOM helpers.

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

/** h("div", {class: "x"}, "text", child) — makes an element. */
function h(tag: string, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  el.append(...children); // strings become text nodes: model text is never parsed as HTML
  return el;
}

function button(label: string, onClick: () => void, attrs: Record<string, string> = {}): HTMLButtonElement {
  const b = h("button", { type: "button", ...attrs }, label) as HTMLButtonElement;
  b.addEventListener("click", onClick);
  return b;
}

/** Shows errors where the user sees them (and in the console). */
function report(e: unknown): void {
  console.error(e);
  $("notice").textContent = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

// ---------------------------------------------------------------------------
// Where we are: the URL fragment holds url, token, project and session.
//
// The token in location.hash is a shortcut of this demo, which is a static
// page with nobody to ask (serve.mjs prints the link): a fragment never
// reaches a server, but it stays in the browser's history and address bar
// and is readable by anything that sees location. A product must not do
// this: the renderer asks its main process for {url, token} over IPC
// (Electron's contextBridge, Tauri's invoke; ui-protocol.md §9) and keeps
// the token in memory only.

const frag = new URLSearchParams(location.hash.slice(1));
function saveFragment(): void {
  history.replaceState(null, "", "#" + frag.toString());
}

let client: SidecarClient;
let project: Project | undefined;
let session: { id: string; sub: SessionSubscription } | undefined;
let running = false;

async function main(): Promise<void> {
  const url = frag.get("url");
  const token = frag.get("token");
  if (!url || !token) {
    $("notice").textContent = "open this page as index.html#url=<ws url>&token=<token> (the sidecar's ready line)";
    return;
  }
  client = await connect({ url, token, client: { name: "zqagent-shell-web", version: "0.0.0" }, locale: navigator.language });
  const conn = $("conn");
  const showState = (s: string) => {
    conn.dataset.state = s;
    conn.textContent = s;
  };
  showState(client.state);
  client.onStateChange((s) => showState(s));
  const init = client.initializeResult!;
  if (init.capabilities.notice) $("notice").textContent = init.capabilities.notice;

  // Other windows open projects and change MCP servers too; a real shell
  // listens to client.on("mcp.status", …) here.
  await refreshProjects();
  const pid = frag.get("project");
  if (pid) {
    const p = (await client.call("project.list")).projects.find((x) => x.projectId === pid);
    if (p) await selectProject(p);
  }
  const sid = frag.get("session");
  if (sid && project) await selectSession(sid);
}

// ---------------------------------------------------------------------------
// Projects and sessions.

$("open-project").addEventListener("submit", (e) => {
  e.preventDefault();
  const path = $<HTMLInputElement>("project-path").value.trim();
  if (!path) return;
  client
    .call("project.open", { path })
    .then(async (p) => {
      await refreshProjects();
      await selectProject(p);
    })
    .catch(report);
});

async function refreshProjects(): Promise<void> {
  const { projects } = await client.call("project.list");
  $("projects").replaceChildren(
    ...projects.map((p) => {
      const li = h("li", { class: "item" + (p.projectId === project?.projectId ? " selected" : ""), title: p.path }, p.path);
      li.addEventListener("click", () => selectProject(p).catch(report));
      return li;
    }),
  );
}

// ---------------------------------------------------------------------------
// Git: trust a worktree's or a monorepo's repository once, by its real
// path (project.trustGit), and run one agent per worktree (worktree.*).

async function renderGit(): Promise<void> {
  const card = $("git-card");
  card.replaceChildren();
  const c = project?.gitCandidate;
  if (project && c && !c.trusted) {
    const what = c.kind === "worktree" ? "a git worktree of" : "a folder of the git repository";
    card.append(
      h("p", {}, `This project is ${what} ${c.repository} (git dir ${c.gitDir}). Use git here?`),
      button("Enable git", () => {
        client
          .call("project.trustGit", { projectId: project!.projectId, hash: c.hash })
          .then((p) => selectProject(p))
          .catch(report);
      }),
    );
  } else if (project && c?.trusted) {
    card.append(
      h("p", {}, `git: ${c.kind} of ${c.repository}`),
      button("Disable git", () => {
        client.call("project.untrustGit", { projectId: project!.projectId }).then((p) => selectProject(p)).catch(report);
      }),
    );
  }
  const list = $("worktrees");
  list.replaceChildren();
  $<HTMLButtonElement>("new-worktree").disabled = !project?.git;
  if (!project?.git) return;
  const { worktrees } = await client.call("worktree.list", { projectId: project.projectId });
  for (const w of worktrees) {
    const li = h("li", { class: "item" + (w.current ? " selected" : ""), title: w.path }, `${w.branch ?? "(detached)"} — ${w.path}`);
    li.addEventListener("click", () => {
      client.call("project.open", { path: w.path }).then((p) => refreshProjects().then(() => selectProject(p))).catch(report);
    });
    if (!w.main && w.projectId) {
      const projectId = w.projectId;
      li.append(
        button("Remove", () => {
          client
            .call("worktree.remove", { projectId })
            .catch((e) => {
              if (!confirm(`${String(e)}\nRemove anyway, deleting the changes?`)) throw e;
              return client.call("worktree.remove", { projectId, force: true });
            })
            .then(() => renderGit())
            .catch(report);
        }),
      );
    }
    list.append(li);
  }
}

$("new-worktree").addEventListener("click", () => {
  const branch = prompt("Branch of the new worktree");
  if (!branch || !project) return;
  client
    .call("worktree.create", { projectId: project.projectId, branch })
    .then(async (r) => {
      await refreshProjects();
      await selectProject(r.project);
    })
    .catch(report);
});

async function selectProject(p: Project): Promise<void> {
  // A project must be open in this sidecar process for terminals and MCP
  // (project.open is cheap and idempotent; after a sidecar restart it is
  // needed again).
  project = await client.call("project.open", { path: p.path });
  frag.set("project", project.projectId);
  saveFragment();
  $<HTMLButtonElement>("new-session").disabled = false;
  $<HTMLButtonElement>("new-terminal").disabled = false;
  await refreshProjects();
  await renderGit();
  await refreshSessions();
  await attachTerminals();
}

$("new-session").addEventListener("click", () => {
  if (!project) return;
  const mode = $<HTMLSelectElement>("mode").value as Session["mode"];
  client
    .call("session.create", { projectId: project.projectId, mode })
    .then(async ({ sessionId }) => {
      await refreshSessions();
      await selectSession(sessionId);
    })
    .catch(report);
});

async function refreshSessions(): Promise<void> {
  if (!project) return;
  const { sessions } = await client.call("session.list", { projectId: project.projectId });
  $("sessions").replaceChildren(
    ...sessions.map((s) => {
      const li = h(
        "li",
        { class: "item" + (s.sessionId === session?.id ? " selected" : ""), "data-session": s.sessionId },
        s.title || s.sessionId.slice(0, 12),
        " ",
        h("small", {}, s.mode + " · " + s.status),
      );
      li.addEventListener("click", () => selectSession(s.sessionId).catch(report));
      return li;
    }),
  );
}

async function selectSession(sessionId: string): Promise<void> {
  await session?.sub.close();
  session = undefined;
  resetTranscript();
  frag.set("session", sessionId);
  saveFragment();
  // subscribe() installs onEvent BEFORE it sends session.subscribe: the
  // replay that follows the answer cannot be missed. afterSeq 0 replays the
  // whole session, which is how the transcript is drawn after a reload.
  const sub = await client.subscribe(sessionId, {
    afterSeq: 0,
    onEvent: render,
    onPendingChange: showPending,
    onPresence: showPresence,
  });
  session = { id: sessionId, sub };
  setRunning(sub.running);
  showPending(sub.pending);
  for (const id of ["input", "send", "refresh-turns"]) $<HTMLButtonElement>(id).disabled = false;
  await refreshSessions();
  await refreshTurns();
}

// ---------------------------------------------------------------------------
// The transcript: one render(ev) for live events and replays alike.

interface TurnView {
  el: HTMLElement;
  /** assistant text and reasoning of each model request, by reqId */
  texts: Map<string, { text: HTMLElement; reasoning: HTMLElement }>;
  /** tool cards by tool call id */
  tools: Map<string, HTMLElement>;
}
const turns = new Map<string, TurnView>();

function resetTranscript(): void {
  turns.clear();
  $("transcript").replaceChildren();
  closeDialog();
}

function turnView(turnId: string): TurnView {
  let t = turns.get(turnId);
  if (!t) {
    t = { el: h("div", { class: "turn", "data-turn": turnId }), texts: new Map(), tools: new Map() };
    turns.set(turnId, t);
    $("transcript").append(t.el);
  }
  return t;
}

function textView(t: TurnView, reqId: string) {
  let v = t.texts.get(reqId);
  if (!v) {
    const reasoning = h("div", { class: "reasoning-text" });
    const details = h("details", { class: "reasoning", open: "" }, h("summary", {}, "reasoning"), reasoning);
    details.hidden = true; // shown when reasoning arrives
    const text = h("div", { class: "assistant" });
    t.el.append(details, text);
    v = { text, reasoning };
    t.texts.set(reqId, v);
  }
  return v;
}

function toolView(t: TurnView, id: string, name: string): HTMLElement {
  let el = t.tools.get(id);
  if (!el) {
    el = h("div", { class: "tool", "data-tool": name, "data-status": "proposed" }, h("b", {}, name), " ", h("span", { class: "args" }), h("div", { class: "preview" }));
    t.tools.set(id, el);
    t.el.append(el);
  }
  return el;
}

function render(ev: SessionEvent): void {
  const turnId = ev.turnId ?? "session";
  const t = turnView(turnId);
  // `ev.type` narrows `ev.data` in each case.
  switch (ev.type) {
    case "turn_start":
      if (ev.data.input) t.el.append(h("div", { class: "user" }, ev.data.input));
      if (ev.data.resumed) t.el.append(h("div", { class: "status-line" }, "resumed"));
      setRunning(true);
      break;
    case "reasoning_delta": {
      const v = textView(t, ev.data.reqId);
      (v.reasoning.parentElement as HTMLElement).hidden = false;
      v.reasoning.append(ev.data.text);
      break;
    }
    case "assistant_delta":
      textView(t, ev.data.reqId).text.append(ev.data.text);
      break;
    case "assistant_message": {
      // The complete text; replaces the deltas (they add up to it).
      const v = textView(t, ev.data.reqId);
      v.text.textContent = ev.data.text;
      if (ev.data.reasoning) {
        v.reasoning.textContent = ev.data.reasoning;
        (v.reasoning.parentElement as HTMLElement).hidden = false;
      }
      break;
    }
    case "tool_proposed": {
      const el = toolView(t, ev.data.reqId, ev.data.name);
      el.querySelector(".args")!.textContent = JSON.stringify(ev.data.arguments);
      break;
    }
    case "permission_required":
    case "ask_user_question":
    case "plan_proposed":
    case "directory_requested":
    case "elicitation_requested":
      // The card itself is the dialog (from sub.pending); mark the tool.
      if (t.tools.has(ev.data.reqId)) t.tools.get(ev.data.reqId)!.dataset.status = "waiting";
      break;
    case "request_resolved":
      // Answered here or elsewhere, timed out, or its turn ended: the
      // client already dropped it from sub.pending; close its dialog.
      if (ev.data.requestId === shown) showPending(session?.sub.pending ?? []);
      break;
    case "tool_started":
      toolView(t, ev.data.reqId, ev.data.name).dataset.status = "running";
      break;
    case "tool_finished": {
      const el = toolView(t, ev.data.reqId, ev.data.name);
      el.dataset.status = ev.data.status;
      el.querySelector(".preview")!.textContent = [ev.data.status, ev.data.reason, ev.data.result_preview].filter(Boolean).join(": ");
      break;
    }
    case "queue_steering":
      t.el.append(h("div", { class: "steer" }, "steered: " + ev.data.text));
      break;
    case "error":
      t.el.append(h("div", { class: "error" }, `${ev.data.error_type}: ${ev.data.error}`));
      break;
    case "turn_suspended":
      t.el.append(h("div", { class: "status-line" }, "suspended: waiting for your answer (the sidecar restarted)"));
      break;
    case "interrupted":
      t.el.append(h("div", { class: "status-line" }, "interrupted"));
      break;
    case "turn_end":
      t.el.append(h("div", { class: "status-line", "data-end": ev.data.status }, `turn ${ev.data.status}`));
      setRunning(false);
      refreshTurns().catch(report);
      break;
    case "session_named":
      refreshSessions().catch(report);
      break;
  }
  const tr = $("transcript");
  tr.scrollTop = tr.scrollHeight;
}

// ---------------------------------------------------------------------------
// The composer: send, steer, interrupt.

function setRunning(r: boolean): void {
  running = r;
  $<HTMLButtonElement>("steer").disabled = !r;
  $<HTMLButtonElement>("interrupt").disabled = !r;
}

$("composer").addEventListener("submit", (e) => {
  e.preventDefault();
  const input = $<HTMLTextAreaElement>("input");
  const text = input.value.trim();
  if (!session || !text) return;
  input.value = "";
  // A turn started while one runs is queued (FIFO) by the sidecar.
  client.call("turn.start", { sessionId: session.id, text }).catch(report);
});
$("input").addEventListener("keydown", (e) => {
  if (mentionKey(e)) return;
  if (e.key === "Enter" && !e.shiftKey) {
    e.preventDefault();
    $<HTMLFormElement>("composer").requestSubmit();
  }
});
$("steer").addEventListener("click", () => {
  const input = $<HTMLTextAreaElement>("input");
  const text = input.value.trim();
  if (!session || !text || !running) return;
  input.value = "";
  // Injected between iterations of the running turn (queue_steering shows it).
  client.call("turn.steer", { sessionId: session.id, text }).catch(report);
});
$("interrupt").addEventListener("click", () => {
  if (session) client.call("turn.interrupt", { sessionId: session.id }).catch(report);
});

// ---------------------------------------------------------------------------
// "@" mentions: "@" and what follows it before the caret is a query of
// files.search, sent on each keystroke; a newer call supersedes an older
// one (searchFiles resolves to null), and an answer that arrives after the
// text moved on is dropped too. Picking one replaces "@query" by "@path ".
// A path is hostile input (a file may be named "<img onerror=…>"): it is
// drawn as text nodes only.

const mentions = $<HTMLUListElement>("mentions");
let mention: { start: number; paths: string[]; index: number } | undefined;
let mentionSeq = 0;

function closeMentions(): void {
  mentionSeq++; // answers still on their way are dropped
  mention = undefined;
  mentions.hidden = true;
  mentions.replaceChildren();
}

/** The path with its matched characters (UTF-16 offsets) in <mark>s. */
function highlighted(path: string, positions: number[]): (Node | string)[] {
  const out: (Node | string)[] = [];
  const hit = new Set(positions);
  let i = 0;
  while (i < path.length) {
    let j = i;
    while (j < path.length && hit.has(j) === hit.has(i)) j++;
    const part = path.slice(i, j);
    out.push(hit.has(i) ? h("mark", {}, part) : part);
    i = j;
  }
  return out;
}

function showMentionIndex(index: number): void {
  if (!mention) return;
  mention.index = index;
  mentions.querySelectorAll("li").forEach((li, k) => li.setAttribute("aria-selected", String(k === index)));
}

function pickMention(index: number): void {
  const input = $<HTMLTextAreaElement>("input");
  const m = mention;
  if (!m || !m.paths[index]) return;
  const end = input.selectionStart;
  const insert = "@" + m.paths[index] + " ";
  input.value = input.value.slice(0, m.start) + insert + input.value.slice(end);
  input.selectionStart = input.selectionEnd = m.start + insert.length;
  closeMentions();
  input.focus();
}

$("input").addEventListener("input", () => {
  const input = $<HTMLTextAreaElement>("input");
  const before = input.value.slice(0, input.selectionStart);
  const m = /(^|\s)@(\S*)$/.exec(before);
  if (!m || !project) return closeMentions();
  const start = before.length - m[2].length - 1;
  const seq = ++mentionSeq;
  client
    .searchFiles(project.projectId, m[2], { limit: 8 })
    .then((r) => {
      if (!r || seq !== mentionSeq) return; // superseded by a newer keystroke
      if (r.results.length === 0) return closeMentions();
      mention = { start, paths: r.results.map((x) => x.path), index: 0 };
      mentions.replaceChildren(
        ...r.results.map((x, k) => {
          const li = h("li", { role: "option", title: x.path }, ...highlighted(x.path, x.positions));
          li.addEventListener("mousedown", (e) => {
            e.preventDefault(); // keep the focus in the composer
            pickMention(k);
          });
          return li;
        }),
      );
      mentions.dataset.query = m[2]; // what the list answers
      mentions.hidden = false;
      showMentionIndex(0);
    })
    .catch(report);
});
$("input").addEventListener("blur", () => closeMentions());

/** Keys of the open mention list; true when the key was used. */
function mentionKey(e: KeyboardEvent): boolean {
  if (!mention) return false;
  const n = mention.paths.length;
  switch (e.key) {
    case "ArrowDown":
      showMentionIndex((mention.index + 1) % n);
      break;
    case "ArrowUp":
      showMentionIndex((mention.index + n - 1) % n);
      break;
    case "Enter":
    case "Tab":
      pickMention(mention.index);
      break;
    case "Escape":
      closeMentions();
      break;
    default:
      return false;
  }
  e.preventDefault();
  return true;
}

// ---------------------------------------------------------------------------
// The request dialog: approvals (four outcomes), questions, plans, directories.

const dialog = $<HTMLDialogElement>("request");
let shown: string | undefined; // requestId on screen

function closeDialog(): void {
  shown = undefined;
  if (dialog.open) dialog.close();
}

/** Says which windows are attached to the session. */
function showPresence(clients: PresenceClient[]): void {
  const names = clients.map((c) => (c.name || "unnamed") + (c.version ? ` ${c.version}` : ""));
  $("presence").textContent = clients.length > 1 ? `${clients.length} windows: ${names.join(", ")}` : "";
}

/** Shows the oldest pending request (or closes the dialog). */
function showPending(pending: PendingRequest[]): void {
  const req = pending[0];
  if (!req) return closeDialog();
  if (req.requestId === shown) return;
  shown = req.requestId;
  const body = $("request-body");
  const actions = $("request-actions");
  body.replaceChildren();
  actions.replaceChildren();
  dialog.dataset.kind = req.kind;
  dialog.dataset.requestId = req.requestId;

  // A kind newer than this shell (a newer sidecar, ui-protocol.md §3): say
  // so; the turn waits until another window answers or it is interrupted.
  if (req.kind === "unknown") {
    $("request-title").textContent = `The agent asks for something this app does not know (${req.requestKind})`;
    body.append(h("p", {}, "Update the app to answer it, or interrupt the turn."));
    if (!dialog.open) dialog.show();
    return;
  }

  // A text the model wrote may hold bidi overrides, escapes or invisible
  // characters: show display[field] instead, and say why (§7 "Cards safe
  // to render").
  const d = req.data;
  const safe = (field: string, raw: string) => d.display?.[field] ?? raw;
  for (const w of d.warnings ?? []) body.append(h("p", { class: "warning" }, `${w.field} holds ${w.kind} characters (shown escaped)`));

  const answer = (response: Parameters<SessionSubscription["respond"]>[1]) => {
    if (!session) return;
    closeDialog();
    // respond() drops the request from sub.pending; onPendingChange shows the
    // next one. When the answer did not go through (the socket dropped), show
    // the card again: the request is still pending.
    const sub = session.sub;
    sub.respond(req, response as never).catch((e) => {
      report(e);
      showPending(sub.pending);
    });
  };

  switch (req.kind) {
    case "approval": {
      $("request-title").textContent = `Allow ${req.data.name}?`;
      body.append(h("p", {}, safe("reason", req.data.reason)));
      for (const [k, v] of Object.entries(req.data.arguments)) {
        const raw = typeof v === "string" ? v : JSON.stringify(v);
        body.append(h("div", {}, h("b", {}, k)), h("div", { class: "arg" }, safe(`arguments.${k}`, raw)));
      }
      // A file tool's card says what will change: a unified diff (§7).
      const diff = req.data.diff;
      if (diff) {
        body.append(h("div", {}, h("b", {}, "changes")), h("pre", { class: "diff" }, safe("diff.unified", diff.unified)));
        if (diff.truncated) body.append(h("p", { class: "status-line" }, "(diff cut at 64 KiB)"));
      }
      // A deny may say why: the model reads the note.
      const note = h("input", { id: "deny-note", placeholder: "Why deny? (optional, the agent reads it)" }) as HTMLInputElement;
      body.append(note);
      actions.append(
        button("Allow once", () => answer({ outcome: "once" })),
        button(`Always allow ${req.data.name}`, () => answer({ outcome: "always_tool" })),
      );
      // always_command only where the event offers it; else say why not.
      if (req.data.alwaysCommand) {
        actions.append(button(`Always allow "${req.data.command}"`, () => answer({ outcome: "always_command" })));
      } else if (req.data.alwaysCommandNote) {
        body.append(h("p", { class: "status-line" }, req.data.alwaysCommandNote));
      }
      actions.append(button("Deny", () => answer(note.value.trim() ? { outcome: "deny", note: note.value.trim() } : { outcome: "deny" })));
      break;
    }
    case "question": {
      $("request-title").textContent = "The agent asks";
      body.append(h("p", {}, safe("question", req.data.question)));
      req.data.options.forEach((o, i) => actions.append(button(safe(`options[${i}]`, o), () => answer({ answer: o }))));
      if (req.data.allowText || req.data.options.length === 0) {
        const input = h("input", { id: "answer-text", placeholder: "your answer" }) as HTMLInputElement;
        body.append(input);
        actions.append(button("Answer", () => answer({ answer: input.value })));
      }
      break;
    }
    case "plan": {
      $("request-title").textContent = "Approve this plan?";
      body.append(h("pre", {}, safe("plan", req.data.plan)));
      const fb = h("textarea", { id: "plan-feedback", placeholder: "feedback (optional)" }) as HTMLTextAreaElement;
      body.append(fb);
      actions.append(
        button("Approve plan", () => answer({ approved: true, ...(fb.value && { feedback: fb.value }) })),
        button("Reject plan", () => answer({ approved: false, ...(fb.value && { feedback: fb.value }) })),
      );
      break;
    }
    case "directory": {
      const r = req.data;
      $("request-title").textContent = `Grant ${r.writable ? "read-write" : "read-only"} access to a directory?`;
      body.append(h("p", {}, safe("reason", r.reason)), h("div", { class: "arg" }, safe("path", r.path)));
      // Named through a symlink: show where it really leads.
      if (r.link) body.append(h("p", { class: "warning" }, `via the symlink ${r.link} → ${r.linkTarget ?? "?"}`));
      if (r.outsideProject) body.append(h("p", { class: "warning" }, "outside the project"));
      actions.append(
        button("Grant", () => answer({ granted: true })),
        button("Refuse", () => answer({ granted: false })),
      );
      break;
    }
    case "elicitation": {
      // An MCP server asks during its tool call (§7 "MCP elicitation").
      const r = req.data;
      $("request-title").textContent = `The MCP server ${safe("server", r.server)} asks`;
      body.append(h("p", {}, safe("message", r.message)));
      const decline = [button("Decline", () => answer({ action: "decline" })), button("Cancel", () => answer({ action: "cancel" }))];
      if (r.mode === "url" && r.url) {
        // The host, plainly (punycode for an IDN); opened only on accept.
        body.append(h("p", {}, "Opens a page on ", h("b", { id: "elicit-host" }, r.host ?? "?")), h("div", { class: "arg" }, safe("url", r.url)));
        const url = r.url;
        actions.append(
          button("Open and continue", () => {
            window.open(url, "_blank", "noopener,noreferrer");
            answer({ action: "accept" });
          }),
          ...decline,
        );
        break;
      }
      // A form: one input per property of the flat schema.
      type Prop = { type?: string; title?: string; description?: string; enum?: string[] };
      const props = ((r.requestedSchema as { properties?: Record<string, Prop> } | undefined)?.properties ?? {}) as Record<string, Prop>;
      const inputs = new Map<string, HTMLInputElement | HTMLSelectElement>();
      for (const [name, p] of Object.entries(props)) {
        const el = p.enum
          ? (h("select", { name }, ...p.enum.map((o) => h("option", { value: o }, o))) as HTMLSelectElement)
          : (h("input", { name, type: p.type === "boolean" ? "checkbox" : p.type === "number" || p.type === "integer" ? "number" : "text" }) as HTMLInputElement);
        inputs.set(name, el);
        body.append(h("label", {}, p.title ?? name, " ", el), p.description ? h("p", { class: "status-line" }, p.description) : "");
      }
      actions.append(
        button("Submit", () => {
          const content: Record<string, string | number | boolean> = {};
          for (const [name, el] of inputs) {
            const t = props[name]?.type;
            if (el instanceof HTMLInputElement && el.type === "checkbox") content[name] = el.checked;
            else if (el.value === "") continue;
            else content[name] = t === "number" || t === "integer" ? Number(el.value) : el.value;
          }
          answer({ action: "accept", content });
        }),
        ...decline,
      );
      break;
    }
  }
  if (!dialog.open) dialog.show(); // non-modal: the transcript stays readable
}

// ---------------------------------------------------------------------------
// Turns: the per-turn snapshots, their diff and restore.

async function refreshTurns(): Promise<void> {
  if (!session) return;
  const sessionId = session.id;
  const { turns: list, plan } = await client.call("vcs.turns", { sessionId });
  const ul = $("turns");
  if (plan.mode === "off") {
    ul.replaceChildren(h("li", {}, "change tracking is off: " + plan.status));
    return;
  }
  ul.replaceChildren(
    ...list.map((t) =>
      h(
        "li",
        { "data-turn-number": String(t.number) },
        h("span", { title: t.files.map((f) => `${f.status} ${f.path}`).join("\n") }, `#${t.number} ${t.files.map((f) => f.path).join(", ")}`),
        button("Diff", () => {
          client
            .call("vcs.diff", { sessionId, turn: t.number })
            .then(({ diff }) => {
              const pre = $("diff");
              pre.hidden = false;
              pre.textContent = diff;
            })
            .catch(report);
        }),
        button("Restore", () => {
          // Brings the files back to the state after this turn; the current
          // state is snapshotted first, so nothing is lost.
          if (!confirm(`Restore the files as they were after turn ${t.number}?`)) return;
          client
            .call("vcs.restore", { sessionId, turn: t.number })
            .then((r) => {
              const pre = $("diff");
              pre.hidden = false;
              pre.textContent = `restored turn ${t.number}: ${[...r.restored, ...r.deleted.map((p) => p + " (deleted)")].join(", ") || "nothing to do"}`;
              return refreshTurns();
            })
            .catch(report);
        }),
      ),
    ),
  );
}
$("refresh-turns").addEventListener("click", () => refreshTurns().catch(report));

// ---------------------------------------------------------------------------
// The terminal panel: xterm.js on a sidecar PTY.

let term: { xterm: Terminal; fit: FitAddon; stream: TerminalStream } | undefined;

async function openTerminal(terminalId: string): Promise<void> {
  if (!project) return;
  const projectId = project.projectId;
  term?.xterm.dispose();
  await term?.stream.close();
  const el = $("terminal");
  el.replaceChildren();
  const xterm = new Terminal({ fontSize: 12, convertEol: false });
  const fit = new FitAddon();
  xterm.loadAddon(fit);
  xterm.open(el);
  fit.fit();
  // Keystrokes go to the PTY from the first moment (typing while the
  // subscription is being set up must not be lost). One terminal.write per
  // keystroke, none awaited: the sidecar applies a connection's writes in
  // the order sent (ui-protocol.md §3).
  xterm.onData((data) => client.writeTerminal(projectId, terminalId, data).catch(report));
  // The client decodes terminal.output's base64 and keeps the byte offset,
  // so a reconnect continues where the screen is.
  const stream = await client.terminal(projectId, terminalId, {
    afterSeq: 0, // a fresh screen: redraw from the scrollback
    onData: (bytes) => xterm.write(bytes), // raw bytes: xterm decodes UTF-8 itself
    onGap: () => xterm.write("\r\n\x1b[2m[… output skipped …]\x1b[0m\r\n"),
    onExit: (code) => xterm.write(`\r\n[process exited with code ${code}]\r\n`),
  });
  xterm.onResize(({ cols, rows }) => stream.resize(cols, rows).catch(report));
  new ResizeObserver(() => fit.fit()).observe(el);
  await stream.resize(xterm.cols, xterm.rows);
  term = { xterm, fit, stream };
  el.dataset.terminalId = terminalId; // the panel is wired (the UI test waits for it)
  xterm.focus();
}

/** After a reload: show the project's newest live terminal again. */
async function attachTerminals(): Promise<void> {
  if (!project) return;
  const { terminals } = await client.call("terminal.list", { projectId: project.projectId });
  const live = terminals.filter((t) => t.alive).at(-1);
  if (live) await openTerminal(live.id);
}

$("new-terminal").addEventListener("click", () => {
  if (!project) return;
  client
    .call("terminal.create", { projectId: project.projectId, cols: 80, rows: 24, name: "shell" })
    .then((t) => openTerminal(t.id))
    .catch(report);
});

main().catch(report);
