package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/zqagent/sidecar/lockfile"
)

// DBFile is the database file name inside the data directory.
const DBFile = "zqagent.db"

// Options tune a Store. The zero value is ready to use.
type Options struct {
	// BusyTimeout is SQLite's busy_timeout (default 5s). With one writer it
	// only matters for checkpoints and other processes.
	BusyTimeout time.Duration
	// QueueSize bounds the writer's queue (default 4096); Enqueue blocks while
	// it is full.
	QueueSize int
	// MaxBatch bounds how many queued writes one transaction commits
	// (default 2048).
	MaxBatch int
	// ReadConns is the size of the read pool (default 4).
	ReadConns int
	// Logger receives errors nobody else can see (default slog.Default()).
	Logger *slog.Logger
}

// defaultBusy is the default busy_timeout.
const defaultBusy = 5 * time.Second

func (o *Options) fill() {
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = defaultBusy
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 4096
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 2048
	}
	if o.ReadConns <= 0 {
		o.ReadConns = 4
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Store is the sidecar's database. Its methods are safe for concurrent use.
type Store struct {
	dir  string
	path string
	opts Options

	lock *lockfile.Lock // held from Open to Close
	wdb  *sql.DB        // one connection, used only by the writer goroutine
	rdb  *sql.DB        // read-only pool
	w    *writer
	hist historyCache // encoded checkpoints, per session

	// mu guards closed. Senders to w.ops hold it for reading while they send,
	// so Close (which takes it for writing) never closes the queue under them.
	mu     sync.RWMutex
	closed bool

	closeOnce sync.Once
	closeErr  error
}

// dsn returns the DSN of the database file with the pragmas every pooled
// connection must run. readOnly adds query_only; the writer's DSN makes BEGIN
// immediate.
func dsn(path string, busy time.Duration, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
	}
	// A plain file name (not a file: URI): the driver strips and applies the
	// query, and the path needs no URI escaping on any OS.
	return path + "?" + q.Encode()
}

// Open opens (creating if needed) the database in dir, checks its integrity,
// runs the pending migrations (each in a transaction) and starts the writer.
// A database written by a newer version is refused with ErrNewerSchema; a
// damaged one with ErrCorrupt, both naming the file.
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	opts.fill()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(abs, sessionsDir), 0o700); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	path := filepath.Join(abs, DBFile)
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("open store %s: %w: the path may not contain ? or #", path, ErrInvalid)
	}
	lock, err := acquireLock(abs)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s, err := open(ctx, abs, path, lock, opts)
	if err != nil {
		_ = lock.Release()
		return nil, err
	}
	return s, nil
}

func open(ctx context.Context, abs, path string, lock *lockfile.Lock, opts Options) (*Store, error) {
	s := &Store{dir: abs, path: path, opts: opts, lock: lock}
	var err error
	s.wdb, err = sql.Open("sqlite", dsn(path, opts.BusyTimeout, false))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxLifetime(0)
	s.wdb.SetConnMaxIdleTime(0)
	if err := s.prepare(ctx); err != nil {
		s.wdb.Close()
		return nil, err
	}
	_ = os.Chmod(path, 0o600) // best effort: the file holds the user's conversations

	s.rdb, err = sql.Open("sqlite", dsn(path, opts.BusyTimeout, true))
	if err != nil {
		s.wdb.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s.rdb.SetMaxOpenConns(opts.ReadConns)
	s.rdb.SetMaxIdleConns(opts.ReadConns)

	conn, err := s.wdb.Conn(ctx)
	if err != nil {
		s.rdb.Close()
		s.wdb.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s.w, err = startWriter(conn, opts)
	if err != nil {
		conn.Close()
		s.rdb.Close()
		s.wdb.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := s.sweepOrphanDirs(ctx); err != nil {
		opts.Logger.Warn("store: sweeping orphan session directories", "err", err)
	}
	return s, nil
}

// prepare checks integrity and migrates, on the write connection.
func (s *Store) prepare(ctx context.Context) error {
	var res string
	if err := s.wdb.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&res); err != nil {
		if isCorruptErr(err) {
			return fmt.Errorf("open store %s: %w: %v", s.path, ErrCorrupt, err)
		}
		return fmt.Errorf("open store %s: %w", s.path, err)
	}
	if res != "ok" {
		return fmt.Errorf("open store %s: %w: quick_check: %s", s.path, ErrCorrupt, res)
	}
	if err := migrate(ctx, s.wdb, migrations); err != nil {
		if errors.Is(err, ErrNewerSchema) {
			return fmt.Errorf("open store %s: %w", s.path, err)
		}
		if isCorruptErr(err) {
			return fmt.Errorf("open store %s: %w: %v", s.path, ErrCorrupt, err)
		}
		return fmt.Errorf("open store %s: migrate: %w", s.path, err)
	}
	return nil
}

// isCorruptErr reports whether err is SQLite's "not a database" or
// "malformed" error.
func isCorruptErr(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "not a database") || strings.Contains(msg, "malformed") ||
		strings.Contains(msg, "SQLITE_CORRUPT") || strings.Contains(msg, "SQLITE_NOTADB")
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Dir returns the data directory.
func (s *Store) Dir() string { return s.dir }

// Close commits everything queued, stops the writer and closes the
// connections. It is safe to call more than once; later calls return the
// first result. It must not be called from a done callback.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		err := s.w.stop()
		err = errors.Join(err, s.rdb.Close(), s.wdb.Close(), s.lock.Release())
		if err != nil {
			s.closeErr = fmt.Errorf("close store %s: %w", s.path, err)
		}
	})
	return s.closeErr
}

// Vacuum checkpoints the WAL and rebuilds the file, returning freed pages to
// the file system. It runs on the writer, between batches.
func (s *Store) Vacuum(ctx context.Context) error {
	err := s.submitRaw(ctx, func(ctx context.Context, c *sql.Conn) error {
		if _, err := c.ExecContext(ctx, "VACUUM"); err != nil {
			return err
		}
		_, err := c.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
		return err
	})
	if err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	return nil
}

// IntegrityCheck runs the full PRAGMA integrity_check and returns ErrCorrupt
// with SQLite's findings when it is not "ok".
func (s *Store) IntegrityCheck(ctx context.Context) error {
	rows, err := s.rdb.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("integrity check %s: %w", s.path, err)
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return fmt.Errorf("integrity check %s: %w", s.path, err)
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("integrity check %s: %w", s.path, err)
	}
	if len(msgs) != 1 || msgs[0] != "ok" {
		return fmt.Errorf("integrity check %s: %w: %s", s.path, ErrCorrupt, strings.Join(msgs, "; "))
	}
	return nil
}
