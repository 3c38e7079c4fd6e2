// Generates src/generated/protocol.ts from the protocol's JSON Schema
// (protocol/schema.json, itself generated from the Go package protocol)
// with json-schema-to-typescript, plus the maps the client types `call`,
// notifications and events with; and src/generated/schema.ts, the schema
// itself, which the development-mode frame validator (src/validate.ts)
// compiles.
//
//   npm run gen          write src/generated/protocol.ts and schema.ts
//   npm run gen:check    fail when it is not what the schema gives (CI)
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compile } from "json-schema-to-typescript";

const here = dirname(fileURLToPath(import.meta.url));
const schemaPath = process.env.ZQAGENT_SCHEMA ?? join(here, "../../../protocol/schema.json");
const outPath = join(here, "../src/generated/protocol.ts");
const schemaOutPath = join(here, "../src/generated/schema.ts");
const schemaText = readFileSync(schemaPath, "utf8");
const schema = JSON.parse(schemaText);
const defs = schema.$defs;

// Each definition keeps its Go name as its TypeScript name.
for (const [name, def] of Object.entries(defs)) def.title = name;

// The schema is open to what a newer sidecar adds within a protocol version
// (ui-protocol.md §3, "What may change within version 1"); the types say
// what this package knows, and how the rest reaches a shell:
//  - An object lists its members (no index signature): a member a newer
//    sidecar adds is there at run time, untyped.
//  - An open enum where the sidecar sends it ({anyOf: [{$ref: E}, {type:
//    string}]}) is `E | (string & {})`: E's values, or another string.
//  - SessionEvent and PendingRequest: the oneOf variant for a type or kind
//    the schema does not list is dropped; the generated union is
//    KnownSessionEvent (KnownPendingRequest), and SessionEvent
//    (PendingRequest) adds UnknownSessionEvent (UnknownPendingRequest), the
//    shape the client delivers such an event (request) in, with type
//    (kind) "unknown": a switch on `type` still narrows, and one that
//    checks it is exhaustive names "unknown" once.
const isOther = (v) => Object.values(v.properties ?? {}).some((p) => p && "not" in p && Object.keys(p).length === 1);
const openEnumRef = (node) =>
  Array.isArray(node.anyOf) &&
  node.anyOf.length === 2 &&
  Object.keys(node.anyOf[0]).length === 1 &&
  typeof node.anyOf[0].$ref === "string" &&
  Object.keys(node.anyOf[1]).length === 1 &&
  node.anyOf[1].type === "string"
    ? node.anyOf[0].$ref
    : undefined;
const unions = { SessionEvent: ["type", "KnownSessionEvent"], PendingRequest: ["kind", "KnownPendingRequest"] };
for (const [name, [key, title]] of Object.entries(unions)) {
  const def = defs[name];
  def.oneOf = def.oneOf.filter((v) => !isOther(v));
  def.properties[key] = { $ref: openEnumRef(def.properties[key]) };
  def.title = title;
  defs[title] = def; // its parts are named after it (KnownSessionEvent1, …)
  delete defs[name];
}
(function known(node) {
  if (Array.isArray(node)) return node.forEach(known);
  if (node === null || typeof node !== "object") return;
  const enumRef = openEnumRef(node);
  if (enumRef) {
    delete node.anyOf;
    node.tsType = `(${enumRef.replace("#/$defs/", "")} | (string & {}))`;
  }
  const union = typeof node.$ref === "string" && unions[node.$ref.replace("#/$defs/", "")];
  if (union) {
    node.tsType = node.$ref.replace("#/$defs/", "");
    for (const k of Object.keys(node)) if (k !== "tsType") delete node[k];
  }
  if (node.type === "object" && node.properties && !("additionalProperties" in node)) node.additionalProperties = false;
  Object.values(node).forEach(known);
})(defs);
// A $ref with a sibling description would become a copy of the type under a
// new name (VCSMode1, …): keep the bare $ref.
(function bare(node) {
  if (Array.isArray(node)) return node.forEach(bare);
  if (node === null || typeof node !== "object") return;
  if (typeof node.$ref === "string") for (const k of Object.keys(node)) if (k !== "$ref") delete node[k];
  Object.values(node).forEach(bare);
})(defs);
const root = {
  $schema: schema.$schema,
  title: "ZqagentProtocolRoot",
  type: "object",
  additionalProperties: false,
  properties: Object.fromEntries(Object.keys(defs).map((n) => [n, { $ref: `#/$defs/${n}` }])),
  $defs: defs,
};
let ts = await compile(root, "ZqagentProtocolRoot", {
  bannerComment: "",
  // Free-form objects (tool arguments, usage) get an index signature; the
  // schema closes every other object itself.
  additionalProperties: true,
  strictIndexSignatures: false,
  unknownAny: true,
  format: true,
  style: { printWidth: 120 },
});
// The root object only made every definition reachable: drop it.
ts = ts.replace(/export interface ZqagentProtocolRoot \{[\s\S]*?\n\}\n/, "");

const ref = (s) => {
  if (!s?.$ref) throw new Error(`not a $ref: ${JSON.stringify(s)}`);
  return s.$ref.replace("#/$defs/", "");
};
const q = JSON.stringify;
const lines = [];
lines.push("/** Every method: its params and result (schema.json `methods`). */");
lines.push("export interface SchemaMethods {");
for (const [m, v] of Object.entries(schema.methods)) lines.push(`  ${q(m)}: { params: ${ref(v.params)}; result: ${ref(v.result)} };`);
lines.push("}", "");
lines.push("/** Every server notification's params (schema.json `notifications`). */");
lines.push("export interface SchemaNotifications {");
for (const [m, v] of Object.entries(schema.notifications)) lines.push(`  ${q(m)}: ${ref(v.params)};`);
lines.push("}", "");
lines.push("/** `data` of each session event type (schema.json `events`). */");
lines.push("export interface SchemaEventData {");
for (const [t, v] of Object.entries(schema.events)) lines.push(`  ${t}: ${ref(v)};`);
lines.push("}", "");
const eventEnvelope = defs.KnownSessionEvent.properties;
const pendingEnvelope = defs.KnownPendingRequest.properties;
lines.push(
  "/**",
  " * A session event of a type this package does not know: a newer sidecar's",
  " * (ui-protocol.md §3). The client delivers it with `type: \"unknown\"` and",
  " * the sidecar's type in `eventType`; every other member as sent.",
  " */",
  "export interface UnknownSessionEvent {",
  "  sessionId: string;",
  "  seq: number;",
  "  turnId?: string;",
  '  type: "unknown";',
  "  /** The event's type on the wire. */",
  "  eventType: string;",
  "  data: { [k: string]: unknown };",
  "  time: string;",
  "  [k: string]: unknown;",
  "}",
  "",
  "/** A session event: one of this package's types, or an unknown one. */",
  "export type SessionEvent = KnownSessionEvent | UnknownSessionEvent;",
  "",
  "/**",
  " * A pending request of a kind this package does not know: a newer",
  " * sidecar's (ui-protocol.md §3). The client delivers it with `kind:",
  " * \"unknown\"` and the sidecar's kind in `requestKind`; every other member as",
  " * sent. A shell shows that it needs a newer app, or answers it with",
  " * `respond` and the response the kind's documentation gives (the sidecar",
  " * checks it); unanswered, the turn waits as for any request.",
  " */",
  "export interface UnknownPendingRequest {",
  "  requestId: string;",
  '  kind: "unknown";',
  "  /** The request's kind on the wire. */",
  "  requestKind: string;",
  "  turnId: string;",
  "  toolCallId?: string;",
  "  seq: number;",
  "  data: { [k: string]: unknown };",
  "  createdAt: string;",
  "  [k: string]: unknown;",
  "}",
  "",
  "/** A pending request: one of this package's kinds, or an unknown one. */",
  "export type PendingRequest = KnownPendingRequest | UnknownPendingRequest;",
  "",
);
for (const [envelope, want] of [
  [eventEnvelope, ["sessionId", "seq", "turnId", "type", "data", "time"]],
  [pendingEnvelope, ["requestId", "kind", "turnId", "toolCallId", "seq", "data", "createdAt"]],
]) {
  const got = Object.keys(envelope);
  if (got.join() !== want.join()) throw new Error(`gen-types: the envelope ${got.join()} changed: update UnknownSessionEvent/UnknownPendingRequest (want ${want.join()})`);
}
lines.push("/** The event types this package knows (schema.json `$defs.EventType`). */");
lines.push(`export const schemaEventTypes = ${q(defs.EventType.enum)} as const;`, "");
lines.push("/** The request kinds this package knows (schema.json `$defs.RequestKind`). */");
lines.push(`export const schemaRequestKinds = ${q(defs.RequestKind.enum)} as const;`, "");
lines.push("/** The JSON-RPC error codes (schema.json `errorCodes`). */");
lines.push(`export const schemaErrorCodes = ${q(schema.errorCodes)} as const;`, "");
lines.push("/** The protocol versions the schema describes. */");
lines.push(`export const schemaProtocolVersions = ${q(schema.protocolVersions)} as const;`, "");

const out =
  "// Generated by scripts/gen-types.mjs from protocol/schema.json with\n" +
  "// json-schema-to-typescript; do not edit (npm run gen).\n" +
  "/* eslint-disable */\n\n" +
  ts.trimEnd() +
  "\n\n" +
  lines.join("\n");
const schemaOut =
  "// Generated by scripts/gen-types.mjs: protocol/schema.json as it is, for\n" +
  "// the frame validator (src/validate.ts); do not edit (npm run gen).\n" +
  "/* eslint-disable */\n\n" +
  "/** protocol/schema.json (JSON Schema draft 2020-12). */\n" +
  `export const protocolSchema: Record<string, unknown> = ${JSON.stringify(JSON.parse(schemaText), null, 1)};\n`;

const outputs = [
  [outPath, out],
  [schemaOutPath, schemaOut],
];
if (process.argv.includes("--check")) {
  let stale = false;
  for (const [path, want] of outputs) {
    let cur = "";
    try {
      cur = readFileSync(path, "utf8");
    } catch {}
    if (cur !== want) {
      console.error(`${path} is not what ${schemaPath} gives: run \`npm run gen\` in clients/ts and commit it`);
      stale = true;
    }
  }
  if (stale) process.exit(1);
  console.log("gen:check: src/generated/protocol.ts and schema.ts are current");
} else {
  for (const [path, text] of outputs) {
    writeFileSync(path, text);
    console.log(`wrote ${path}`);
  }
}
