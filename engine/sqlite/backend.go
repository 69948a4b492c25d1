//go:build !js

package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// backend is the mvcc.Backend of one session.
type backend struct {
	db     *DB
	id     int64
	name   string
	closed atomic.Bool
}

var _ mvcc.Backend = (*backend)(nil)

const (
	getSQL = "SELECT tombstone, key, create_revision, mod_revision, version, value, lease FROM records WHERE session = ? AND main = ? AND sub = ?"
	// loadSQL and scanSQL read the clustered primary key in order: no sort.
	loadSQL = "SELECT main, sub, tombstone, key, create_revision, mod_revision, version, value, lease FROM records WHERE session = ? ORDER BY main, sub"
	scanSQL = "SELECT main, sub, tombstone, key, create_revision, mod_revision, version, value, lease FROM records " +
		"WHERE session = ?1 AND (main, sub) > (?2, ?3) AND main <= ?4 ORDER BY main, sub LIMIT ?5"
	metaSQL = "SELECT compact_revision, finished_compact_revision FROM sessions WHERE id = ?"
)

func (b *backend) check() error {
	if b.closed.Load() || b.db.isClosed() {
		return ErrClosed
	}
	return nil
}

func (b *backend) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if isForeignKeyError(err) {
		err = ErrNoSession
	}
	if errors.Is(err, sql.ErrConnDone) || (b.db.isClosed() && !errors.Is(err, ErrClosed)) {
		err = fmt.Errorf("%w (%v)", ErrClosed, err)
	}
	return fmt.Errorf("sqlite: session %q: %s: %w", b.name, op, err)
}

// loadChunk is how many records Load's reader hands over at a time.
const loadChunk = 1024

// errLoadStopped ends Load's reader when the callback failed.
var errLoadStopped = errors.New("load stopped")

// Load streams the session's records in revision order inside one read
// transaction, so the records and the Meta it returns are one snapshot.
//
// Reading rows out of SQLite and what fn does with them (the Store
// rebuilding its index) are about equally expensive, so they run on two
// goroutines: a reader decodes rows into chunks of Records while the
// caller's goroutine runs fn on the previous chunk.
func (b *backend) Load(fn func(mvcc.Record) error) (mvcc.Meta, error) {
	if err := b.check(); err != nil {
		return mvcc.Meta{}, err
	}
	var (
		meta    mvcc.Meta
		readErr error // written by the reader before it closes chunks
		chunks  = make(chan []mvcc.Record, 4)
		free    = make(chan []mvcc.Record, 6)
		stop    = make(chan struct{})
	)
	go func() {
		defer close(chunks)
		readErr = b.read(&meta, func(rec mvcc.Record, buf *[]mvcc.Record, flush bool) error {
			if !flush {
				if *buf == nil {
					select {
					case *buf = <-free:
					default:
						*buf = make([]mvcc.Record, 0, loadChunk)
					}
				}
				*buf = append(*buf, rec)
				if len(*buf) < loadChunk {
					return nil
				}
			}
			if len(*buf) == 0 {
				return nil
			}
			select {
			case chunks <- *buf:
				*buf = nil
				return nil
			case <-stop:
				return errLoadStopped
			}
		})
	}()
	var fnErr error
	for chunk := range chunks {
		if fnErr != nil {
			continue // drain until the reader has seen stop
		}
		for _, rec := range chunk {
			if err := fn(rec); err != nil {
				fnErr = err
				close(stop)
				break
			}
		}
		select {
		case free <- chunk[:0]:
		default:
		}
	}
	if fnErr != nil {
		return mvcc.Meta{}, fnErr
	}
	if readErr != nil {
		return mvcc.Meta{}, b.wrap("load", readErr)
	}
	return meta, nil
}

// read is Load's reader: in one read transaction it reads the Meta into
// meta and hands each record to emit (with flush false), then calls emit
// once with flush true.
func (b *backend) read(meta *mvcc.Meta, emit func(rec mvcc.Record, buf *[]mvcc.Record, flush bool) error) error {
	ctx := context.Background()
	return rawQuery(ctx, b.db.rdb, func(q driver.QueryerContext) (err error) {
		ex, ok := q.(driver.ExecerContext)
		if !ok {
			return fmt.Errorf("driver connection %T cannot exec", q)
		}
		if _, err := ex.ExecContext(ctx, "BEGIN", nil); err != nil {
			return err
		}
		defer func() {
			if _, err2 := ex.ExecContext(ctx, "COMMIT", nil); err == nil {
				err = err2
			}
		}()
		found := false
		if err := queryRows(ctx, q, metaSQL, []driver.NamedValue{{Ordinal: 1, Value: b.id}}, 2, func(v []driver.Value) error {
			found = true
			meta.CompactRevision, _ = v[0].(int64)
			meta.FinishedCompactRevision, _ = v[1].(int64)
			return nil
		}); err != nil {
			return err
		}
		if !found {
			return ErrNoSession
		}
		var buf []mvcc.Record
		err = queryRows(ctx, q, loadSQL, []driver.NamedValue{{Ordinal: 1, Value: b.id}}, 9, func(v []driver.Value) error {
			rec, err := decodeRecord(v)
			if err != nil {
				return err
			}
			return emit(rec, &buf, false)
		})
		if err != nil {
			return err
		}
		return emit(mvcc.Record{}, &buf, true)
	})
}

// queryRows runs query and calls fn with each row's ncol values. The slice
// is reused between rows; []byte values in it are fresh copies fn may keep.
func queryRows(ctx context.Context, q driver.QueryerContext, query string, args []driver.NamedValue, ncol int, fn func([]driver.Value) error) (err error) {
	rows, err := q.QueryContext(ctx, query, args)
	if err != nil {
		return err
	}
	defer func() {
		if err2 := rows.Close(); err == nil {
			err = err2
		}
	}()
	dest := make([]driver.Value, ncol)
	for {
		if err := rows.Next(dest); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if err := fn(dest); err != nil {
			return err
		}
	}
}

// decodeRecord turns the columns of loadSQL/scanSQL into a Record.
func decodeRecord(v []driver.Value) (mvcc.Record, error) {
	var r mvcc.Record
	ints := [...]struct {
		col int
		dst *int64
	}{{0, &r.Rev.Main}, {1, &r.Rev.Sub}, {4, &r.KV.CreateRevision}, {5, &r.KV.ModRevision}, {6, &r.KV.Version}, {8, &r.KV.Lease}}
	for _, f := range ints {
		n, ok := v[f.col].(int64)
		if !ok {
			return r, fmt.Errorf("malformed record: column %d is %T", f.col, v[f.col])
		}
		*f.dst = n
	}
	tomb, ok := v[2].(int64)
	if !ok {
		return r, fmt.Errorf("malformed record: tombstone is %T", v[2])
	}
	r.Tombstone = tomb != 0
	key, ok := v[3].([]byte)
	if !ok {
		return r, fmt.Errorf("malformed record: key is %T", v[3])
	}
	if key == nil {
		key = []byte{}
	}
	r.KV.Key = key
	switch val := v[7].(type) {
	case nil: // NULL: the value was nil
	case []byte:
		if val == nil { // a zero-length blob: the value was empty, not nil
			val = []byte{}
		}
		r.KV.Value = val
	default:
		return r, fmt.Errorf("malformed record: value is %T", v[7])
	}
	return r, nil
}

// Commit writes records in one transaction, shared with whatever other
// sessions committed at the same moment, and returns once it is durable.
func (b *backend) Commit(records []mvcc.Record) error {
	if err := b.check(); err != nil {
		return err
	}
	if len(records) == 0 {
		return nil
	}
	for i := 1; i < len(records); i++ {
		if !records[i-1].Rev.Less(records[i].Rev) {
			return fmt.Errorf("sqlite: session %q: commit: records out of order: %v after %v", b.name, records[i].Rev, records[i-1].Rev)
		}
	}
	return b.wrap("commit", b.db.write(func(w *writer) error {
		return w.insertRecords(b.id, records)
	}))
}

// Get reads one record by revision.
func (b *backend) Get(rev mvcc.Revision) (mvcc.Record, bool, error) {
	if err := b.check(); err != nil {
		return mvcc.Record{}, false, err
	}
	var (
		tomb  int64
		value any
		rec   = mvcc.Record{Rev: rev}
	)
	err := b.db.getStmt.QueryRow(b.id, rev.Main, rev.Sub).Scan(&tomb, &rec.KV.Key,
		&rec.KV.CreateRevision, &rec.KV.ModRevision, &rec.KV.Version, &value, &rec.KV.Lease)
	if errors.Is(err, sql.ErrNoRows) {
		return mvcc.Record{}, false, nil
	}
	if err != nil {
		return mvcc.Record{}, false, b.wrap("get", err)
	}
	rec.Tombstone = tomb != 0
	if rec.KV.Key == nil {
		rec.KV.Key = []byte{}
	}
	// database/sql stores a NULL as nil and a blob (even an empty one) as
	// a []byte in an *any.
	switch v := value.(type) {
	case nil:
	case []byte:
		if v == nil {
			v = []byte{}
		}
		rec.KV.Value = v
	default:
		return mvcc.Record{}, false, b.wrap("get", fmt.Errorf("malformed record value %T", value))
	}
	return rec, true, nil
}

// errPageFull ends Scan's query once the page has reached its limit.
var errPageFull = errors.New("page full")

// Scan reads one page in one query, a read transaction that ends before
// Scan returns: the caller (a watcher catching up) may be slow to deliver
// the page, and an open read transaction would pin a pooled connection and
// keep the WAL checkpoint from completing.
func (b *backend) Scan(after mvcc.Revision, to int64, limit mvcc.PageLimit, page []mvcc.Record) ([]mvcc.Record, bool, error) {
	if err := b.check(); err != nil {
		return page, false, err
	}
	// One row more than the page holds tells whether any are left.
	rows := int64(-1) // SQLite: no limit
	if limit.Records > 0 {
		rows = int64(limit.Records) + 1
	}
	ctx := context.Background()
	n, size, more := 0, 0, false
	err := rawQuery(ctx, b.db.rdb, func(q driver.QueryerContext) error {
		args := []driver.NamedValue{
			{Ordinal: 1, Value: b.id}, {Ordinal: 2, Value: after.Main}, {Ordinal: 3, Value: after.Sub},
			{Ordinal: 4, Value: to}, {Ordinal: 5, Value: rows},
		}
		return queryRows(ctx, q, scanSQL, args, 9, func(v []driver.Value) error {
			if limit.Full(n, size) {
				more = true
				return errPageFull
			}
			rec, err := decodeRecord(v)
			if err != nil {
				return err
			}
			page = append(page, rec)
			n++
			size += rec.Size()
			return nil
		})
	})
	if err != nil && err != errPageFull {
		return page, false, b.wrap("scan", err)
	}
	return page, more, nil
}

// SetCompactRevision durably records a logical compaction.
func (b *backend) SetCompactRevision(rev int64) error {
	if err := b.check(); err != nil {
		return err
	}
	return b.wrap("set compact revision", b.db.write(func(w *writer) error {
		return updateOne(w.setCompact, rev, b.id)
	}))
}

func updateOne(stmt *sql.Stmt, args ...any) error {
	res, err := stmt.Exec(args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return ErrNoSession
	}
	return nil
}

// Remove deletes revs in transactions of at most deleteBatch records each,
// each of which gives the pages it freed back to the file system, the last
// of which also records finished, when finished >= 0 (the Store
// removes one compaction in several steps; only its last step finishes
// it). A crash in between leaves
// FinishedCompactRevision behind, and the Store's restart redoes the
// removal; deleting a revision that is already gone is not an error.
func (b *backend) Remove(revs []mvcc.Revision, finished int64) error {
	if err := b.check(); err != nil {
		return err
	}
	for {
		n := min(len(revs), deleteBatch)
		batch, last := revs[:n], n == len(revs)
		err := b.db.write(func(w *writer) error {
			for _, r := range batch {
				if _, err := w.del.Exec(b.id, r.Main, r.Sub); err != nil {
					return err
				}
			}
			if err := w.reclaim(); err != nil {
				return err
			}
			if last && finished >= 0 {
				return updateOne(w.setFinished, finished, b.id)
			}
			return nil
		})
		if err != nil {
			return b.wrap("remove", err)
		}
		if last {
			return nil
		}
		revs = revs[n:]
	}
}

// Close ends this Backend; the DB and other sessions stay open.
func (b *backend) Close() error {
	if b.closed.CompareAndSwap(false, true) {
		b.db.inUseMu.Lock()
		delete(b.db.inUse, b.id)
		b.db.inUseMu.Unlock()
	}
	return nil
}
