package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"
)

// op is one queued write. Exactly one of evs (an event append for
// sessionID; or seal, which makes evs when the op is first applied), fn (a
// transaction body) or raw (a statement that must run outside a
// transaction, such as VACUUM) is set; none is a flush marker.
type op struct {
	sessionID string
	evs       []preparedEvent
	fn        func(t *wtx) error
	raw       func(ctx context.Context, c *sql.Conn) error
	seal      func() EventInput // EnqueueSealed: evs is made from it when first applied
	sealErr   error             // why seal's event was refused
	done      func(evs []Event, err error)

	res []Event // written by the writer goroutine only
	err error
}

// writer owns the write connection. Only its goroutine touches conn, st
// and cache.
type writer struct {
	conn  *sql.Conn
	st    writerStmts // prepared on conn
	ops   chan *op
	max   int
	log   *slog.Logger
	seed  maphash.Seed
	cache map[string]*sessState // committed per-session state, by session id
	wg    sync.WaitGroup
}

// sessState is what the writer keeps per session: the row key, the last
// seq, the checkpoint's seq and the hashes of the stored history messages
// (hashes is nil until first needed).
type sessState struct {
	pk            int64
	lastSeq       int64
	checkpointSeq int64
	hashes        []uint64
	hashesKnown   bool
	histToken     uint64 // the encoding hashes were taken of (encodedCheckpoint); 0: unknown
	dirty         bool   // last_seq/checkpoint_seq changed in this transaction
}

const maxCachedSessions = 4096

func startWriter(conn *sql.Conn, opts Options) (*writer, error) {
	st, err := prepareWriterStmts(context.Background(), conn)
	if err != nil {
		return nil, err
	}
	w := &writer{
		conn:  conn,
		st:    st,
		ops:   make(chan *op, opts.QueueSize),
		max:   opts.MaxBatch,
		log:   opts.Logger,
		seed:  maphash.MakeSeed(),
		cache: make(map[string]*sessState),
	}
	w.wg.Go(w.run)
	return w, nil
}

// stop ends the queue (the caller guarantees no more sends), waits for the
// writer to commit what is left and closes the connection.
func (w *writer) stop() error {
	close(w.ops)
	w.wg.Wait()
	return errors.Join(w.st.close(), w.conn.Close())
}

func (w *writer) run() {
	ctx := context.Background() // the writer's life is bounded by stop
	batch := make([]*op, 0, w.max)
	for o := range w.ops {
		if o.raw != nil {
			w.runRaw(ctx, o)
			continue
		}
		batch = append(batch[:0], o)
		var raw *op
	drain:
		for len(batch) < w.max {
			select {
			case o2, ok := <-w.ops:
				if !ok {
					break drain
				}
				if o2.raw != nil {
					raw = o2
					break drain
				}
				batch = append(batch, o2)
			default:
				break drain
			}
		}
		w.commit(ctx, batch)
		clear(batch)
		if raw != nil {
			w.runRaw(ctx, raw)
		}
	}
}

func (w *writer) runRaw(ctx context.Context, o *op) {
	o.err = o.raw(ctx, w.conn)
	finish(o)
}

// commit writes a batch in one transaction. When anything in it fails, the
// transaction is rolled back and each op is retried alone, so one bad op
// fails only itself.
func (w *writer) commit(ctx context.Context, batch []*op) {
	err := w.try(ctx, batch)
	if err != nil && len(batch) > 1 {
		for _, o := range batch {
			w.try(ctx, []*op{o}) // sets o.err
		}
	}
	for _, o := range batch {
		finish(o)
	}
}

func finish(o *op) {
	if o.done == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			slog.Error("store: panic in a done callback", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	o.done(o.res, o.err)
}

// try runs ops in one transaction. On failure every op's err is set
// (the failing op's to its own error) and nothing is committed.
func (w *writer) try(ctx context.Context, ops []*op) (err error) {
	t := &wtx{ctx: ctx, w: w, touched: make(map[string]*sessState)}
	defer func() {
		if err != nil {
			for _, o := range ops {
				o.res = nil
				if o.err == nil {
					o.err = err
				}
			}
		}
	}()
	for _, o := range ops {
		o.res, o.err = nil, nil
	}
	if _, err = w.st.begin.ExecContext(ctx); err != nil {
		// A transaction a failed ROLLBACK left open: end it, begin again.
		_, _ = w.st.rollback.ExecContext(ctx)
		if _, err = w.st.begin.ExecContext(ctx); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
	}
	rollback := func() { _, _ = w.st.rollback.ExecContext(ctx) }
	for _, o := range ops {
		if e := t.apply(o); e != nil {
			o.err = e
			rollback()
			return e
		}
	}
	if err = t.flushSessions(); err != nil {
		rollback()
		return err
	}
	if _, err = w.st.commit.ExecContext(ctx); err != nil {
		// A failed COMMIT (SQLITE_BUSY) leaves the transaction open.
		rollback()
		return fmt.Errorf("commit: %w", err)
	}
	t.committed()
	return nil
}

// wtx is one writer transaction and the tentative per-session state it
// changes; the state reaches the writer's cache only after the commit.
type wtx struct {
	ctx     context.Context
	w       *writer
	touched map[string]*sessState // nil value: deleted in this transaction
	after   []func()
	now     time.Time
}

// apply runs one op in the transaction. An error it returns fails the
// whole batch (which is then retried op by op); a refusal (an error raised
// before the op wrote anything) fails only the op.
func (t *wtx) apply(o *op) (err error) {
	defer func() {
		if r := recover(); r != nil { // a broken invariant must not kill the writer
			err = fmt.Errorf("store: panic in write: %v", r)
			t.w.log.Error("store: panic in write", "panic", r, "stack", string(debug.Stack()))
		}
		var rf refusal
		if errors.As(err, &rf) {
			o.err, o.res, err = rf.err, nil, nil
		}
	}()
	if o.seal != nil || o.sealErr != nil {
		if err := o.sealNow(); err != nil {
			return refuse(err)
		}
	}
	switch {
	case o.evs != nil:
		o.res, err = t.appendEvents(o.sessionID, o.evs)
		return err
	case o.fn != nil:
		return o.fn(t)
	}
	return nil // flush marker
}

// refusal wraps an error raised before an op wrote anything: it fails that
// op only, and the rest of the batch commits.
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }

// refuse marks err as raised before any write of the op.
func refuse(err error) error {
	if err == nil {
		return nil
	}
	return refusal{err}
}

// nowMS is the transaction's clock, in unix milliseconds.
func (t *wtx) nowMS() int64 {
	if t.now.IsZero() {
		t.now = time.Now()
	}
	return t.now.UnixMilli()
}

// session returns the tentative state of a session, loading it when needed.
func (t *wtx) session(id string) (*sessState, error) {
	if st, ok := t.touched[id]; ok {
		if st == nil {
			return nil, fmt.Errorf("session %q: %w", id, ErrNotFound)
		}
		return st, nil
	}
	var st sessState
	if c := t.w.cache[id]; c != nil {
		st = *c
		st.dirty = false
	} else {
		err := t.queryRow("SELECT pk, last_seq, checkpoint_seq FROM sessions WHERE id = ?", id).
			Scan(&st.pk, &st.lastSeq, &st.checkpointSeq)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("session %q: %w", id, ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("session %q: %w", id, err)
		}
	}
	t.touched[id] = &st
	return &st, nil
}

// forget marks a session deleted in this transaction.
func (t *wtx) forget(id string) { t.touched[id] = nil }

// flushSessions writes the batch's last seqs before the commit.
func (t *wtx) flushSessions() error {
	for id, st := range t.touched {
		if st == nil || !st.dirty {
			continue
		}
		if _, err := t.w.st.updSession.ExecContext(t.ctx,
			st.lastSeq, st.checkpointSeq, t.nowMS(), st.pk); err != nil {
			return fmt.Errorf("session %q: %w", id, err)
		}
	}
	return nil
}

func (t *wtx) committed() {
	c := t.w.cache
	if len(c) > maxCachedSessions {
		clear(c)
	}
	for id, st := range t.touched {
		if st == nil {
			delete(c, id)
			continue
		}
		st.dirty = false
		c[id] = st
	}
	for _, f := range t.after {
		f()
	}
}

// submit queues o, blocking while the queue is full (or until ctx ends).
func (s *Store) submit(ctx context.Context, o *op) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	select {
	case s.w.ops <- o:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// write runs fn in a writer transaction and waits for the commit. fn runs on
// the writer goroutine and may run more than once (a failed batch is retried
// op by op); it must only touch the transaction and its own variables.
// If ctx ends after the op was queued, write returns ctx's error but the op
// may still commit.
func (s *Store) write(ctx context.Context, fn func(t *wtx) error) error {
	return s.wait(ctx, &op{fn: fn})
}

func (s *Store) submitRaw(ctx context.Context, fn func(ctx context.Context, c *sql.Conn) error) error {
	return s.wait(ctx, &op{raw: fn})
}

func (s *Store) wait(ctx context.Context, o *op) error {
	ch := make(chan error, 1)
	o.done = func(_ []Event, err error) { ch <- err }
	if err := s.submit(ctx, o); err != nil {
		return err
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Flush waits until everything queued before it is committed (or failed).
func (s *Store) Flush(ctx context.Context) error {
	return s.wait(ctx, &op{})
}

// forgetCache drops a session id from the tentative state (a new row with
// an id the cache may still remember).
func (t *wtx) forgetCache(id string) {
	delete(t.touched, id)
	t.after = append(t.after, func() { delete(t.w.cache, id) })
}
