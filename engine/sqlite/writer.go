//go:build !js

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// writer owns the single write connection. Only the writer goroutine uses it
// (and Open, before that goroutine starts).
type writer struct {
	conn *sql.Conn
	// insert holds "INSERT INTO records ... VALUES (...), (...)" statements
	// by number of rows (1..maxInsertRows), prepared on first use: one
	// statement per chunk of records costs far less than one per record.
	insert                  map[int]*sql.Stmt
	args                    []any
	del                     *sql.Stmt
	setCompact, setFinished *sql.Stmt
	vacuum                  *sql.Stmt
	// control holds the prepared transaction-control statements, by SQL
	// text: they run several times per commit, so parse them once.
	control map[string]*sql.Stmt
}

// maxInsertRows is the most rows one INSERT statement carries (10 bound
// parameters each; SQLite allows 32766).
const maxInsertRows = 64

// maxGroup bounds how many queued write requests one SQL transaction takes.
const maxGroup = 256

const recordColumns = "session, main, sub, tombstone, key, create_revision, mod_revision, version, value, lease"

func (w *writer) prepare(ctx context.Context) error {
	var err error
	w.control = map[string]*sql.Stmt{}
	for _, q := range []string{"BEGIN IMMEDIATE", "COMMIT", "ROLLBACK", "SAVEPOINT req", "ROLLBACK TO req", "RELEASE req"} {
		if w.control[q], err = w.conn.PrepareContext(ctx, q); err != nil {
			return err
		}
	}
	if w.del, err = w.conn.PrepareContext(ctx, "DELETE FROM records WHERE session = ? AND main = ? AND sub = ?"); err != nil {
		return err
	}
	if w.setCompact, err = w.conn.PrepareContext(ctx, "UPDATE sessions SET compact_revision = ? WHERE id = ?"); err != nil {
		return err
	}
	if w.setFinished, err = w.conn.PrepareContext(ctx, "UPDATE sessions SET finished_compact_revision = ? WHERE id = ?"); err != nil {
		return err
	}
	if w.vacuum, err = w.conn.PrepareContext(ctx, "PRAGMA incremental_vacuum"); err != nil {
		return err
	}
	return nil
}

// reclaim gives the file's free pages back to the file system, in the
// transaction that freed them: the file (auto_vacuum INCREMENTAL, see
// migrations/0003) moves its last pages into the free ones and is cut
// short when the WAL is next checkpointed.
func (w *writer) reclaim() error {
	_, err := w.vacuum.Exec()
	return err
}

func (w *writer) close() error {
	var errs []error
	for _, s := range w.insert {
		errs = append(errs, s.Close())
	}
	for _, s := range w.control {
		errs = append(errs, s.Close())
	}
	for _, s := range []*sql.Stmt{w.del, w.setCompact, w.setFinished, w.vacuum} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	errs = append(errs, w.conn.Close())
	return errors.Join(errs...)
}

func (w *writer) insertStmt(rows int) (*sql.Stmt, error) {
	if s := w.insert[rows]; s != nil {
		return s, nil
	}
	var b strings.Builder
	b.WriteString("INSERT INTO records (" + recordColumns + ") VALUES ")
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?,?,?,?,?,?,?,?,?,?)")
	}
	s, err := w.conn.PrepareContext(context.Background(), b.String())
	if err != nil {
		return nil, err
	}
	w.insert[rows] = s
	return s, nil
}

// insertRecords writes recs of session id inside the current transaction.
func (w *writer) insertRecords(id int64, recs []mvcc.Record) error {
	for len(recs) > 0 {
		n := min(len(recs), maxInsertRows)
		stmt, err := w.insertStmt(n)
		if err != nil {
			return err
		}
		args := w.args[:0]
		for i := range recs[:n] {
			r := &recs[i]
			tomb := int64(0)
			if r.Tombstone {
				tomb = 1
			}
			key := r.KV.Key
			if key == nil {
				key = []byte{}
			}
			// A nil value binds as NULL; an empty non-nil one as a
			// zero-length blob (modernc binds []byte{} as a blob).
			var value any
			if r.KV.Value != nil {
				value = r.KV.Value
			}
			args = append(args, id, r.Rev.Main, r.Rev.Sub, tomb, key,
				r.KV.CreateRevision, r.KV.ModRevision, r.KV.Version, value, r.KV.Lease)
		}
		w.args = args
		_, err = stmt.Exec(args...)
		clear(args) // drop references to the caller's bytes
		if err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// writeReq is one unit of work for the writer: fn runs inside a
// transaction (a savepoint when it shares the transaction with others), and
// its result is delivered on done only after the transaction committed.
type writeReq struct {
	fn   func(*writer) error
	done chan error
}

// write queues fn for the writer and waits until the transaction that ran it
// committed (nil) or failed. fn runs on whichever goroutine holds the writer
// role (perhaps the caller's own) and must not call back into DB.
func (db *DB) write(fn func(*writer) error) error {
	req := &writeReq{fn: fn, done: make(chan error, 1)}
	db.mu.RLock()
	if db.closed {
		db.mu.RUnlock()
		return ErrClosed
	}
	db.wmu.Lock()
	db.queue = append(db.queue, req)
	lead := !db.writing
	db.writing = true
	db.wmu.Unlock()
	db.mu.RUnlock()
	if lead {
		db.runRound()
	}
	return <-req.done
}

// runRound runs what is queued as the writer-role holder (the caller took
// the role in write), then releases the role, or passes it to writeLoop if
// more queued meanwhile, so that the caller is not kept writing for others.
func (db *DB) runRound() {
	db.wmu.Lock()
	took := db.takeLocked()
	db.wmu.Unlock()
	if took {
		db.runBatch()
	}
	db.wmu.Lock()
	if len(db.queue) == 0 {
		db.writing = false
		db.idle.Broadcast()
		db.wmu.Unlock()
		return
	}
	db.wmu.Unlock()
	db.handoff <- struct{}{} // never blocks: one holder, one pending hand-off at most
}

// takeLocked moves up to maxGroup queued requests into db.batch.
func (db *DB) takeLocked() bool {
	n := min(len(db.queue), maxGroup)
	db.batch = append(db.batch[:0], db.queue[:n]...)
	rest := copy(db.queue, db.queue[n:])
	clear(db.queue[rest:])
	db.queue = db.queue[:rest]
	return n > 0
}

// runBatch runs db.batch in one transaction and answers each request.
func (db *DB) runBatch() {
	if cap(db.errs) < len(db.batch) {
		db.errs = make([]error, maxGroup)
	}
	errs := db.errs[:len(db.batch)]
	if db.onCommit == nil {
		db.w.runGroup(db.batch, errs)
	} else {
		start := time.Now()
		db.w.runGroup(db.batch, errs)
		db.onCommit(len(db.batch), time.Since(start))
	}
	for i, r := range db.batch {
		r.done <- errs[i]
	}
	clear(db.batch)
}

// writeLoop takes the writer role when a holder passes it on, runs the
// queue until it is empty and releases the role. That merges the group
// commits of different sessions into one fsync.
func (db *DB) writeLoop() {
	defer close(db.done)
	for range db.handoff {
		db.wmu.Lock()
		for db.takeLocked() {
			db.wmu.Unlock()
			db.runBatch()
			db.wmu.Lock()
		}
		db.writing = false
		db.idle.Broadcast()
		db.wmu.Unlock()
	}
}

func (w *writer) exec(q string) error {
	var err error
	if s := w.control[q]; s != nil {
		_, err = s.Exec()
	} else {
		_, err = w.conn.ExecContext(context.Background(), q)
	}
	return err
}

// runGroup runs batch in one transaction and sets errs[i] to the outcome of
// batch[i]. A request that fails is rolled back to its savepoint alone; the
// others still commit. If the COMMIT itself fails, every request fails.
func (w *writer) runGroup(batch []*writeReq, errs []error) {
	clear(errs)
	failAll := func(err error) {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	if err := w.exec("BEGIN IMMEDIATE"); err != nil {
		failAll(err)
		return
	}
	abort := func(err error) {
		// Ignore the ROLLBACK's own error: SQLite may already have rolled
		// back (e.g. after SQLITE_FULL), leaving no transaction to end.
		_ = w.exec("ROLLBACK")
		for i := range errs {
			errs[i] = err
		}
	}
	if len(batch) == 1 {
		if err := batch[0].fn(w); err != nil {
			abort(err)
			return
		}
	} else {
		for i, r := range batch {
			if err := w.exec("SAVEPOINT req"); err != nil {
				abort(err)
				return
			}
			if err := r.fn(w); err != nil {
				errs[i] = err
				if err2 := w.exec("ROLLBACK TO req"); err2 != nil {
					abort(fmt.Errorf("%w (and rolling back: %v)", err, err2))
					return
				}
			}
			if err := w.exec("RELEASE req"); err != nil {
				abort(err)
				return
			}
		}
	}
	if err := w.exec("COMMIT"); err != nil {
		_ = w.exec("ROLLBACK")
		failAll(err)
	}
}
