//go:build !js

package sqlite

import (
	"context"

	"github.com/rvplay/rvplay/engine/mvcc"
)

var _ mvcc.LeaseBackend = (*backend)(nil)

// LoadLeases reads the session's leases (migration 0006).
func (b *backend) LoadLeases() ([]mvcc.LeaseRecord, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	rows, err := b.db.rdb.QueryContext(context.Background(), "SELECT id, ttl FROM leases WHERE session = ? ORDER BY id", b.id)
	if err != nil {
		return nil, b.wrap("load leases", err)
	}
	defer rows.Close()
	var out []mvcc.LeaseRecord
	for rows.Next() {
		var l mvcc.LeaseRecord
		if err := rows.Scan(&l.ID, &l.TTL); err != nil {
			return nil, b.wrap("load leases", err)
		}
		out = append(out, l)
	}
	return out, b.wrap("load leases", rows.Err())
}

// SaveLease durably records a granted lease.
func (b *backend) SaveLease(l mvcc.LeaseRecord) error {
	if err := b.check(); err != nil {
		return err
	}
	return b.wrap("save lease", b.db.write(func(w *writer) error {
		_, err := w.conn.ExecContext(context.Background(),
			"INSERT INTO leases (session, id, ttl) VALUES (?, ?, ?) ON CONFLICT (session, id) DO UPDATE SET ttl = excluded.ttl", b.id, l.ID, l.TTL)
		return err
	}))
}

// DeleteLease durably forgets a revoked lease.
func (b *backend) DeleteLease(id int64) error {
	if err := b.check(); err != nil {
		return err
	}
	return b.wrap("delete lease", b.db.write(func(w *writer) error {
		_, err := w.conn.ExecContext(context.Background(), "DELETE FROM leases WHERE session = ? AND id = ?", b.id, id)
		return err
	}))
}
