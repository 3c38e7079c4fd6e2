// The wire types, as the client exposes them. Every object type comes from
// the protocol's JSON Schema (src/generated/protocol.ts, `npm run gen`);
// this file only adds the maps that type `call`, notifications and events,
// and narrows the few fields the schema leaves open (request.respond's
// response by kind).
//
// A newer sidecar of the same protocol version may add members, event
// types and request kinds (ui-protocol.md §3): the types list what this
// package knows; an event of another type arrives as an
// `UnknownSessionEvent` (`type: "unknown"`), a pending request of another
// kind as an `UnknownPendingRequest` (`kind: "unknown"`).

import {
  schemaErrorCodes,
  schemaEventTypes,
  schemaProtocolVersions,
  schemaRequestKinds,
  type ApprovalResponse,
  type DirectoryResponse,
  type ElicitationResponse,
  type PendingRequest,
  type PlanResponse,
  type QuestionResponse,
  type RequestKind,
  type RequestRespondParams,
  type RequestRespondResult,
  type SchemaEventData,
  type SchemaMethods,
  type SchemaNotifications,
  type SessionEvent,
  type SessionSubscribeResult,
  type UnknownPendingRequest,
  type UnknownSessionEvent,
} from "./generated/protocol.js";

export * from "./generated/protocol.js";

/**
 * The answer of each kind of request (`request.respond {response}`). A
 * request of a kind this package does not know (`kind: "unknown"`) takes
 * the object its kind's documentation gives; the sidecar checks it.
 */
export interface ResponseOf {
  approval: ApprovalResponse;
  question: QuestionResponse;
  plan: PlanResponse;
  directory: DirectoryResponse;
  elicitation: ElicitationAnswer;
  unknown: { [k: string]: unknown };
}

/**
 * The answer of an MCP elicitation (MCP's own shape): `content`, with
 * `accept` of a form only, holds the form's values by property name; the
 * sidecar checks it against the card's `requestedSchema`.
 */
export type ElicitationAnswer = Omit<ElicitationResponse, "content"> & {
  content?: { [property: string]: string | number | boolean | string[] };
};

/** Every request kind a pending request may have here ("unknown" included). */
export type AnyRequestKind = keyof ResponseOf;

/** Every method, with its params and result. */
export type Methods = Omit<SchemaMethods, "request.respond"> & {
  "request.respond": {
    params: Omit<RequestRespondParams, "response"> & { response: ResponseOf[AnyRequestKind] };
    result: RequestRespondResult;
  };
};
export type MethodName = keyof Methods;
export type ParamsOf<M extends MethodName> = Methods[M]["params"];
export type ResultOf<M extends MethodName> = Methods[M]["result"];

/** Every notification's params. */
export type Notifications = SchemaNotifications;
export type NotificationName = keyof Notifications;

/** `data` of every event type. */
export type EventData = SchemaEventData;

/**
 * A session event of one type. `SessionEvent` is the union of them all,
 * narrowed by `type`:
 *
 *     if (ev.type === "permission_required") ev.data.requestId // typed
 */
export type EventOf<T extends SessionEvent["type"]> = Extract<SessionEvent, { type: T }>;

/** A pending request of one kind (`PendingRequest` narrows by `kind`). */
export type PendingOf<K extends AnyRequestKind> = Extract<PendingRequest, { kind: K }>;

const knownEventTypes: ReadonlySet<string> = new Set(schemaEventTypes);
const knownRequestKinds: ReadonlySet<string> = new Set(schemaRequestKinds);

/**
 * A session.event's params as this package delivers them: an event of a
 * type it does not know becomes an `UnknownSessionEvent` (`type:
 * "unknown"`, the wire type in `eventType`); others are as sent.
 */
export function toSessionEvent(params: Record<string, unknown>): SessionEvent {
  if (typeof params.type === "string" && knownEventTypes.has(params.type)) return params as unknown as SessionEvent;
  return { ...params, type: "unknown", eventType: String(params.type) } as UnknownSessionEvent;
}

/**
 * A pending request as this package delivers it: one of a kind it does not
 * know becomes an `UnknownPendingRequest` (`kind: "unknown"`, the wire kind
 * in `requestKind`); others are as sent.
 */
export function toPendingRequest(p: Record<string, unknown>): PendingRequest {
  if (typeof p.kind === "string" && knownRequestKinds.has(p.kind)) return p as unknown as PendingRequest;
  return { ...p, kind: "unknown", requestKind: String(p.kind) } as UnknownPendingRequest;
}

/** session.subscribe's result. */
export type SubscribeResult = SessionSubscribeResult;

/** The JSON-RPC error codes (ui-protocol.md §4). */
export const ErrorCode = {
  ParseError: schemaErrorCodes.parseError,
  InvalidRequest: schemaErrorCodes.invalidRequest,
  MethodNotFound: schemaErrorCodes.methodNotFound,
  InvalidParams: schemaErrorCodes.invalidParams,
  Internal: schemaErrorCodes.internal,
  NotInitialized: schemaErrorCodes.notInitialized,
  NotFound: schemaErrorCodes.notFound,
  Conflict: schemaErrorCodes.conflict,
  Forbidden: schemaErrorCodes.forbidden,
  Configuration: schemaErrorCodes.config,
} as const;

/** The protocol versions this package speaks (sent to `initialize`). */
export const PROTOCOL_VERSIONS = schemaProtocolVersions;
