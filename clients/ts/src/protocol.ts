// The wire types, as the client exposes them. Every object type comes from
// the protocol's JSON Schema (src/generated/protocol.ts, `npm run gen`);
// this file only adds the maps that type `call`, notifications and events,
// and narrows the few fields the schema leaves open (request.respond's
// response by kind).

import {
  schemaErrorCodes,
  schemaProtocolVersions,
  type ApprovalResponse,
  type DirectoryResponse,
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
} from "./generated/protocol.js";

export * from "./generated/protocol.js";

/** The answer of each kind of request (`request.respond {response}`). */
export interface ResponseOf {
  approval: ApprovalResponse;
  question: QuestionResponse;
  plan: PlanResponse;
  directory: DirectoryResponse;
}

/** Every method, with its params and result. */
export type Methods = Omit<SchemaMethods, "request.respond"> & {
  "request.respond": {
    params: Omit<RequestRespondParams, "response"> & { response: ResponseOf[RequestKind] };
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
export type PendingOf<K extends RequestKind> = Extract<PendingRequest, { kind: K }>;

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
