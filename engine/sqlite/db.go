//go:build !js

package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/migrations"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var (
	// ErrClosed is returned by every method of a closed DB, and of a Backend
	// that was closed or whose DB was closed.
	ErrClosed = errors.New("sqlite: database is closed")
	// ErrNoSession is returned when the session a call names does not exist
	// (DeleteSession of an unknown name, or a Backend whose session was
	// deleted meanwhile).
	ErrNoSession = errors.New("sqlite: no such session")
	// ErrSessionInUse is returned by Session while another Backend of the
	// same session is open: two Stores over one revision sequence would
	// hand out the same revisions twice.
	ErrSessionInUse = errors.New("sqlite: session is in use")
)

// Synchronous is SQLite's PRAGMA synchronous for the write connection.
type Synchronous string

const (
	// SyncFull fsyncs the WAL at every commit: acknowledged writes survive
	// power loss. The default.
	SyncFull Synchronous = "FULL"
	// SyncNormal leaves the WAL to the OS until a checkpoint: acknowledged
	// writes survive a crash of the process, not of the machine.
	SyncNormal Synchronous = "NORMAL"
)

// Options tune a DB. The zero value is the production setting.
type Options struct {
	// Synchronous defaults to SyncFull; see the package doc.
	Synchronous Synchronous
	// Readers is the number of read-only connections (Get, Scan, Load,
	// Sessions); 0 means 4.
	Readers int
	// BusyTimeoutMillis is how long a connection waits for a lock held by
	// another process before failing with SQLITE_BUSY; 0 means 5000.
	BusyTimeoutMillis int
	// OnCommit, if set, is told of every group commit: how many write
	// requests shared the SQL transaction and how long it took, from
	// BEGIN to the end of COMMIT (the fsync included). It runs on the
	// writer's goroutine, so it must be quick; the server counts it in its
	// metrics (this package stays free of them).
	OnCommit func(requests int, elapsed time.Duration)
}

// DB is one SQLite file holding many sessions. One process opens a file at
// a time: SQLite's locks keep two processes from corrupting it, but the
// one-Backend-per-session rule (ErrSessionInUse) is enforced per DB.
type DB struct {
	path string
	wdb  *sql.DB // exactly one connection: the writer's
	rdb  *sql.DB // read-only pool

	// getStmt is prepared on the read pool (database/sql prepares it on each
	// pooled connection once, lazily).
	getStmt *sql.Stmt

	mu     sync.RWMutex // guards closed; submitters hold it for reading
	closed bool
	w      *writer

	// The write connection is run by whoever holds the writer role: the
	// first submitter that finds it free runs every queued request itself
	// (no hand-over to another goroutine and back on the commit path), and
	// if more queued meanwhile it passes the role to writeLoop.
	wmu     sync.Mutex
	queue   []*writeReq
	writing bool          // someone holds the writer role
	idle    *sync.Cond    // signalled when writing turns false
	handoff chan struct{} // passes the role to writeLoop; closed by Close
	done    chan struct{} // closed when writeLoop has exited
	batch   []*writeReq   // the role holder's buffers
	errs    []error

	inUseMu sync.Mutex
	inUse   map[int64]bool // ids of sessions with an open Backend

	onCommit func(requests int, elapsed time.Duration)
}

// Open opens (creating if needed) the database at path with the default
// Options, applies pending migrations, and starts the writer.
func Open(path string) (*DB, error) { return OpenWithOptions(path, Options{}) }

// OpenWithOptions is Open with explicit Options.
func OpenWithOptions(path string, opts Options) (*DB, error) {
	if opts.Synchronous == "" {
		opts.Synchronous = SyncFull
	}
	if opts.Synchronous != SyncFull && opts.Synchronous != SyncNormal {
		return nil, fmt.Errorf("sqlite: synchronous must be FULL or NORMAL, not %q", opts.Synchronous)
	}
	if opts.Readers <= 0 {
		opts.Readers = 4
	}
	if opts.BusyTimeoutMillis <= 0 {
		opts.BusyTimeoutMillis = 5000
	}
	if path == "" {
		return nil, errors.New("sqlite: empty database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	// A file: URI, so that a path with '?' or '%' in it is still a path.
	base := (&url.URL{Scheme: "file", Path: abs}).String()
	// The _pragma parameters apply to every connection the pool opens
	// (PRAGMA busy_timeout and foreign_keys are per connection; journal_mode
	// is persistent in the file but setting it again is free).
	common := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)", opts.BusyTimeoutMillis)
	wdsn := base + "?" + common + "&_pragma=journal_mode(WAL)&_pragma=synchronous(" + string(opts.Synchronous) + ")&_txlock=immediate"
	// Readers are query_only (a write through them is a bug) and map the
	// main file into memory: a page then comes straight from the OS page
	// cache instead of being copied into each connection's own cache.
	// (Pages still in the WAL are read with pread either way.)
	rdsn := base + "?" + common + "&_pragma=mmap_size(1073741824)&_query_only=1"

	db := &DB{path: abs, handoff: make(chan struct{}, 1), done: make(chan struct{}), inUse: map[int64]bool{}, onCommit: opts.OnCommit}
	db.idle = sync.NewCond(&db.wmu)
	ok := false
	defer func() {
		if !ok {
			db.closeHandles()
		}
	}()

	if db.wdb, err = sql.Open("sqlite", wdsn); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.wdb.SetMaxOpenConns(1)
	db.wdb.SetMaxIdleConns(1)
	db.wdb.SetConnMaxIdleTime(0)
	db.wdb.SetConnMaxLifetime(0)
	ctx := context.Background()
	wconn, err := db.wdb.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.w = &writer{conn: wconn, insert: map[int]*sql.Stmt{}}
	var mode string
	if err := wconn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return nil, fmt.Errorf("sqlite: open %s: journal_mode is %q, want wal", path, mode)
	}
	if err := applyMigrations(ctx, wconn, migrations.FS); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := db.w.prepare(ctx); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}

	if db.rdb, err = sql.Open("sqlite", rdsn); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.rdb.SetMaxOpenConns(opts.Readers)
	db.rdb.SetMaxIdleConns(opts.Readers)
	db.rdb.SetConnMaxIdleTime(0)
	db.rdb.SetConnMaxLifetime(0)
	if db.getStmt, err = db.rdb.PrepareContext(ctx, getSQL); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}

	go db.writeLoop()
	ok = true
	return db, nil
}

// Path is the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Close waits for queued writes to finish, then closes every connection.
// Backends of this DB fail with ErrClosed afterwards.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil
	}
	db.closed = true
	db.mu.Unlock()
	// No request can queue any more; let the role holder finish the queue.
	db.wmu.Lock()
	for db.writing || len(db.queue) > 0 {
		db.idle.Wait()
	}
	db.wmu.Unlock()
	close(db.handoff)
	<-db.done
	return db.closeHandles()
}

func (db *DB) closeHandles() error {
	var errs []error
	if db.getStmt != nil {
		errs = append(errs, db.getStmt.Close())
	}
	if db.w != nil {
		errs = append(errs, db.w.close())
	}
	if db.wdb != nil {
		errs = append(errs, db.wdb.Close())
	}
	if db.rdb != nil {
		errs = append(errs, db.rdb.Close())
	}
	return errors.Join(errs...)
}

// Check reports whether the database is usable: open, and its file
// readable through the readers' connections (a health check).
func (db *DB) Check(ctx context.Context) error {
	if db.isClosed() {
		return ErrClosed
	}
	var n int
	if err := db.rdb.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM sessions LIMIT 1)").Scan(&n); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

func (db *DB) isClosed() bool {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.closed
}

// validSessionName accepts any non-empty UTF-8 text up to 1 KiB without
// control characters (a retired session's row is renamed to one with a
// control character, see retire, so that it can never be asked for).
func validSessionName(name string) error {
	if name == "" || !utf8.ValidString(name) || len(name) > 1024 || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return fmt.Errorf("sqlite: invalid session name %q", name)
	}
	return nil
}

// Session returns the Backend of session name, creating the session (empty,
// never compacted) if it does not exist. A session has at most one open
// Backend (it belongs to one mvcc.Store): until that Backend is closed,
// Session fails with ErrSessionInUse.
func (db *DB) Session(name string) (mvcc.Backend, error) {
	if err := validSessionName(name); err != nil {
		return nil, err
	}
	var id int64
	err := db.write(func(w *writer) error {
		if _, err := w.conn.ExecContext(context.Background(),
			"INSERT INTO sessions (name) VALUES (?) ON CONFLICT (name) DO NOTHING", name); err != nil {
			return err
		}
		return w.conn.QueryRowContext(context.Background(), "SELECT id FROM sessions WHERE name = ?", name).Scan(&id)
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: session %q: %w", name, err)
	}
	db.inUseMu.Lock()
	defer db.inUseMu.Unlock()
	if db.inUse[id] {
		return nil, fmt.Errorf("sqlite: session %q: %w", name, ErrSessionInUse)
	}
	db.inUse[id] = true
	return &backend{db: db, id: id, name: name}, nil
}

// Sessions returns the names of all sessions, sorted. A session being
// deleted (see DeleteSession) is not one any more.
func (db *DB) Sessions() ([]string, error) {
	if db.isClosed() {
		return nil, ErrClosed
	}
	rows, err := db.rdb.QueryContext(context.Background(), sessionsSQL)
	if err != nil {
		return nil, fmt.Errorf("sqlite: sessions: %w", err)
	}
	defer rows.Close()
	names := []string{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("sqlite: sessions: %w", err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: sessions: %w", err)
	}
	return names, nil
}

// deleteBatch bounds how many records one transaction of DeleteSession and
// Remove deletes, so that other sessions' commits interleave with a large
// deletion instead of waiting for all of it.
const deleteBatch = 4096

// DeleteSession deletes session name and all its records. One transaction
// retires the session: it gives up its name (which a new session may take
// at once) and is marked as being deleted, so that it is no longer listed.
// Its records then go in batches, each its own transaction, and its row
// last. A crash midway leaves a retired session that PurgeDeleted finishes.
// ErrNoSession if there is no such session.
func (db *DB) DeleteSession(name string) error {
	var id int64
	err := db.write(func(w *writer) error {
		var err error
		if id, err = liveSessionID(w, name); err != nil {
			return err
		}
		return retire(w, id)
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete session %q: %w", name, err)
	}
	if err := db.purge(id); err != nil {
		return fmt.Errorf("sqlite: delete session %q: %w", name, err)
	}
	return nil
}

// purge deletes the records of the retired session id in batches, then its
// row (and with it, by cascade, its access and students).
func (db *DB) purge(id int64) error {
	for {
		var n int64
		err := db.write(func(w *writer) error {
			res, err := w.conn.ExecContext(context.Background(), `
				DELETE FROM records WHERE session = ?1 AND main <= coalesce(
					(SELECT main FROM records WHERE session = ?1 ORDER BY main, sub LIMIT 1 OFFSET ?2),
					(SELECT max(main) FROM records WHERE session = ?1))`, id, deleteBatch-1)
			if err != nil {
				return err
			}
			if n, err = res.RowsAffected(); err != nil {
				return err
			}
			return w.reclaim()
		})
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
	}
	return db.write(func(w *writer) error {
		_, err := w.conn.ExecContext(context.Background(), "DELETE FROM sessions WHERE id = ?", id)
		return err
	})
}

// isForeignKeyError reports whether err is SQLite refusing a row whose
// session no longer exists.
func isForeignKeyError(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// rawQuery runs query on a pooled read connection at the driver level and
// calls fn with each row's values. It exists for Load and Scan, the two bulk
// reads: database/sql's Scan would copy every key and value a second time
// (modernc already hands over freshly allocated []byte), and would not
// tell a NULL value from an empty one.
func rawQuery(ctx context.Context, pool *sql.DB, fn func(q driver.QueryerContext) error) error {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("driver connection %T cannot query", dc)
		}
		return fn(q)
	})
}
