// Package llm holds the provider contract shared by the engine and every model
// provider: chat messages, tool calls, tool schemas, stream chunks and the
// Provider interface itself. It is a leaf package: it imports nothing of the
// project, so providers (llm/openai, llm/scripted) and the engine
// can both depend on it without cycles.
//
// Concurrency: the types are plain values. A Provider must be safe for
// concurrent use by several engines; one Stream is consumed by one goroutine.
package llm

import (
	"context"
	"encoding/json"
	"iter"
)

// Roles of a chat message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one entry of a session's history, in the shape the engine keeps
// and persists. Providers translate it to their wire format.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Reasoning is the model's reasoning text of an assistant message, when the
	// provider streamed one (reasoning_content or a Responses reasoning summary).
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the calls an assistant message asked for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is the tool's name on a tool message.
	Name string `json:"name,omitempty"`
	// Attachments are inline media (data URLs) sent to the model with this
	// message. The engine strips them from older turns; they are never persisted.
	Attachments []Attachment `json:"attachments,omitempty"`
	// AttachmentRefs name the stored copies of Attachments (relative to the
	// session directory); they are what history and events carry.
	AttachmentRefs []StoredAttachment `json:"attachmentRefs,omitempty"`
	// Notice marks a message the engine inserted itself (steering, compaction
	// summary, elision stub) rather than one the user typed.
	Notice string `json:"notice,omitempty"`
	// TurnID is the turn this message opened: the engine sets it on a
	// turn's input message, so the history can be cut just before a turn
	// (session.rewind). It is history only, never sent to a model.
	TurnID string `json:"turnId,omitempty"`
}

// ToolCall is one function call requested by the model.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Attachment is a media file for the model: inline as
// data:<mime>;base64,<payload>, or, when DataURL is empty, the file at
// Path, read when a request is built (a user's uploads: the history then
// holds no copy of their bytes). Providers take the data URL from URL.
type Attachment struct {
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	DataURL  string `json:"dataUrl"`
	// Path is the absolute path of the stored file, for an Attachment
	// without DataURL.
	Path string `json:"path,omitempty"`
}

// StoredAttachment is a reference to an attachment saved on disk, relative to
// the session directory (e.g. "attachments/1700000000-0-shot.png").
type StoredAttachment struct {
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	Size     int64  `json:"size"`
	Path     string `json:"path"`
}

// ToolSchema is an OpenAI function-tool schema.
type ToolSchema struct {
	Type     string         `json:"type"` // always "function"
	Function FunctionSchema `json:"function"`
}

// FunctionSchema describes one callable function.
type FunctionSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Usage is the token accounting of one model response, as the providers
// count it: PromptTokens (input) includes CachedTokens, CompletionTokens
// (output) includes ReasoningTokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
	CachedTokens     int `json:"cached_tokens,omitempty"`
}

// RetryInfo reports an automatic retry after a transient network error; the
// engine turns it into an llm_retry event.
type RetryInfo struct {
	Attempt int    `json:"attempt"`
	Max     int    `json:"max"`
	Reason  string `json:"reason"`
	WaitMS  int64  `json:"waitMs"`
}

// Chunk is one piece of a streamed response. Content and Reasoning are
// increments. The final chunk carries the complete ToolCalls (assembled from
// deltas) and/or a FinishReason; Usage arrives when the API reports it.
// A chunk with Retry set carries nothing else: it announces a retry.
// RateLimits, when the endpoint sent rate-limit headers, come with the
// final chunk, or alone just before an error.
type Chunk struct {
	Content      string      `json:"content,omitempty"`
	Reasoning    string      `json:"reasoning,omitempty"`
	ToolCalls    []ToolCall  `json:"toolCalls,omitempty"`
	Usage        *Usage      `json:"usage,omitempty"`
	FinishReason string      `json:"finishReason,omitempty"`
	Retry        *RetryInfo  `json:"retry,omitempty"`
	RateLimits   *RateLimits `json:"rateLimits,omitempty"`
}

// Request is one streamed model call.
type Request struct {
	Model           string
	Messages        []Message
	Tools           []ToolSchema
	ReasoningEffort string // "", "low", "medium", "high"
	ReqID           string // correlates audit logs and events
	MaxTokens       int    // 0 = provider default
	// Conversation names the history this request continues (one engine's
	// session): a provider may keep the encodings of its messages for the
	// next request of the same conversation. "" keeps nothing.
	Conversation string
}

// ChatRequest is a small non-streamed call (session naming, summaries).
type ChatRequest struct {
	Model           string
	Messages        []Message
	ReasoningEffort string
	ReqID           string
	MaxTokens       int
}

// ChatResponse is the answer to a ChatRequest: its text and, when the
// endpoint reported them, its usage and rate limits.
type ChatResponse struct {
	Text       string
	Usage      *Usage
	RateLimits *RateLimits
}

// Provider is what the engine needs from a model endpoint.
//
// Stream yields chunks in order and stops at the end of the response or at the
// first error (yielded as the second value). It must stop promptly when ctx is
// cancelled, yielding ctx's error. Chat returns the whole text of a short,
// tool-less completion, with its usage.
type Provider interface {
	Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error]
	Chat(ctx context.Context, req ChatRequest) (ChatResponse, error)
}

// SessionNamer is a Provider that says whether the sessions it answers are
// named after their first turn (a real model, the demo; not a test script).
// A provider that does not implement it names none.
type SessionNamer interface {
	NamesSessions() bool
}
