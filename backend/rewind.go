package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/vcs"
)

// This file is session.rewind: the history goes back to just before a
// turn and, with files, the workspace to that turn's pre-turn snapshot.
//
// A turn is found in the history by its input message (llm.Message.TurnID,
// set by the engine), and in the snapshots by the turn id each numbered
// snapshot records (vcs.Turn.TurnID): expiry writes the kept commits again,
// so no commit id is kept anywhere. The session's turns, in order, are its
// turn_start events, less those an earlier session_rewound dropped.
//
// Order of a rewind with files, each step durable before the next:
//  1. the rewind intent (store.BeginRewind);
//  2. the workspace restore (vcs.SessionVCS.RestoreBefore, which records the
//     current state as a snapshot first and checks the clobber guard under
//     the session's vcs lock);
//  3. one transaction: the rewound history, the session_rewound event and
//     the intent's deletion.
//
// kill -9 before 3 leaves the old history and event log (never a mix of
// old and new there); an intent still stored at the next start means the
// restore may have been cut off: New records rewind_interrupted for it
// (once), and the same session.rewind finishes it (files already restored
// are not touched). While a rewind runs, turn.start is refused with
// -32003 (Session.rewinding).

// ErrRewindBusy is session.rewind's refusal while a turn runs, waits
// (queued, or with pending requests) or another rewind runs.
var ErrRewindBusy = errors.New("the session is busy")

// ErrTurnNotInHistory is session.rewind's refusal of a turn whose input
// message the history no longer holds (compacted into a summary, or the
// turn never reached the model).
var ErrTurnNotInHistory = errors.New("the turn is not in the session's history")

// SessionRewind is session.rewind.
func (b *Backend) SessionRewind(ctx context.Context, p protocol.SessionRewindParams) (protocol.SessionRewindResult, error) {
	h, err := b.host(ctx, p.SessionID)
	if err != nil {
		return protocol.SessionRewindResult{}, err
	}
	release, err := h.beginRewind(ctx, p.DryRun)
	if err != nil {
		return protocol.SessionRewindResult{}, err
	}
	defer release()
	st := b.opts.Store
	if err := st.Flush(ctx); err != nil { // the last turn's checkpoint is stored
		return protocol.SessionRewindResult{}, err
	}
	plan, err := b.rewindPlan(ctx, h, p.TurnID)
	if err != nil {
		return protocol.SessionRewindResult{}, err
	}
	res := plan.result(p.DryRun)
	var sv *vcs.SessionVCS
	if p.Files {
		if err := b.checkCopiedTurns(ctx, h.id, plan.droppedIDs()); err != nil {
			return protocol.SessionRewindResult{}, err
		}
		if sv, err = b.vcsOf(ctx, p.SessionID); err != nil {
			return protocol.SessionRewindResult{}, err
		}
		if res.SnapshotTurn, err = snapshotTurnOf(ctx, sv, p.TurnID, plan.droppedIDs()); err != nil {
			return protocol.SessionRewindResult{}, err
		}
	}
	if res.SnapshotTurn > 0 {
		// What would change, and the guard, before anything does.
		preview, err := sv.RestoreBefore(ctx, res.SnapshotTurn, vcs.RewindOptions{DryRun: true})
		if err != nil {
			return protocol.SessionRewindResult{}, rewindFileError(p.TurnID, err)
		}
		fillFiles(&res, preview)
		if len(preview.Clobbered) > 0 && !p.Force && !p.DryRun {
			return protocol.SessionRewindResult{}, clobberRefusal(p.SessionID, &vcs.ClobberError{Files: preview.Clobbered})
		}
	}
	if p.DryRun {
		return res, nil
	}
	if res.SnapshotTurn > 0 {
		intent, _ := json.Marshal(rewindIntentData{SnapshotTurn: res.SnapshotTurn, DroppedTurns: plan.droppedIDs()}) // ints and strings: cannot fail
		if err := st.BeginRewind(ctx, store.RewindIntent{SessionID: h.id, ToTurnID: p.TurnID, Data: intent}); err != nil {
			return protocol.SessionRewindResult{}, err
		}
		done, err := sv.RestoreBefore(ctx, res.SnapshotTurn, vcs.RewindOptions{Force: p.Force})
		if err != nil {
			if eerr := st.EndRewind(context.WithoutCancel(ctx), h.id); eerr != nil {
				b.log.Warn("end rewind", "session", h.id, "err", eerr)
			}
			var ce *vcs.ClobberError
			if errors.As(err, &ce) {
				return protocol.SessionRewindResult{}, clobberRefusal(p.SessionID, ce)
			}
			return protocol.SessionRewindResult{}, fmt.Errorf("%w (the workspace may be partly restored and the history is unchanged: session.rewind again finishes it)", rewindFileError(p.TurnID, err))
		}
		fillFiles(&res, done)
	}
	ev := engine.Event{Type: protocol.EventSessionRewound, Data: protocol.SessionRewoundData{ToTurnID: p.TurnID, DroppedTurns: plan.droppedIDs(), Files: res.Files}}
	if err := h.recordRewound(ctx, ev, plan.history); err != nil {
		return protocol.SessionRewindResult{}, err
	}
	// The loaded engine holds the old history: the next use builds one
	// from the store's.
	h.dropEngine()
	return res, nil
}

// rewindIntentData is what a rewind intent records.
type rewindIntentData struct {
	SnapshotTurn int      `json:"snapshotTurn"`
	DroppedTurns []string `json:"droppedTurns"`
}

// rewindPlan is what a rewind drops from the history.
type rewindPlan struct {
	toTurnID string
	input    llm.Message   // the turn's input message
	history  []llm.Message // the history just before the turn
	dropped  []protocol.RewoundTurn
	messages int // messages dropped
}

func (p rewindPlan) droppedIDs() []string {
	ids := make([]string, len(p.dropped))
	for i, d := range p.dropped {
		ids[i] = d.TurnID
	}
	return ids
}

// result is the plan's result, without files.
func (p rewindPlan) result(dryRun bool) protocol.SessionRewindResult {
	atts := make([]protocol.AttachmentRef, len(p.input.AttachmentRefs))
	for i, a := range p.input.AttachmentRefs {
		atts[i] = attachmentRef(a)
	}
	return protocol.SessionRewindResult{ToTurnID: p.toTurnID, Input: p.input.Content, Attachments: atts,
		DroppedTurns: p.dropped, DroppedMessages: p.messages, Files: []protocol.FileChange{}, Skipped: []string{},
		Clobbered: []string{}, DryRun: dryRun}
}

// fillFiles sets a rewind's files from its restore's: A re-created, M
// overwritten, D deleted.
func fillFiles(r *protocol.SessionRewindResult, res vcs.RewindResult) {
	files := []protocol.FileChange{}
	for _, p := range res.Restored {
		st := "A"
		if slices.Contains(res.Overwritten, p) {
			st = "M"
		}
		files = append(files, protocol.FileChange{Path: p, Status: st})
	}
	for _, p := range res.Deleted {
		files = append(files, protocol.FileChange{Path: p, Status: "D"})
	}
	slices.SortFunc(files, func(a, b protocol.FileChange) int { return strings.Compare(a.Path, b.Path) })
	r.Files, r.Skipped, r.Clobbered = files, res.Skipped, res.Clobbered
}

// rewindPlan reads the session's turns and history and cuts the history
// just before turnID's input message.
func (b *Backend) rewindPlan(ctx context.Context, h *Session, turnID string) (rewindPlan, error) {
	st := b.opts.Store
	evs, err := st.EventsOfTypes(ctx, h.id, string(protocol.EventTurnStart), string(protocol.EventSessionRewound))
	if err != nil {
		return rewindPlan{}, err
	}
	turns := liveTurns(evs)
	at := slices.IndexFunc(turns, func(t protocol.RewoundTurn) bool { return t.TurnID == turnID })
	if at < 0 {
		return rewindPlan{}, fmt.Errorf("%w: turn %s is not a turn of session %s's history (unknown, or dropped by an earlier rewind)", ErrNotFound, turnID, h.id)
	}
	msgs, err := st.Messages(ctx, h.id)
	if err != nil {
		return rewindPlan{}, err
	}
	cut := slices.IndexFunc(msgs, func(m llm.Message) bool { return m.Role == llm.RoleUser && m.TurnID == turnID })
	if cut < 0 {
		return rewindPlan{}, fmt.Errorf("%w: %w: turn %s's input is not in session %s's history (its messages were compacted into a summary, or the turn never reached the model); rewind to a later turn",
			ErrConflict, ErrTurnNotInHistory, turnID, h.id)
	}
	return rewindPlan{toTurnID: turnID, input: msgs[cut], history: slices.Clip(msgs[:cut]), dropped: turns[at:], messages: len(msgs) - cut}, nil
}

// liveTurns is the session's turns in the order they started, each once,
// less those a session_rewound dropped, from its turn_start and
// session_rewound events (in seq order).
func liveTurns(evs []store.Event) []protocol.RewoundTurn {
	var turns []protocol.RewoundTurn
	for _, ev := range evs {
		switch protocol.EventType(ev.Type) {
		case protocol.EventTurnStart:
			if ev.TurnID == "" || slices.ContainsFunc(turns, func(t protocol.RewoundTurn) bool { return t.TurnID == ev.TurnID }) {
				continue // a retry or resume of a turn listed already
			}
			var d protocol.TurnStartData
			_ = json.Unmarshal(ev.Data, &d) // a bad one has no input
			turns = append(turns, protocol.RewoundTurn{TurnID: ev.TurnID, Input: d.Input})
		case protocol.EventSessionRewound:
			var d protocol.SessionRewoundData
			if json.Unmarshal(ev.Data, &d) != nil {
				continue
			}
			if i := slices.IndexFunc(turns, func(t protocol.RewoundTurn) bool { return t.TurnID == d.ToTurnID }); i >= 0 {
				turns = turns[:i]
			}
		}
	}
	return turns
}

// lastFinishedLiveTurn is the last turn of the session's history (not
// dropped by a rewind) that started and ended ("" when none): what
// session.fork forks when no turn is named.
func (b *Backend) lastFinishedLiveTurn(ctx context.Context, sessionID string) (string, error) {
	evs, err := b.opts.Store.EventsOfTypes(ctx, sessionID, string(protocol.EventTurnStart), string(protocol.EventTurnEnd), string(protocol.EventSessionRewound))
	if err != nil {
		return "", err
	}
	ended := map[string]bool{}
	for _, ev := range evs {
		if ev.Type == string(protocol.EventTurnEnd) {
			ended[ev.TurnID] = true
		}
	}
	turns := liveTurns(evs)
	for i := len(turns) - 1; i >= 0; i-- {
		if ended[turns[i].TurnID] {
			return turns[i].TurnID, nil
		}
	}
	return "", nil
}

// snapshotTurnOf is the number of the snapshot whose pre-turn state a
// rewind dropping the turns dropped (to turnID) brings back: the lowest
// numbered snapshot of a dropped turn (0: none changed files). A snapshot
// that may hold a dropped turn's changes and cannot be read (expired, or
// taken before snapshots recorded their turn) refuses the rewind.
func snapshotTurnOf(ctx context.Context, sv *vcs.SessionVCS, turnID string, dropped []string) (int, error) {
	if !sv.Enabled() {
		return 0, fmt.Errorf("session.rewind files of session %s: %w", sv.SessionID(), vcs.ErrDisabled)
	}
	list, err := sv.ListTurns(ctx)
	if err != nil {
		return 0, fmt.Errorf("session.rewind: %w", err)
	}
	return pickSnapshotTurn(list, sv.SessionID(), turnID, dropped)
}

// pickSnapshotTurn is snapshotTurnOf over the session's snapshots (list,
// vcs.turns' listing).
func pickSnapshotTurn(list []vcs.Turn, sessionID, turnID string, dropped []string) (int, error) {
	byNum := map[int]vcs.Turn{}
	last, first := 0, 0
	for _, t := range list {
		byNum[t.Number] = t
		last = max(last, t.Number)
		if t.TurnID != "" && slices.Contains(dropped, t.TurnID) && (first == 0 || t.Number < first) {
			first = t.Number
		}
	}
	upper := last
	if first > 0 {
		upper = first - 1
	}
	// The snapshots after the last one known to belong to a kept turn, and
	// before first, may hold a dropped turn's changes too.
	known := 0
	for _, t := range list {
		if t.TurnID != "" && !slices.Contains(dropped, t.TurnID) && t.Number <= upper {
			known = max(known, t.Number)
		}
	}
	if n := known + 1; n <= upper { // the first such snapshot refuses
		t, ok := byNum[n]
		if !ok || t.Expired {
			return 0, fmt.Errorf("%w: rewinding the files to before turn %s needs snapshot %d of session %s, which was collected to keep the project's snapshot storage under its cap",
				vcs.ErrTurnExpired, turnID, n, sessionID)
		}
		return 0, fmt.Errorf("%w: snapshot %d of session %s does not say which turn it belongs to (taken by an older version): the files of turn %s cannot be rewound; rewind with files: false, or use vcs.restore",
			ErrConflict, n, sessionID, turnID)
	}
	if first > 0 && byNum[first].Expired {
		return 0, fmt.Errorf("%w: the snapshot of turn %s (snapshot %d of session %s) was collected to keep the project's snapshot storage under its cap; rewind with files: false to rewind only the history",
			vcs.ErrTurnExpired, turnID, first, sessionID)
	}
	return first, nil
}

// checkCopiedTurns refuses a rewind of a fork's files that drops a turn
// the fork copied from its source: that turn's snapshots are the source
// session's, the fork has none of them, so its files cannot be brought
// back (and no snapshot would wrongly read as "changed no file"). The
// copied turns are those that started before the fork's turn ended (the
// fork keeps the source's seqs). The same for an imported session's turns
// (those that started at or before its ImportedSeq): a file carries no
// snapshots.
func (b *Backend) checkCopiedTurns(ctx context.Context, sessionID string, dropped []string) error {
	st := b.opts.Store
	ss, err := st.Session(ctx, sessionID)
	if err != nil {
		return err
	}
	if ss.ForkedFrom == "" && ss.ImportedSeq == 0 {
		return nil
	}
	evs, err := st.EventsOfTypes(ctx, sessionID, string(protocol.EventTurnStart), string(protocol.EventTurnEnd))
	if err != nil {
		return err
	}
	if ss.ImportedSeq > 0 {
		// An imported session: its turns up to the import came from a file,
		// which carries no snapshots.
		for _, ev := range evs {
			if ev.Type == string(protocol.EventTurnStart) && ev.Seq <= ss.ImportedSeq && slices.Contains(dropped, ev.TurnID) {
				return fmt.Errorf("%w: turn %s came with the import of session %s from a file, which carries no snapshots, so its files cannot be rewound to before it; rewind with files: false to rewind only the history",
					ErrConflict, ev.TurnID, sessionID)
			}
		}
		return nil
	}
	end := int64(-1) // not found: every turn counts as copied (fail closed)
	for _, ev := range evs {
		if ev.Type == string(protocol.EventTurnEnd) && ev.TurnID == ss.ForkedTurn {
			end = ev.Seq
			break
		}
	}
	for _, ev := range evs {
		if ev.Type == string(protocol.EventTurnStart) && (end < 0 || ev.Seq < end) && slices.Contains(dropped, ev.TurnID) {
			return fmt.Errorf("%w: turn %s came with the fork of session %s: its snapshots are that session's, so this fork's files cannot be rewound to before it; rewind with files: false to rewind only the history",
				ErrConflict, ev.TurnID, ss.ForkedFrom)
		}
	}
	return nil
}

// rewindFileError says which turn a restore error is about.
func rewindFileError(turnID string, err error) error {
	return fmt.Errorf("session.rewind files to before turn %s: %w", turnID, err)
}

// clobberRefusal is the -32003 of the clobber guard, naming the files in
// its message and error.data.files.
func clobberRefusal(sessionID string, ce *vcs.ClobberError) error {
	return fmt.Errorf("%w: session %s: %d file(s) changed after the session's last snapshot would be overwritten or deleted (force: true rewinds anyway): %w",
		ErrConflict, sessionID, len(ce.Files), ce)
}

// beginRewind checks that the session is at rest (no turn runs, waits or
// is queued, no request is pending) and, unless dryRun, holds off turns
// until release. The message says what keeps the session busy.
func (h *Session) beginRewind(ctx context.Context, dryRun bool) (release func(), err error) {
	runner, err := h.checkRewind(ctx, dryRun)
	if err != nil || dryRun {
		return func() {}, err
	}
	release = func() {
		h.mu.Lock()
		h.rewinding = false
		h.mu.Unlock()
	}
	if runner != nil {
		// The last turn ended; its runner is finishing (naming the session,
		// closing the turn's requests). No turn can join it now.
		select {
		case <-runner:
		case <-ctx.Done():
			release()
			return nil, ctx.Err()
		}
	}
	return release, nil
}

// checkRewind is beginRewind's check; unless dryRun it sets rewinding and
// returns the runner's done channel (nil when no runner runs).
func (h *Session) checkRewind(ctx context.Context, dryRun bool) (<-chan struct{}, error) {
	pend, err := h.s.opts.Store.PendingRequests(ctx, h.id)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var why []string
	switch {
	case h.rewinding:
		why = append(why, "another rewind runs")
	case h.state.Busy() && h.current != "":
		why = append(why, fmt.Sprintf("turn %s is running", h.current))
	case h.state.Busy() || h.enqueuing > 0:
		why = append(why, "a turn is starting")
	}
	if n := len(h.queue); n > 0 {
		why = append(why, fmt.Sprintf("%d turn(s) are queued (%s)", n, strings.Join(h.queueIDsLocked(), ", ")))
	}
	if len(pend) > 0 {
		ids := make([]string, len(pend))
		for i, p := range pend {
			ids[i] = p.RequestID
		}
		why = append(why, fmt.Sprintf("%d request(s) are pending (%s)", len(pend), strings.Join(ids, ", ")))
	}
	if h.state == StateSuspended {
		why = append(why, "its turn is suspended, waiting for answers")
	}
	if len(why) > 0 {
		return nil, fmt.Errorf("%w: %w: session %s cannot be rewound now: %s; interrupt the turn (turn.interrupt) or wait for it to end",
			ErrConflict, ErrRewindBusy, h.id, strings.Join(why, "; "))
	}
	if dryRun {
		return nil, nil
	}
	h.rewinding = true
	return h.runDone, nil
}

// enterEnqueue counts an Enqueue between its check and its push, or
// refuses it while a rewind runs.
func (h *Session) enterEnqueue() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rewinding {
		return fmt.Errorf("%w: %w: session %s is being rewound; start the turn when session.rewind has answered", ErrConflict, ErrRewindBusy, h.id)
	}
	h.enqueuing++
	return nil
}

// leaveEnqueue ends enterEnqueue.
func (h *Session) leaveEnqueue() {
	h.mu.Lock()
	h.enqueuing--
	h.mu.Unlock()
}

// recordRewound stores the session_rewound event with the rewound history
// and the end of the rewind intent, in one transaction, and waits for the
// commit (it is broadcast after it).
func (h *Session) recordRewound(ctx context.Context, ev engine.Event, history []llm.Message) error {
	in, err := durableInput(ev, nil, "")
	if err != nil {
		return err
	}
	in.History = history
	if in.History == nil {
		in.History = []llm.Message{}
	}
	stored := make(chan error, 1)
	h.deltas.cut()
	h.s.opts.Store.Enqueue(h.id, in, func(e store.Event, err error) {
		h.committedEvent(e, err)
		stored <- err
	})
	select {
	case err := <-stored:
		if err != nil {
			return fmt.Errorf("store the rewind: %w", err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// dropEngine closes the session's loaded engine (the next use builds one
// from the store). The caller holds off turns (beginRewind).
func (h *Session) dropEngine() {
	h.loadMu.Lock()
	defer h.loadMu.Unlock()
	h.mu.Lock()
	eng := h.eng
	h.eng = nil
	h.mu.Unlock()
	if eng == nil {
		return
	}
	if err := eng.Close(); err != nil && !errors.Is(err, engine.ErrClosed) {
		h.s.log.Warn("close engine", "session", h.id, "err", err)
	}
}

// ReportInterruptedRewinds records rewind_interrupted for each rewind
// intent a dead process left (its file restore may have been cut off),
// deleting the intent in the event's transaction, so each is reported
// once; its message is in the session's language (lang). New calls it at
// start.
func ReportInterruptedRewinds(ctx context.Context, st *store.Store, lang func(sessionID string) string, log *slog.Logger) error {
	intents, err := st.RewindIntents(ctx)
	if err != nil {
		return err
	}
	for _, in := range intents {
		var d rewindIntentData
		_ = json.Unmarshal(in.Data, &d) // a bad record still gets its report
		data := protocol.RewindInterruptedData{ToTurnID: in.ToTurnID, SnapshotTurn: d.SnapshotTurn, StartedAt: in.CreatedAt.Format(time.RFC3339Nano),
			Message: engine.ReasonMessage(lang(in.SessionID), "rewind_interrupted")}
		ev := engine.Event{Type: protocol.EventRewindInterrupted, Data: data}
		rec, err := durableInput(ev, nil, "")
		if err != nil {
			return err
		}
		if _, err := st.Append(ctx, in.SessionID, rec); err != nil {
			return fmt.Errorf("report interrupted rewind of session %s: %w", in.SessionID, err)
		}
		log.Warn("a rewind was interrupted by the last exit; its file restore may be partial", "session", in.SessionID, "toTurn", in.ToTurnID, "snapshotTurn", d.SnapshotTurn)
	}
	return nil
}
