//go:build !js

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"
)

// The classroom's records beside each session's data: who may use the
// session (its access) and who joined it. Package server/classroom decides
// what they mean; this file only stores them. Credentials arrive here
// already hashed.

// ErrSessionExists is returned by CreateSession for a name that is taken.
var ErrSessionExists = errors.New("sqlite: session exists")

// SessionInfo is a session's name, times and access.
type SessionInfo struct {
	Name string
	// Guarded sessions admit only the holders of their tokens; the others
	// are open (no access row).
	Guarded          bool
	TeacherTokenHash []byte
	JoinCodeHash     []byte
	CreatedAt        time.Time
	// LastUsedAt is the last use the server recorded (Touch): idle
	// sessions expire from it. Zero for an open session.
	LastUsedAt time.Time
	Students   []Student
}

// Student is one person who joined a guarded session.
type Student struct {
	ID        string
	Name      string
	TokenHash []byte
	JoinedAt  time.Time
}

const (
	// sessionsSQL lists the sessions that are not being deleted.
	sessionsSQL = `SELECT s.name FROM sessions s LEFT JOIN session_access a ON a.session = s.id
		WHERE coalesce(a.ending, 0) = 0 ORDER BY s.name`
	sessionInfosSQL = `SELECT s.id, s.name, s.created_at, a.guarded, a.teacher_token_hash, a.join_code_hash, a.last_used_at
		FROM sessions s LEFT JOIN session_access a ON a.session = s.id
		WHERE coalesce(a.ending, 0) = 0 ORDER BY s.name`
	studentsSQL = `SELECT st.session, st.id, st.name, st.token_hash, st.joined_at
		FROM session_students st JOIN session_access a ON a.session = st.session
		WHERE a.ending = 0 ORDER BY st.session, st.joined_at, st.id`
	retiredSQL = "SELECT session FROM session_access WHERE ending = 1"
)

// timeFormat is how times are stored: UTC, milliseconds, the format of the
// columns' SQL defaults.
const timeFormat = "2006-01-02T15:04:05.000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(timeFormat, s)
}

// SessionInfos returns every session that is not being deleted, with its
// access and students, sorted by name.
func (db *DB) SessionInfos() ([]SessionInfo, error) {
	if db.isClosed() {
		return nil, ErrClosed
	}
	ctx := context.Background()
	conn, err := db.rdb.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: session infos: %w", err)
	}
	defer conn.Close()
	// One read transaction: the sessions and their students are one snapshot.
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite: session infos: %w", err)
	}
	defer tx.Rollback()
	infos, byID, err := readSessionInfos(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: session infos: %w", err)
	}
	if err := readStudents(ctx, tx, infos, byID); err != nil {
		return nil, fmt.Errorf("sqlite: session infos: %w", err)
	}
	return infos, nil
}

func readSessionInfos(ctx context.Context, tx *sql.Tx) ([]SessionInfo, map[int64]int, error) {
	rows, err := tx.QueryContext(ctx, sessionInfosSQL)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	infos := []SessionInfo{}
	byID := map[int64]int{}
	for rows.Next() {
		var (
			id                int64
			info              SessionInfo
			created           string
			guarded           sql.NullInt64
			teacher, joinCode []byte
			lastUsed          sql.NullString
		)
		if err := rows.Scan(&id, &info.Name, &created, &guarded, &teacher, &joinCode, &lastUsed); err != nil {
			return nil, nil, err
		}
		if info.CreatedAt, err = parseTime(created); err != nil {
			return nil, nil, err
		}
		if info.LastUsedAt, err = parseTime(lastUsed.String); err != nil {
			return nil, nil, err
		}
		info.Guarded = guarded.Int64 != 0
		info.TeacherTokenHash, info.JoinCodeHash = teacher, joinCode
		byID[id] = len(infos)
		infos = append(infos, info)
	}
	return infos, byID, rows.Err()
}

func readStudents(ctx context.Context, tx *sql.Tx, infos []SessionInfo, byID map[int64]int) error {
	rows, err := tx.QueryContext(ctx, studentsSQL)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			session int64
			st      Student
			joined  string
		)
		if err := rows.Scan(&session, &st.ID, &st.Name, &st.TokenHash, &joined); err != nil {
			return err
		}
		if st.JoinedAt, err = parseTime(joined); err != nil {
			return err
		}
		if i, ok := byID[session]; ok {
			infos[i].Students = append(infos[i].Students, st)
		}
	}
	return rows.Err()
}

// CreateSession creates an empty session with info's name and access (an
// access row only when it is guarded). ErrSessionExists if the name is
// taken.
func (db *DB) CreateSession(info SessionInfo) error {
	if err := validSessionName(info.Name); err != nil {
		return err
	}
	err := db.write(func(w *writer) error {
		ctx := context.Background()
		res, err := w.conn.ExecContext(ctx,
			"INSERT INTO sessions (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
			info.Name, formatTime(info.CreatedAt))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrSessionExists
		}
		if !info.Guarded {
			return nil
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		_, err = w.conn.ExecContext(ctx, `INSERT INTO session_access
			(session, guarded, teacher_token_hash, join_code_hash, last_used_at) VALUES (?, 1, ?, ?, ?)`,
			id, info.TeacherTokenHash, info.JoinCodeHash, formatTime(info.LastUsedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: create session %q: %w", info.Name, err)
	}
	return nil
}

// AddStudent records a student of session name. ErrNoSession if there is
// no such session.
func (db *DB) AddStudent(name string, st Student) error {
	err := db.write(func(w *writer) error {
		id, err := liveSessionID(w, name)
		if err != nil {
			return err
		}
		_, err = w.conn.ExecContext(context.Background(),
			"INSERT INTO session_students (session, id, name, token_hash, joined_at) VALUES (?, ?, ?, ?, ?)",
			id, st.ID, st.Name, st.TokenHash, formatTime(st.JoinedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: add student to %q: %w", name, err)
	}
	return nil
}

// SetJoinCode replaces the join code hash of guarded session name: the
// old code admits nobody from then on, and who joined keeps their token.
// ErrNoSession if there is no guarded session of that name.
func (db *DB) SetJoinCode(name string, hash []byte) error {
	err := db.write(func(w *writer) error {
		res, err := w.conn.ExecContext(context.Background(),
			`UPDATE session_access SET join_code_hash = ?
				WHERE session = (SELECT id FROM sessions WHERE name = ?) AND guarded = 1 AND ending = 0`,
			hash, name)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrNoSession
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: set the join code of %q: %w", name, err)
	}
	return nil
}

// Touch records when each named session was last used, in one
// transaction. Open sessions (without access) and unknown names are skipped.
func (db *DB) Touch(lastUsed map[string]time.Time) error {
	if len(lastUsed) == 0 {
		return nil
	}
	names := make([]string, 0, len(lastUsed))
	for n := range lastUsed {
		names = append(names, n)
	}
	sort.Strings(names) // a deterministic order of writes
	err := db.write(func(w *writer) error {
		for _, n := range names {
			if _, err := w.conn.ExecContext(context.Background(),
				`UPDATE session_access SET last_used_at = ?
					WHERE session = (SELECT id FROM sessions WHERE name = ?) AND ending = 0`,
				formatTime(lastUsed[n]), n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: touch sessions: %w", err)
	}
	return nil
}

// ResetSession gives session name a fresh, empty store (revision 1, never
// compacted) and keeps its access, students and class records (class.go).
// The swap is one transaction: the name, access, students and class
// records move to a new session row,
// and the old row is retired and its records purged as DeleteSession's
// are. A Backend of the old session then fails instead of writing into the
// new one; but the caller should close it first: ErrSessionInUse while it
// is open.
func (db *DB) ResetSession(name string) error {
	var old int64
	err := db.write(func(w *writer) error {
		var err error
		if old, err = liveSessionID(w, name); err != nil {
			return err
		}
		db.inUseMu.Lock()
		inUse := db.inUse[old]
		db.inUseMu.Unlock()
		if inUse {
			return ErrSessionInUse
		}
		ctx := context.Background()
		if err := retire(w, old); err != nil {
			return err
		}
		res, err := w.conn.ExecContext(ctx,
			"INSERT INTO sessions (name, created_at) SELECT ?, created_at FROM sessions WHERE id = ?", name, old)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		for _, q := range []string{
			// retire marked the old access row as ending; the new row takes
			// the access as it was.
			`INSERT INTO session_access (session, guarded, teacher_token_hash, join_code_hash, last_used_at)
				SELECT ?1, guarded, teacher_token_hash, join_code_hash, last_used_at FROM session_access WHERE session = ?2 AND guarded = 1`,
			"UPDATE session_students SET session = ?1 WHERE session = ?2",
			// What the class achieved outlives the store it was achieved in.
			"UPDATE class_progress SET session = ?1 WHERE session = ?2",
			"UPDATE class_findings SET session = ?1 WHERE session = ?2",
			"UPDATE class_settings SET session = ?1 WHERE session = ?2",
		} {
			if _, err := w.conn.ExecContext(ctx, q, id, old); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: reset session %q: %w", name, err)
	}
	if err := db.purge(old); err != nil {
		return fmt.Errorf("sqlite: reset session %q: %w", name, err)
	}
	return nil
}

// PurgeDeleted finishes the deletions a crash interrupted: the sessions
// DeleteSession or ResetSession retired but did not purge.
func (db *DB) PurgeDeleted() error {
	if db.isClosed() {
		return ErrClosed
	}
	rows, err := db.rdb.QueryContext(context.Background(), retiredSQL)
	if err != nil {
		return fmt.Errorf("sqlite: purge deleted sessions: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("sqlite: purge deleted sessions: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: purge deleted sessions: %w", err)
	}
	for _, id := range ids {
		if err := db.purge(id); err != nil {
			return fmt.Errorf("sqlite: purge deleted sessions: %w", err)
		}
	}
	return nil
}

// liveSessionID is the id of the session called name (never a retired
// one, whose row no longer has the name). ErrNoSession if there is none.
func liveSessionID(w *writer, name string) (int64, error) {
	var id int64
	err := w.conn.QueryRowContext(context.Background(), "SELECT id FROM sessions WHERE name = ?", name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNoSession
	}
	return id, err
}

// retire, inside a write transaction, takes session id out of use: its row
// gives up its name for one no session can be asked for (validSessionName
// refuses control characters), so that the name is free at once, and its
// access row says it is being deleted.
func retire(w *writer, id int64) error {
	ctx := context.Background()
	if _, err := w.conn.ExecContext(ctx, "UPDATE sessions SET name = ? WHERE id = ?", fmt.Sprintf("\x7fretired %d", id), id); err != nil {
		return err
	}
	_, err := w.conn.ExecContext(ctx, `INSERT INTO session_access (session, ending) VALUES (?, 1)
		ON CONFLICT (session) DO UPDATE SET ending = 1`, id)
	return err
}
