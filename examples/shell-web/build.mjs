// Bundles the reference shell into dist/: app.js (src/main.ts with the
// client and xterm.js), index.html, style.css and xterm.css.
//
//   node build.mjs            build once
//   node build.mjs --watch    rebuild on change
import { build, context } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "dist");
mkdirSync(out, { recursive: true });
for (const [from, to] of [
  ["index.html", "index.html"],
  ["style.css", "style.css"],
  ["node_modules/@xterm/xterm/css/xterm.css", "xterm.css"],
]) copyFileSync(join(here, from), join(out, to));

const options = {
  entryPoints: [join(here, "src/main.ts")],
  bundle: true,
  format: "esm",
  target: "es2022",
  sourcemap: true,
  outfile: join(out, "app.js"),
  // "source" picks the client's TypeScript source (its package.json
  // exports it under that condition), so no separate client build is needed.
  conditions: ["source"],
  logLevel: "warning",
};
if (process.argv.includes("--watch")) {
  await (await context(options)).watch();
  console.log("esbuild: watching src/");
} else {
  await build(options);
}
