// A tiny static server for dist/, and a dev launcher.
//
//   node serve.mjs --bin ../../bin/sidecar [--data-dir DIR] [--project DIR]
//
// spawns the sidecar (the demo model answers without an API key; set
// ZQAGENT_SCRIPT for a scripted one), allows this page's origin with
// --allow-origin http://127.0.0.1:<port>, and prints the page's URL with the
// sidecar's url and token in the fragment (never sent to the server, but
// kept in the browser's history: a development shortcut, see src/main.ts
// and README.md for what a product does instead).
// test/ui.test.mjs uses serveStatic() the same way.
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { dirname, extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const types = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css", ".map": "application/json" };

/** Serves `dir` on 127.0.0.1; resolves with {port, origin, close()}. */
export function serveStatic(dir = join(here, "dist"), port = 0) {
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname)).replace(/^(\.\.[/\\])+/, "");
    try {
      const body = await readFile(join(dir, path === "/" ? "index.html" : path));
      res.writeHead(200, { "content-type": types[extname(path) || ".html"] ?? "application/octet-stream", "cache-control": "no-store" });
      res.end(body);
    } catch {
      res.writeHead(404).end("not found");
    }
  });
  return new Promise((resolve) => {
    server.listen(port, "127.0.0.1", () => {
      const p = server.address().port;
      resolve({ port: p, origin: `http://127.0.0.1:${p}`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { bin: { type: "string" }, "data-dir": { type: "string" }, project: { type: "string" }, port: { type: "string" } } });
  if (!values.bin) {
    console.error("usage: node serve.mjs --bin PATH/TO/sidecar [--data-dir DIR] [--project DIR] [--port N]");
    process.exit(2);
  }
  const { spawnSidecar } = await import("@zqagent/sidecar-client/node");
  const web = await serveStatic(join(here, "dist"), Number(values.port ?? 0));
  const sidecar = await spawnSidecar({
    bin: values.bin,
    dataDir: values["data-dir"] ?? join(here, ".zqagent-dev"),
    allowOrigins: [web.origin],
    logger: console,
  });
  const frag = new URLSearchParams({ url: sidecar.ready.url, token: sidecar.ready.token });
  console.log(`open ${web.origin}/#${frag}`);
  if (values.project) console.log(`and open the project ${values.project}`);
  process.on("SIGINT", async () => {
    await sidecar.stop();
    await web.close();
    process.exit(0);
  });
}
