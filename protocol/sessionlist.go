package protocol

// Sessions at scale: session.list's paging, search and archive filter,
// and session.archive / session.unarchive.

// The bounds of session.list's limit.
const (
	SessionListDefaultLimit = 50
	SessionListMaxLimit     = 200
)

// SessionListParams are the params of session.list.
type SessionListParams struct {
	ProjectID string `json:"projectId" rpc:"required"`
	// Limit is the page size, 1 to 200; absent = 50.
	Limit *int `json:"limit,omitempty"`
	// Cursor is the nextCursor of the previous page of the same list
	// (same projectId, query and archived); absent = the first page.
	Cursor string `json:"cursor,omitempty"`
	// Query, when not blank, keeps the sessions whose title or one of
	// whose messages (user and assistant text) has every word of it, each
	// matched as a word prefix; plain text, never a query language. At
	// most 1,000 bytes and 32 words.
	Query string `json:"query,omitempty"`
	// Archived: true lists only archived sessions; false (default) only
	// the others.
	Archived bool `json:"archived,omitempty"`
}

// SessionListResult is the result of session.list: a page of sessions,
// most recently updated first.
type SessionListResult struct {
	Sessions []Session `json:"sessions"`
	// NextCursor continues the list after this page; absent on the last
	// page. Opaque; valid for the same list while the sidecar runs.
	NextCursor string `json:"nextCursor,omitempty"`
}

// SessionSnippet is the passage of a search hit around the words that
// matched (its title, else its earliest matching message); "…" marks a
// cut.
type SessionSnippet struct {
	Text string `json:"text"`
	// Highlights are the matched words as [start, end) offsets into
	// Text, in UTF-16 code units (JavaScript string indexes).
	Highlights [][2]int `json:"highlights"`
}
