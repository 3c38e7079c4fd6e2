// Package protocol is the wire vocabulary of the sidecar's UI protocol
// (ui-protocol.md): the params and result of every method, the params of
// every server notification, the data of every session event type, the
// error codes and the machine-readable error data, as Go types with their
// JSON names.
//
// It owns every wire and event type, and no behaviour. It is a leaf: it
// imports only the standard library (deps_test.go), so every layer may
// speak it. The engine emits these event data types (engine.Event's Data is
// an EventData), the store records their JSON, the handlers (ipc), the ACP
// agent (acp), the Go client (ipc/client) and the tests all speak these
// types, and schema.json, the JSON Schema (2020-12) of the whole protocol, is
// generated from them (go generate; see internal/gen). A test fails when
// schema.json is not what the types generate, so a type changed without
// regenerating is caught in CI. The layout of schema.json is described in
// internal/schemagen; package validate checks frames against it (the
// end-to-end tests run every frame the sidecar sends through it).
//
// Conventions: a field without omitempty is always present in what the
// sidecar sends (and required in a params object, unless its doc says
// otherwise); an omitempty field may be absent. Times are RFC 3339 strings
// in UTC with up to nanosecond precision and trailing zeros trimmed.
package protocol

//go:generate go run ./internal/gen -o schema.json
