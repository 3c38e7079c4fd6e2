// Package wsrpc is the sidecar's JSON-RPC 2.0 over WebSocket transport: it
// checks every upgrade (auth.go: loopback Host, Origin allowlist, bearer or
// subprotocol token in constant time), frames and bounds requests
// (jsonrpc.go: batches, id and method limits; params.go: strict params
// decoding that names the bad field), routes them through one method table
// (Endpoint.Methods of Handler), and turns errors into JSON-RPC codes in one
// place (errors.go: WireErrorOf). It knows nothing of sessions, engines or
// the store.
//
// Concurrency and delivery rules:
//   - Each connection (conn.go) has one reader goroutine, one writer
//     goroutine fed by a queue bounded in bytes (sendqueue.go), and one
//     goroutine per in-flight request (at most MaxInFlight; requests of one
//     connection are handled concurrently). Every request's context is the
//     connection's, cancelled when it ends; Serve waits for the requests and
//     for goroutines started with Conn.Go, then runs the OnEnd hook.
//   - Responses, Notify and Enqueue wait for room; NotifyNoWait and
//     EnqueueNoWait (broadcasts) never wait: a connection whose queue is full
//     past a headroom is closed ("fell behind").
//   - Frames are parsed in place (jsontext): params alias the frame and are
//     valid only while their handler runs. A frame over 1 MiB is read into
//     one of LargeFrameSlots process-wide buffers (frame.go), whose pages
//     go back to the OS once the frame was handled; while all are taken, a
//     connection with a large frame reads no further until one is free.
//   - A write has no per-frame deadline: the stall watch (progress.go) closes
//     a connection whose socket took no byte for WriteTimeout, so a slow but
//     steady reader keeps its connection. Memory never grows without bound.
//
// Locks: sendQueue.mu and stallWatch.mu are leaves; no lock is held while
// a handler runs or a frame is written.
package wsrpc
