//go:build !js

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// What a class achieved in a session (migration 0004): the lesson steps
// each person passed and the misconceptions found in their exchanges; the
// settings its teacher left (migration 0005); and the revisions at which
// its students' own keys were first created (migration 0007). Package
// server/classroom decides what they mean; this file only stores them.
// All survive the session's unloading and a restart, and all but the first
// creations a reset of its store (its revisions start again); ending the
// session deletes them.

// PassedStep is one lesson step a person passed.
type PassedStep struct {
	Principal string
	Lesson    string
	Step      int
	PassedAt  time.Time
}

// Finding is one misconception (or practice) a detector found in a
// person's exchanges. Exchange names the exchange that showed it uniquely
// across the session's loads; a finding added twice is kept once.
type Finding struct {
	Detector  string
	Exchange  string
	Principal string
	// Lesson is the lesson the person was in ("" outside one).
	Lesson  string
	FoundAt time.Time
}

// ClassProgress returns every step passed in session name, by principal,
// lesson and step (none for an unknown session).
func (db *DB) ClassProgress(name string) ([]PassedStep, error) {
	out := []PassedStep{}
	err := db.readClass(name, `SELECT p.principal, p.lesson, p.step, p.passed_at FROM class_progress p
		JOIN sessions s ON s.id = p.session WHERE s.name = ? ORDER BY p.principal, p.lesson, p.step`,
		func(rows *sql.Rows) error {
			var ps PassedStep
			var at string
			if err := rows.Scan(&ps.Principal, &ps.Lesson, &ps.Step, &at); err != nil {
				return err
			}
			var err error
			ps.PassedAt, err = parseTime(at)
			out = append(out, ps)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite: class progress of %q: %w", name, err)
	}
	return out, nil
}

// FindingCount is how many findings of one detector one principal has in
// one lesson.
type FindingCount struct {
	Principal string
	Lesson    string
	Detector  string
	N         int
}

// ClassFindingCounts counts the findings recorded in session name per
// principal, lesson and detector, in that order.
func (db *DB) ClassFindingCounts(name string) ([]FindingCount, error) {
	out := []FindingCount{}
	err := db.readClass(name, `SELECT f.principal, f.lesson, f.detector, count(*) FROM class_findings f
		JOIN sessions s ON s.id = f.session WHERE s.name = ? GROUP BY f.principal, f.lesson, f.detector
		ORDER BY f.principal, f.lesson, f.detector`,
		func(rows *sql.Rows) error {
			var c FindingCount
			err := rows.Scan(&c.Principal, &c.Lesson, &c.Detector, &c.N)
			out = append(out, c)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite: class findings of %q: %w", name, err)
	}
	return out, nil
}

func (db *DB) readClass(name, query string, scan func(*sql.Rows) error) error {
	if db.isClosed() {
		return ErrClosed
	}
	rows, err := db.rdb.QueryContext(context.Background(), query, name)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// AddPassedSteps records steps passed in session name, in one transaction;
// a step a principal passed already keeps its first time. ErrNoSession if
// there is no such session.
func (db *DB) AddPassedSteps(name string, steps []PassedStep) error {
	rows := make([][]any, len(steps))
	for i, s := range steps {
		rows[i] = []any{s.Principal, s.Lesson, s.Step, formatTime(s.PassedAt)}
	}
	return db.addClassRows(name, "passed steps",
		"INSERT INTO class_progress (session, principal, lesson, step, passed_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", rows)
}

// AddFindings records findings in session name, in one transaction; one
// recorded already (the same detector and exchange) is kept as it was.
func (db *DB) AddFindings(name string, findings []Finding) error {
	rows := make([][]any, len(findings))
	for i, f := range findings {
		rows[i] = []any{f.Detector, f.Exchange, f.Principal, f.Lesson, formatTime(f.FoundAt)}
	}
	return db.addClassRows(name, "findings",
		"INSERT INTO class_findings (session, detector, exchange, principal, lesson, found_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", rows)
}

// addClassRows runs insert for each row, the session's id first, in one
// transaction.
func (db *DB) addClassRows(name, what, insert string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	err := db.write(func(w *writer) error {
		id, err := liveSessionID(w, name)
		if err != nil {
			return err
		}
		for _, row := range rows {
			if _, err := w.conn.ExecContext(context.Background(), insert, append([]any{id}, row...)...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: add %s to %q: %w", what, name, err)
	}
	return nil
}

// ClassSettings returns the settings stored for session name (nil: none).
func (db *DB) ClassSettings(name string) ([]byte, error) {
	var out []byte
	err := db.readClass(name, `SELECT c.settings FROM class_settings c JOIN sessions s ON s.id = c.session WHERE s.name = ?`,
		func(rows *sql.Rows) error {
			var settings string
			err := rows.Scan(&settings)
			out = []byte(settings)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite: class settings of %q: %w", name, err)
	}
	return out, nil
}

// SetClassSettings stores settings for session name, replacing what was
// stored. ErrNoSession if there is no such session.
func (db *DB) SetClassSettings(name string, settings []byte) error {
	return db.addClassRows(name, "settings", `INSERT INTO class_settings (session, settings) VALUES (?, ?)
		ON CONFLICT (session) DO UPDATE SET settings = excluded.settings`, [][]any{{string(settings)}})
}

// ClassFirstCreations returns the revision at which each key of session
// name that a student owns was first created, as AddFirstCreation recorded
// them since the store's last reset (none for an unknown session).
func (db *DB) ClassFirstCreations(name string) (map[string]int64, error) {
	out := map[string]int64{}
	err := db.readClass(name, `SELECT c.key, c.revision FROM class_first_created c
		JOIN sessions s ON s.id = c.session WHERE s.name = ?`,
		func(rows *sql.Rows) error {
			var key string
			var rev int64
			err := rows.Scan(&key, &rev)
			out[key] = rev
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite: first creations of %q: %w", name, err)
	}
	return out, nil
}

// AddFirstCreation records that key was first created at revision rev in
// session name; a key recorded already keeps its first revision.
// ErrNoSession if there is no such session.
func (db *DB) AddFirstCreation(name, key string, rev int64) error {
	return db.addClassRows(name, "a first creation",
		"INSERT INTO class_first_created (session, key, revision) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", [][]any{{key, rev}})
}
