package backend

import (
	"context"
	"errors"
	"fmt"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// ListSessions is session.list: a page of the project's sessions, newest
// first, archived or not, optionally narrowed by a search (the store's
// sessionlist.go has the order, the cursor and what a search matches).
func (b *Backend) ListSessions(ctx context.Context, p protocol.SessionListParams) (protocol.SessionListResult, error) {
	limit := protocol.SessionListDefaultLimit
	if p.Limit != nil {
		limit = *p.Limit
		if limit < 1 || limit > protocol.SessionListMaxLimit {
			return protocol.SessionListResult{}, protocol.InvalidField("limit", fmt.Sprintf("must be 1 to %d (got %d)", protocol.SessionListMaxLimit, limit))
		}
	}
	if _, err := b.projectOf(ctx, p.ProjectID); err != nil {
		return protocol.SessionListResult{}, err
	}
	page, err := b.opts.Store.SessionPage(ctx, store.SessionQuery{ProjectID: p.ProjectID, Limit: limit, Cursor: p.Cursor, Search: p.Query, Archived: p.Archived})
	switch {
	case errors.Is(err, store.ErrBadCursor):
		return protocol.SessionListResult{}, protocol.InvalidField("cursor", "not a cursor of this list (of this projectId, query and archived, issued since the sidecar started): list again without one")
	case errors.Is(err, store.ErrInvalid):
		return protocol.SessionListResult{}, protocol.InvalidField("query", err.Error())
	case err != nil:
		return protocol.SessionListResult{}, err
	}
	out := make([]protocol.Session, len(page.Sessions))
	for i, h := range page.Sessions {
		out[i] = b.sessionInfo(ctx, h.Session)
		if h.Snippet != nil {
			out[i].Snippet = &protocol.SessionSnippet{Text: h.Snippet.Text, Highlights: h.Snippet.Highlights}
		}
	}
	return protocol.SessionListResult{Sessions: out, NextCursor: page.NextCursor}, nil
}

// ArchiveSession is session.archive. A session whose turn is queued,
// running or awaiting answers, or that is suspended with answerable
// requests, is refused (-32003, kind busy): archived sessions leave the
// lists, and a turn there would ask questions nobody sees. Once archived,
// the session still opens and takes turns; it stays archived until
// session.unarchive.
func (b *Backend) ArchiveSession(ctx context.Context, p protocol.SessionIDParams) (protocol.Session, error) {
	ss, err := b.opts.Store.Session(ctx, p.SessionID)
	if err != nil {
		return protocol.Session{}, err
	}
	status := ss.Status
	if h := b.loadedHost(ss.ID); h != nil {
		status = string(h.turnState())
	}
	if st, _ := ParseTurnState(status); st.Busy() || st == StateSuspended {
		return protocol.Session{}, fmt.Errorf("archive session %s: %w (it is %s): let the turn end, interrupt it or answer its requests first", p.SessionID, engine.ErrBusy, st)
	}
	return b.setArchived(ctx, p.SessionID, true)
}

// UnarchiveSession is session.unarchive: the session is listed again, in
// its place (archiving moved neither it nor its updatedAt).
func (b *Backend) UnarchiveSession(ctx context.Context, p protocol.SessionIDParams) (protocol.Session, error) {
	return b.setArchived(ctx, p.SessionID, false)
}

func (b *Backend) setArchived(ctx context.Context, id string, archived bool) (protocol.Session, error) {
	ss, err := b.opts.Store.SetArchived(ctx, id, archived)
	if err != nil {
		return protocol.Session{}, err
	}
	return b.sessionInfo(ctx, ss), nil
}
