// Package openai is the OpenAI-compatible model provider: it streams a turn
// through the Responses API first and falls back to Chat Completions by the
// error class of seed §10.1 (endpoint unsupported → fall back and remember per
// model; incompatible parameters → fall back this time only; auth, rate limit,
// server and network errors → no fallback); the short non-streamed Chat
// calls (session names, compaction summaries) take the same API by the same
// rules. It owns the wire translation of
// llm.Message history and tool schemas, tool-call assembly from stream deltas,
// error classification into *llm.Error, transient network retries announced by
// Retry chunks, the stream idle watchdog and the optional request audit log.
//
// Concurrency: a Provider is safe for concurrent use; its only shared state is
// the per-model API cache (guarded by a mutex). Each Stream runs on the
// consumer's goroutine: it starts no goroutine of its own except the idle
// watchdog's timer callback, which only cancels the request's context. The API
// key is read at the start of every request, so a key changed in the UI applies
// to the next request.
package openai
