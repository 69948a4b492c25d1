// Package migrations holds rvplay's SQLite schema: ordered SQL files named
// NNNN_description.sql, embedded into the binary so that a server needs no
// files beside it. engine/sqlite applies the ones a database has not seen yet,
// in version order, each in its own transaction, and records each in the
// schema_migrations table.
//
// A migration, once released, is never edited: a change to the schema is a
// new file with the next number. A file whose first line is
// "-- rvplay: no transaction" runs outside a transaction (VACUUM cannot run
// inside one) and must then be safe to run twice. This package only carries SQL text; it must
// not import a database driver, so that tools can list the schema without
// linking SQLite.
package migrations

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// FS holds the migration files, at its root.
//
//go:embed *.sql
var FS embed.FS

// Migration is one schema change.
type Migration struct {
	// Version is the file's number: 1 for 0001_init.sql.
	Version int
	// Name is the file name, e.g. "0001_init.sql".
	Name string
	// SQL is the file's content: one or more statements.
	SQL string
	// NoTransaction is set by a first line "-- rvplay: no transaction".
	NoTransaction bool
}

// noTransaction is the first line that makes a migration run outside a
// transaction.
const noTransaction = "-- rvplay: no transaction"

// List returns the migrations at the root of fsys (FS, or a test's own),
// in ascending version order. Files not ending in ".sql" are ignored; a .sql
// file whose name does not start with a positive number and "_", or two files
// with the same number, is an error, because either would make the order of
// the schema ambiguous.
func List(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	var out []Migration
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || path.Ext(name) != ".sql" {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migrations: %q is not named NNNN_description.sql", name)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations: %q and %q have the same version %d", prev, name, v)
		}
		seen[v] = name
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("migrations: %w", err)
		}
		first, _, _ := strings.Cut(string(b), "\n")
		out = append(out, Migration{Version: v, Name: name, SQL: string(b),
			NoTransaction: strings.TrimSpace(first) == noTransaction})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}
