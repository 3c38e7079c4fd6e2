// Errors the client rejects with. Every one is an Error subclass, so stack
// traces, `instanceof` and error reporters work as usual.

import { ErrorCode, type ErrorData } from "./protocol.js";

/** The base of every error this package throws. */
export class SidecarError extends Error {
  override name = "SidecarError";
}

/**
 * A JSON-RPC error answer: `code` is the wire code (ui-protocol.md §4),
 * `data` the server's machine-readable details, `method` the call that
 * failed. The subclasses below are the codes a shell usually branches on.
 */
export class RpcError extends SidecarError {
  override name = "RpcError";
  readonly code: number;
  readonly data: ErrorData | undefined;
  readonly method: string;

  constructor(method: string, code: number, message: string, data?: ErrorData) {
    super(message);
    this.code = code;
    this.data = data;
    this.method = method;
  }
}

/** -32602: a param is missing or wrong; the message (and data.field) name it. */
export class InvalidParamsError extends RpcError {
  override name = "InvalidParamsError";
}
/** -32001: a call before `initialize`. */
export class NotInitializedError extends RpcError {
  override name = "NotInitializedError";
}
/** -32002: unknown session, project, request, terminal, … */
export class NotFoundError extends RpcError {
  override name = "NotFoundError";
}
/** -32003: already answered, nothing to retry, busy, … */
export class ConflictError extends RpcError {
  override name = "ConflictError";
}
/** -32004: a path outside the workspace, `/` as a project, … */
export class ForbiddenError extends RpcError {
  override name = "ForbiddenError";
}
/** -32005: no model, no key, no keychain, bad script. */
export class ConfigurationError extends RpcError {
  override name = "ConfigurationError";
}

const byCode: Record<number, typeof RpcError> = {
  [ErrorCode.InvalidParams]: InvalidParamsError,
  [ErrorCode.NotInitialized]: NotInitializedError,
  [ErrorCode.NotFound]: NotFoundError,
  [ErrorCode.Conflict]: ConflictError,
  [ErrorCode.Forbidden]: ForbiddenError,
  [ErrorCode.Configuration]: ConfigurationError,
};

/** rpcError makes the Error subclass of a wire error. */
export function rpcError(method: string, e: { code: number; message: string; data?: unknown }): RpcError {
  const Cls = byCode[e.code] ?? RpcError;
  const data = e.data !== null && typeof e.data === "object" ? (e.data as ErrorData) : undefined;
  return new Cls(method, e.code, e.message, data);
}

/**
 * The connection closed (or never opened) before a call was answered. Every
 * pending call is rejected with it when the socket closes. `closeCode` is
 * the WebSocket close code: a browser sees 1006 for a refused upgrade (bad
 * token, origin not allowed); the reason is only in the sidecar's stderr.
 */
export class ConnectionClosedError extends SidecarError {
  override name = "ConnectionClosedError";
  readonly closeCode: number;
  readonly reason: string;

  constructor(message: string, closeCode = 1006, reason = "") {
    super(message);
    this.closeCode = closeCode;
    this.reason = reason;
  }
}

/** The sidecar process failed to start or exited before its ready line. */
export class SpawnError extends SidecarError {
  override name = "SpawnError";
  /** Exit status, when it exited. */
  readonly exitCode: number | null;
  /** The last lines it wrote on stderr (never a secret: it logs none). */
  readonly stderr: string;

  constructor(message: string, exitCode: number | null, stderr: string) {
    super(stderr ? `${message}\n${stderr}` : message);
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

/** A call got no answer within its `timeoutMs` (the sidecar may still finish it). */
export class TimeoutError extends SidecarError {
  override name = "TimeoutError";
  readonly method: string;
  readonly timeoutMs: number;

  constructor(message: string, method: string, timeoutMs: number) {
    super(message);
    this.method = method;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Development mode (`ConnectOptions.validate`): a frame from the sidecar
 * does not match protocol/schema.json. `problems` says where.
 */
export class InvalidFrameError extends SidecarError {
  override name = "InvalidFrameError";
  /** The call the response answers, or the notification's method. */
  readonly method: string;
  readonly frame: unknown;
  readonly problems: string[];

  constructor(message: string, method: string, frame: unknown, problems: string[]) {
    super(message);
    this.method = method;
    this.frame = frame;
    this.problems = problems;
  }
}
