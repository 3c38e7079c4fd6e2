package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/zqagent/sidecar/llm"
)

// EventInput is an event to append. The store assigns its seq.
type EventInput struct {
	TurnID string
	Type   string
	Data   json.RawMessage // a JSON value; empty means {}
	Time   time.Time       // zero means now
	// Pending, when set, creates a durable pending request in the same
	// transaction (its Payload defaults to Data).
	Pending *PendingInput
	// History, when non-nil, replaces the session's checkpointed history in
	// the same transaction (an empty non-nil slice clears it).
	History []llm.Message
	// Status, when non-empty, sets the session's status in the same
	// transaction. The store keeps it as given (see validStatus): the
	// session host owns the state machine and its transitions.
	Status string
	// ClosePending closes the still-unanswered requests of TurnID in the
	// same transaction (they are no longer answerable).
	ClosePending bool
	// Resolved, when set with ClosePending, makes the event each request
	// it closes records (before this event, in its transaction, with its
	// TurnID and time).
	Resolved func(turnID, requestID, kind string) (typ string, data json.RawMessage)
	// Answer, when set, answers a pending request of the session in the
	// same transaction, before the event is stored (the event is the
	// answer's record, e.g. its request_resolved): a crash never keeps one
	// without the other. It must be the first event of its Append; when the
	// request is unknown (ErrNotFound) or already answered
	// (ErrAlreadyAnswered) neither is stored.
	Answer *Answer
	// CountTask adds one to the session's task count in the same
	// transaction.
	CountTask bool
	// Title, when set, names the session in the same transaction; an
	// automatic title never replaces one the user chose.
	Title *Title
	// Dequeue removes TurnID from the session's turn queue in the same
	// transaction (the queued turn started, or ended without starting).
	Dequeue bool
	// Usage, when set (a JSON value), replaces the session's usage totals
	// (Session.Usage) in the same transaction when UsageSeq is above the
	// stored totals' (totals recorded out of order never go back).
	Usage    json.RawMessage
	UsageSeq int64
	// Queue, when set, edits the session's turn queue in the same
	// transaction (queue.update, queue.move, queue.remove).
	Queue *QueueEdit
	// MarkTurn records in the same transaction that TurnID ended with the
	// history as stored after this event (its turn mark: what
	// ForkSession copies of that turn).
	MarkTurn bool
	// EndRewind deletes the session's rewind intent (BeginRewind) in the
	// same transaction.
	EndRewind bool
}

// Title is a session name and where it came from (auto | user).
type Title struct {
	Name   string
	Source string
}

// PendingInput describes the interactive request an event opens.
type PendingInput struct {
	RequestID  string
	Kind       string // approval | question | plan | directory | elicitation
	ToolCallID string
	Payload    json.RawMessage
}

// Event is a stored event.
type Event struct {
	SessionID string          `json:"sessionId"`
	Seq       int64           `json:"seq"`
	TurnID    string          `json:"turnId,omitempty"`
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data"`
	Time      time.Time       `json:"time"`
}

// StatusIdle is the status of a new session. Other statuses are the
// session host's (see EventInput.Status).
const StatusIdle = "idle"

// Pending request kinds.
const (
	KindApproval  = "approval"
	KindQuestion  = "question"
	KindPlan      = "plan"
	KindDirectory = "directory"

	// KindElicitation is an MCP server's elicitation (elicitation_requested).
	KindElicitation = "elicitation"
)

// preparedEvent is a validated EventInput with its history marshalled, so
// the writer does no encoding.
type preparedEvent struct {
	EventInput
	timeMS  int64
	history [][]byte // nil: no checkpoint
	// The history's encoding and what it shares with an earlier one
	// (encodedCheckpoint); zero without the cache.
	histToken, histPrev uint64
	histSame            int
}

// validStatus reports whether s is a plausible status: a short lowercase
// word. Which statuses exist and how a session moves between them is the
// session host's business, not the store's.
func validStatus(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && r != '_' {
			return false
		}
	}
	return true
}

func validKind(k string) bool {
	return k == KindApproval || k == KindQuestion || k == KindPlan || k == KindDirectory || k == KindElicitation
}

func prepareEvent(in EventInput) (preparedEvent, error) { return prepareEventWith(in, nil, "") }

// prepareEventWith is prepareEvent encoding a history with the session's
// entry of cache (nil: no cache).
func prepareEventWith(in EventInput, cache *historyCache, sessionID string) (preparedEvent, error) {
	if in.Type == "" {
		return preparedEvent{}, fmt.Errorf("%w: event without a type", ErrInvalid)
	}
	if len(in.Data) == 0 {
		in.Data = json.RawMessage("{}")
	} else if !json.Valid(in.Data) {
		return preparedEvent{}, fmt.Errorf("%w: %s event data is not JSON", ErrInvalid, in.Type)
	}
	if in.Status != "" && !validStatus(in.Status) {
		return preparedEvent{}, fmt.Errorf("%w: status %q", ErrInvalid, in.Status)
	}
	if len(in.Usage) > 0 && !json.Valid(in.Usage) {
		return preparedEvent{}, fmt.Errorf("%w: %s event usage is not JSON", ErrInvalid, in.Type)
	}
	if p := in.Pending; p != nil {
		if p.RequestID == "" || !validKind(p.Kind) {
			return preparedEvent{}, fmt.Errorf("%w: pending request %q of kind %q", ErrInvalid, p.RequestID, p.Kind)
		}
		if len(p.Payload) > 0 && !json.Valid(p.Payload) {
			return preparedEvent{}, fmt.Errorf("%w: pending request payload is not JSON", ErrInvalid)
		}
	}
	if in.Answer != nil {
		a := *in.Answer
		if err := a.prepare(); err != nil {
			return preparedEvent{}, err
		}
		in.Answer = &a
	}
	if in.Time.IsZero() {
		in.Time = time.Now()
	}
	pe := preparedEvent{EventInput: in, timeMS: in.Time.UnixMilli()}
	if in.History != nil {
		if cache != nil {
			ec, err := cache.encode(sessionID, in.History)
			if err != nil {
				return preparedEvent{}, err
			}
			pe.history, pe.histToken, pe.histPrev, pe.histSame = ec.enc, ec.token, ec.prev, ec.same
		} else {
			h, err := marshalHistory(in.History)
			if err != nil {
				return preparedEvent{}, err
			}
			pe.history = h
		}
		pe.History = nil
	}
	return pe, nil
}

// Append stores events in one transaction and returns them, with their
// seqs, after the commit.
func (s *Store) Append(ctx context.Context, sessionID string, evs ...EventInput) ([]Event, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	pes := make([]preparedEvent, len(evs))
	for i, in := range evs {
		pe, err := prepareEventWith(in, &s.hist, sessionID)
		if err != nil {
			return nil, fmt.Errorf("append: %w", err)
		}
		pes[i] = pe
	}
	type result struct {
		evs []Event
		err error
	}
	ch := make(chan result, 1)
	o := &op{sessionID: sessionID, evs: pes, done: func(evs []Event, err error) { ch <- result{evs, err} }}
	if err := s.submit(ctx, o); err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("append: %w", r.err)
		}
		return r.evs, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("append: %w", ctx.Err())
	}
}

// Enqueue queues one event for group commit and returns at once unless the
// queue is full, in which case it blocks until there is room. done (may be
// nil) is called after the commit, in enqueue order, on the writer
// goroutine; it must be fast and must not call the Store's write methods.
// When the store is closed or ev is invalid, done is called at once on the
// caller's goroutine.
func (s *Store) Enqueue(sessionID string, ev EventInput, done func(Event, error)) {
	pe, err := prepareEventWith(ev, &s.hist, sessionID)
	if err != nil {
		if done != nil {
			done(Event{}, fmt.Errorf("enqueue: %w", err))
		}
		return
	}
	o := &op{sessionID: sessionID, evs: []preparedEvent{pe}}
	if done != nil {
		o.done = func(evs []Event, err error) {
			if err != nil {
				done(Event{}, fmt.Errorf("enqueue: %w", err))
				return
			}
			for _, e := range evs { // more than one: see EventInput.Resolved
				done(e, nil)
			}
		}
	}
	if err := s.submit(context.Background(), o); err != nil && done != nil {
		done(Event{}, fmt.Errorf("enqueue: %w", err))
	}
}

// appendEvents inserts evs with the session's next seqs.
func (t *wtx) appendEvents(sessionID string, evs []preparedEvent) ([]Event, error) {
	st, err := t.session(sessionID)
	if err != nil {
		return nil, refuse(err) // nothing written yet
	}
	out := make([]Event, 0, len(evs))
	for i := range evs {
		e := &evs[i]
		if e.Answer != nil {
			if i > 0 {
				return nil, fmt.Errorf("%w: an answer in event %d of an append (only the first may answer)", ErrInvalid, i)
			}
			if _, err := t.answer(sessionID, *e.Answer); err != nil {
				return nil, err // a refusal: nothing of this op is written
			}
		}
		if e.ClosePending && e.Resolved != nil {
			res, err := t.resolvedEvents(sessionID, st, e)
			if err != nil {
				return nil, err
			}
			out = append(out, res...)
		}
		seq := st.lastSeq + 1
		if _, err := t.w.st.insEvent.ExecContext(t.ctx, st.pk, seq, e.TurnID, e.Type, string(e.Data), e.timeMS); err != nil {
			return nil, fmt.Errorf("insert event %d: %w", seq, err)
		}
		st.lastSeq = seq
		st.dirty = true
		if err := t.eventEffects(st, seq, e); err != nil {
			return nil, err
		}
		out = append(out, Event{SessionID: sessionID, Seq: seq, TurnID: e.TurnID, Type: e.Type, Data: e.Data, Time: time.UnixMilli(e.timeMS).UTC()})
	}
	return out, nil
}

// resolvedEvents inserts the events e.Resolved makes for the unanswered
// requests of e's turn (which e's ClosePending closes).
func (t *wtx) resolvedEvents(sessionID string, st *sessState, e *preparedEvent) ([]Event, error) {
	rows, err := t.query("SELECT request_id, kind FROM pending_requests WHERE session_pk = ? AND turn_id = ? AND answered = 0 ORDER BY seq, rowid", st.pk, e.TurnID)
	if err != nil {
		return nil, err
	}
	type req struct{ id, kind string }
	var reqs []req
	for rows.Next() {
		var r req
		if err := rows.Scan(&r.id, &r.kind); err != nil {
			rows.Close()
			return nil, err
		}
		reqs = append(reqs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]Event, 0, len(reqs))
	for _, r := range reqs {
		typ, data := e.Resolved(e.TurnID, r.id, r.kind)
		if typ == "" || !json.Valid(data) {
			return nil, fmt.Errorf("%w: resolved event of request %q", ErrInvalid, r.id)
		}
		seq := st.lastSeq + 1
		if _, err := t.w.st.insEvent.ExecContext(t.ctx, st.pk, seq, e.TurnID, typ, string(data), e.timeMS); err != nil {
			return nil, fmt.Errorf("insert event %d: %w", seq, err)
		}
		st.lastSeq = seq
		st.dirty = true
		out = append(out, Event{SessionID: sessionID, Seq: seq, TurnID: e.TurnID, Type: typ, Data: data, Time: time.UnixMilli(e.timeMS).UTC()})
	}
	return out, nil
}

// eventEffects applies what an event changes besides the log, in its
// transaction.
func (t *wtx) eventEffects(st *sessState, seq int64, e *preparedEvent) error {
	if p := e.Pending; p != nil {
		payload := p.Payload
		if len(payload) == 0 {
			payload = e.Data
		}
		if _, err := t.exec(`INSERT INTO pending_requests
			(request_id, session_pk, kind, turn_id, tool_call_id, seq, data, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			p.RequestID, st.pk, p.Kind, e.TurnID, p.ToolCallID, seq, string(payload), e.timeMS); err != nil {
			return fmt.Errorf("pending request %q: %w", p.RequestID, err)
		}
	}
	if e.history != nil {
		if err := t.checkpoint(st, e); err != nil {
			return err
		}
		st.checkpointSeq = seq
	}
	if e.MarkTurn && e.TurnID != "" {
		if err := t.markTurn(st, seq, e.TurnID); err != nil {
			return err
		}
	}
	if e.ClosePending {
		if _, err := t.exec(`UPDATE pending_requests
			SET answered = 1, answered_at = ?, answer_note = ?
			WHERE session_pk = ? AND turn_id = ? AND answered = 0`,
			e.timeMS, "closed: turn ended", st.pk, e.TurnID); err != nil {
			return fmt.Errorf("close pending requests: %w", err)
		}
	}
	if e.Status != "" {
		if _, err := t.exec("UPDATE sessions SET status = ? WHERE pk = ?", e.Status, st.pk); err != nil {
			return fmt.Errorf("set status: %w", err)
		}
	}
	if len(e.Usage) > 0 {
		if _, err := t.exec("UPDATE sessions SET usage = ?, usage_seq = ? WHERE pk = ? AND usage_seq < ?", string(e.Usage), e.UsageSeq, st.pk, e.UsageSeq); err != nil {
			return fmt.Errorf("set usage: %w", err)
		}
	}
	if e.CountTask {
		if _, err := t.exec("UPDATE sessions SET task_count = task_count + 1 WHERE pk = ?", st.pk); err != nil {
			return fmt.Errorf("count task: %w", err)
		}
	}
	if d := e.Title; d != nil && d.Name != "" {
		source := "auto"
		if d.Source == "user" {
			source = "user"
		}
		// An automatic name never replaces one the user chose.
		if _, err := t.exec(`UPDATE sessions SET title = ?, title_source = ?
			WHERE pk = ? AND (? = 'user' OR title_source = 'auto')`,
			d.Name, source, st.pk, source); err != nil {
			return fmt.Errorf("name session: %w", err)
		}
	}
	if e.Queue != nil {
		if err := t.editQueue(st.pk, e.Queue); err != nil {
			return err
		}
	}
	if e.EndRewind {
		if err := t.endRewind(st.pk); err != nil {
			return err
		}
	}
	if e.Dequeue && e.TurnID != "" {
		if _, err := t.exec("DELETE FROM turn_queue WHERE session_pk = ? AND turn_id = ?", st.pk, e.TurnID); err != nil {
			return fmt.Errorf("dequeue turn: %w", err)
		}
	}
	return nil
}

// DefaultPageSize is EventsAfter's page size when limit <= 0; MaxPageSize
// caps it.
const (
	DefaultPageSize = 1000
	MaxPageSize     = 10000
)

// EventsAfter returns up to limit events of a session with seq > afterSeq,
// in seq order. Page through a long log by passing the last seq back.
func (s *Store) EventsAfter(ctx context.Context, sessionID string, afterSeq int64, limit int) ([]Event, error) {
	if limit <= 0 {
		limit = DefaultPageSize
	}
	limit = min(limit, MaxPageSize)
	pk, err := sessionPK(ctx, s.rdb, sessionID)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	rows, err := s.rdb.QueryContext(ctx,
		"SELECT seq, turn_id, type, data, time FROM events WHERE session_pk = ? AND seq > ? ORDER BY seq LIMIT ?",
		pk, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	defer rows.Close()
	out := make([]Event, 0, min(limit, 256))
	for rows.Next() {
		e := Event{SessionID: sessionID}
		var data []byte
		var ms int64
		if err := rows.Scan(&e.Seq, &e.TurnID, &e.Type, &data, &ms); err != nil {
			return nil, fmt.Errorf("events: %w", err)
		}
		e.Data = json.RawMessage(data)
		e.Time = time.UnixMilli(ms).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	return out, nil
}

// LastSeq returns the seq of a session's last committed event (0 when none).
func (s *Store) LastSeq(ctx context.Context, sessionID string) (int64, error) {
	var seq int64
	err := s.rdb.QueryRowContext(ctx, "SELECT last_seq FROM sessions WHERE id = ?", sessionID).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("last seq: session %q: %w", sessionID, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("last seq: %w", err)
	}
	return seq, nil
}

// queryer is a read pool or a read transaction.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// sessionPK returns the row key of a session.
func sessionPK(ctx context.Context, q queryer, id string) (int64, error) {
	var pk int64
	err := q.QueryRowContext(ctx, "SELECT pk FROM sessions WHERE id = ?", id).Scan(&pk)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("session %q: %w", id, ErrNotFound)
	}
	return pk, err
}

// Ledger is a session's call ledger (engine.Ledger): the durable record of
// the tool calls that began to run, kept as their tool_started events. It
// is the store's side of the rule that a call runs at most once, even
// across kill -9.
type Ledger struct {
	s         *Store
	sessionID string
}

// Ledger returns the call ledger of a session.
func (s *Store) Ledger(sessionID string) Ledger { return Ledger{s: s, sessionID: sessionID} }

// Begin returns once the tool_started event of call callID in turn turnID
// is committed: it waits for the writes queued before it, then reads the
// row back. An event that was refused or whose commit failed is not there,
// and Begin says so: the call must not run.
func (l Ledger) Begin(ctx context.Context, turnID, callID string) error {
	if err := l.s.Flush(ctx); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	pk, err := sessionPK(ctx, l.s.rdb, l.sessionID)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	var n int
	err = l.s.rdb.QueryRowContext(ctx,
		"SELECT count(*) FROM events WHERE session_pk = ? AND turn_id = ? AND type = ? AND json_extract(data, '$.reqId') = ?",
		pk, turnID, typeToolStarted, callID).Scan(&n)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("ledger: %w: no committed %s for call %s of turn %s", ErrNotFound, typeToolStarted, callID, turnID)
	}
	return nil
}

// Started returns the calls of turn turnID that have a tool_started event,
// whatever became of them: a call that began is never run again (a
// tool_finished committed without the history that holds its result, and
// the process died, does not make it runnable).
func (l Ledger) Started(ctx context.Context, turnID string) ([]string, error) {
	return l.s.startedCalls(ctx, l.sessionID, turnID)
}

// typeToolStarted is the event type the ledger reads.
const typeToolStarted = "tool_started"

func (s *Store) startedCalls(ctx context.Context, sessionID, turnID string) ([]string, error) {
	pk, err := sessionPK(ctx, s.rdb, sessionID)
	if err != nil {
		return nil, fmt.Errorf("started calls: %w", err)
	}
	rows, err := s.rdb.QueryContext(ctx,
		"SELECT DISTINCT json_extract(data, '$.reqId') FROM events WHERE session_pk = ? AND turn_id = ? AND type = ? ORDER BY seq",
		pk, turnID, typeToolStarted)
	if err != nil {
		return nil, fmt.Errorf("started calls: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var id sql.NullString
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("started calls: %w", err)
		}
		if id.Valid && id.String != "" {
			out = append(out, id.String)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("started calls: %w", err)
	}
	return out, nil
}
