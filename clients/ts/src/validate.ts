// Development mode: check every frame the sidecar sends against the
// protocol's JSON Schema (protocol/schema.json, bundled as
// ./generated/schema.ts) with Ajv, the way the Go end-to-end tests do
// (protocol/validate): the envelope of every frame, a response's result
// against its method's result type, an error against the error object, a
// notification's params against its notification's type (session.event's
// data against its event type's).
//
//     import { frameValidator } from "@zqagent/sidecar-client/validate";
//     const client = await connect({ url, token, validate: frameValidator() });
//
// `ajv` (8.x) is an optional peer dependency: install it (as a dev
// dependency) to use this entry point; the rest of the package never loads
// it. Ajv compiles the schema with `new Function`, which a strict
// Content-Security-Policy forbids: development builds only.

import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";

import type { FrameValidator } from "./client.js";
import { protocolSchema } from "./generated/schema.js";

export type { FrameValidator } from "./client.js";

/** The schema document's layout keys that are not JSON Schema keywords. */
const layoutKeys = ["protocolVersions", "methods", "notifications", "events", "errorCodes", "frames", "stdio"];

/**
 * A validator of incoming frames for `ConnectOptions.validate`, compiled
 * from `schema` (default: the protocol/schema.json this package was
 * generated from). Formats are not asserted (as in protocol/validate).
 * A method or notification the schema does not know gets its envelope
 * checked only.
 */
export function frameValidator(schema: Record<string, unknown> = protocolSchema): FrameValidator {
  const ajv = new Ajv2020({ allErrors: true, validateFormats: false, strictTypes: false });
  ajv.addVocabulary(layoutKeys);
  ajv.addSchema(schema);
  const id = schema.$id;
  if (typeof id !== "string") throw new TypeError("frameValidator: the schema has no $id");
  const cache = new Map<string, ValidateFunction | undefined>();
  const at = (pointer: string): ValidateFunction | undefined => {
    if (!cache.has(pointer)) cache.set(pointer, has(schema, pointer) ? ajv.getSchema(`${id}#${pointer}`) : undefined);
    return cache.get(pointer);
  };
  const check = (what: string, pointer: string, value: unknown, out: string[]): boolean => {
    const v = at(pointer);
    if (!v || v(value)) return true;
    out.push(...(v.errors ?? []).map((e) => `${what}${describe(e)}`));
    return false;
  };
  const esc = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

  return (frame, { kind, method }) => {
    const out: string[] = [];
    const f = frame as Record<string, unknown>;
    if (kind === "notification") {
      if (check("notification", "/frames/notification", frame, out)) {
        check("params", `/notifications/${esc(method)}/params`, f.params, out);
      }
    } else if (f !== null && typeof f === "object" && "error" in f) {
      check("error response", "/frames/errorResponse", frame, out);
    } else if (check("response", "/frames/response", frame, out)) {
      check("result", `/methods/${esc(method)}/result`, f.result, out);
    }
    return out;
  };
}

function describe(e: ErrorObject): string {
  const extra = e.keyword === "additionalProperties" ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})` : "";
  return `${e.instancePath || ""} ${e.message ?? e.keyword}${extra}`;
}

/** Whether a JSON pointer resolves in doc. */
function has(doc: unknown, pointer: string): boolean {
  let cur = doc;
  for (const part of pointer.split("/").slice(1)) {
    const k = part.replace(/~1/g, "/").replace(/~0/g, "~");
    if (cur === null || typeof cur !== "object" || !(k in cur)) return false;
    cur = (cur as Record<string, unknown>)[k];
  }
  return true;
}
