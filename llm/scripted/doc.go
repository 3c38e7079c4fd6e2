// Package scripted is a model provider that plays a script instead of calling
// a model: tests drive the engine with it, the sidecar plays a JSON script
// file named by ZQAGENT_SCRIPT for end-to-end tests, and Demo gives shells a
// lively provider for UI development without an API key.
//
// A script is a queue of Responses, each answering one Stream call; Chat
// calls answer from a separate queue. The provider records every request so
// tests can assert on the history and tools the engine sent. An exhausted
// script answers "(script exhausted)" rather than hanging. A Gate holds a
// response after its text until a test releases it (or, for a script with
// a gateDir, until a file appears), so tests act at an exact moment of a
// turn. The script format is documented in ui-protocol.md.
//
// Concurrency: a Provider is safe for concurrent use; mu guards the queues and
// the recorded requests. Stream runs on the consumer's goroutine and starts no
// goroutine; delays, stalls and gates end when the context does.
package scripted
