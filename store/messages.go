package store

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"

	"github.com/zqagent/sidecar/llm"
)

// marshalHistory encodes each message without its inline attachments: only
// AttachmentRefs are stored; the bytes live under the session directory.
func marshalHistory(h []llm.Message) ([][]byte, error) {
	out := make([][]byte, len(h))
	for i, m := range h {
		m.Attachments = nil
		b, err := marshalMessage(i, m)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// marshalMessage encodes history message i (its Attachments cleared).
func marshalMessage(i int, m llm.Message) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: history message %d: %v", ErrInvalid, i, err)
	}
	return b, nil
}

// checkpoint replaces the stored history with e's, writing only the
// messages that changed since the last checkpoint (history mostly grows at
// the end; compaction rewrites it). Messages the cache says are those of
// the encoding this session last committed are not hashed again.
func (t *wtx) checkpoint(st *sessState, e *preparedEvent) error {
	msgs := e.history
	if !st.hashesKnown {
		if err := t.loadHashes(st); err != nil {
			return err
		}
	}
	old := st.hashes
	hashes := make([]uint64, len(msgs))
	reuse := 0
	if e.histPrev != 0 && e.histPrev == st.histToken {
		reuse = min(e.histSame, len(old), len(msgs))
	}
	copy(hashes, old[:reuse])
	kept := len(msgs) // the messages before kept are as they were
	for i := reuse; i < len(msgs); i++ {
		b := msgs[i]
		h := maphash.Bytes(t.w.seed, b)
		hashes[i] = h
		if i < len(old) && old[i] == h {
			continue
		}
		if i < len(old) && i < kept && !(i == 0 && isSystem(b)) {
			kept = i // rewritten (compaction); a new system prompt is no new history
		}
		if _, err := t.w.st.putMessage.ExecContext(t.ctx, st.pk, i, string(b)); err != nil {
			return fmt.Errorf("checkpoint message %d: %w", i, err)
		}
	}
	if len(old) > len(msgs) {
		if _, err := t.exec(
			"DELETE FROM messages WHERE session_pk = ? AND idx >= ?", st.pk, len(msgs)); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	if kept < len(old) {
		if err := t.dropTurnMarks(st, kept); err != nil {
			return err
		}
	}
	st.hashes = hashes // a new slice: the committed cache may share the old one
	st.hashesKnown = true
	st.histToken = e.histToken
	return nil
}

func (t *wtx) loadHashes(st *sessState) error {
	rows, err := t.query("SELECT idx, data FROM messages WHERE session_pk = ? ORDER BY idx", st.pk)
	if err != nil {
		return fmt.Errorf("load history: %w", err)
	}
	defer rows.Close()
	var hs []uint64
	for rows.Next() {
		var idx int
		var data []byte
		if err := rows.Scan(&idx, &data); err != nil {
			return fmt.Errorf("load history: %w", err)
		}
		if idx != len(hs) { // not dense: force a rewrite of everything after
			break
		}
		hs = append(hs, maphash.Bytes(t.w.seed, data))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load history: %w", err)
	}
	st.hashes, st.hashesKnown, st.histToken = hs, true, 0
	return nil
}

// Messages returns the session's last checkpointed history, in order.
// Attachments appear only as AttachmentRefs.
func (s *Store) Messages(ctx context.Context, sessionID string) ([]llm.Message, error) {
	pk, err := sessionPK(ctx, s.rdb, sessionID)
	if err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	return messages(ctx, s.rdb, pk)
}

func messages(ctx context.Context, q queryer, pk int64) ([]llm.Message, error) {
	rows, err := q.QueryContext(ctx, "SELECT data FROM messages WHERE session_pk = ? ORDER BY idx", pk)
	if err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	defer rows.Close()
	out := []llm.Message{}
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("messages: %w", err)
		}
		var m llm.Message
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("messages: %w: %v", ErrCorrupt, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	return out, nil
}

// CheckpointSeq returns the seq of the event whose transaction wrote the
// current history checkpoint (0 when none).
func (s *Store) CheckpointSeq(ctx context.Context, sessionID string) (int64, error) {
	var seq int64
	err := s.rdb.QueryRowContext(ctx, "SELECT checkpoint_seq FROM sessions WHERE id = ?", sessionID).Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("checkpoint seq: %w", notFound(err, "session", sessionID))
	}
	return seq, nil
}
