// @zqagent/sidecar-client: the browser-safe entry point (no Node modules).
// Node and Electron main: import from "@zqagent/sidecar-client/node", which
// re-exports all of this plus spawnSidecar() and a `ws`-based connect().

export * from "./protocol.js";
export * from "./errors.js";
export {
  connect,
  browserWebSocket,
  DEFAULT_RECONNECT_ATTEMPTS,
  decodeBase64,
  encodeBase64,
  SidecarClient,
  SessionSubscription,
  TerminalStream,
  type CallOptions,
  type ConnectOptions,
  type ConnectionState,
  type FrameValidator,
  type Logger,
  type ReconnectOptions,
  type SubscribeOptions,
  type TerminalOptions,
  type WebSocketFactory,
  type WebSocketLike,
} from "./client.js";
