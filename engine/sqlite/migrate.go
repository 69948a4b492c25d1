//go:build !js

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"time"

	"github.com/rvplay/rvplay/migrations"
)

// applyMigrations brings the schema of the database behind conn up to date
// with fsys: every migration not yet recorded in schema_migrations runs, in
// version order, in its own IMMEDIATE transaction together with the row that
// records it, so a migration that fails leaves no trace and a concurrent
// Open of the same file (another process) cannot apply it twice. A
// migration marked NoTransaction runs before its transaction, and may run
// twice.
//
// A database that records a version this binary does not know, or records a
// known version under another file name, is refused: it was written by a
// newer or a different build, and guessing would corrupt it.
func applyMigrations(ctx context.Context, conn *sql.Conn, fsys fs.FS) error {
	ms, err := migrations.List(fsys)
	if err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL
	)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	known := map[int]string{}
	for _, m := range ms {
		known[m.Version] = m.Name
	}
	applied, err := appliedMigrations(ctx, conn)
	if err != nil {
		return err
	}
	for v, name := range applied {
		if want, ok := known[v]; !ok {
			return fmt.Errorf("database has migration %d (%s), unknown to this build: it was written by a newer rvplay", v, name)
		} else if want != name {
			return fmt.Errorf("database has migration %d as %q, this build has it as %q", v, name, want)
		}
	}
	for _, m := range ms {
		if _, done := applied[m.Version]; done {
			continue
		}
		if err := applyOne(ctx, conn, m); err != nil {
			return err
		}
	}
	return nil
}

func appliedMigrations(ctx context.Context, conn *sql.Conn) (map[int]string, error) {
	rows, err := conn.QueryContext(ctx, "SELECT version, name FROM schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	defer rows.Close()
	applied := map[int]string{}
	for rows.Next() {
		var v int
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			return nil, fmt.Errorf("read schema_migrations: %w", err)
		}
		applied[v] = name
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	return applied, nil
}

func applyOne(ctx context.Context, conn *sql.Conn, m migrations.Migration) (err error) {
	if m.NoTransaction {
		// Run it first, then record it in a transaction of its own: a
		// crash in between runs it again, which such a migration allows.
		if _, err := conn.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	defer func() {
		if err != nil {
			_, _ = conn.ExecContext(ctx, "ROLLBACK")
			err = fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}()
	// Another process may have applied it between our read and our lock.
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations WHERE version = ?", m.Version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		_, err := conn.ExecContext(ctx, "COMMIT")
		return err
	}
	if !m.NoTransaction {
		if _, err := conn.ExecContext(ctx, m.SQL); err != nil {
			return err
		}
	}
	if _, err := conn.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
		m.Version, m.Name, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	return nil
}
