//go:build !js

package sqlite

import (
	"database/sql"
)

// Checkpointing copies the pages committed to the WAL back into the main
// file, so that the WAL can start over. SQLite's default does it inside the
// COMMIT that pushes the WAL past 1,000 pages, on the writer's connection:
// that commit then also waits for the page copies and an fsync of the
// main file, a latency spike for whichever writer was unlucky. Here a
// separate connection does it in the background (PASSIVE: it never waits
// for, nor blocks, the writer or the readers), kicked every
// checkpointEvery commits. The writer keeps SQLite's automatic checkpoint
// as a backstop at a much larger WAL (walBackstopPages), reached only if
// the background checkpoints cannot keep up.
const (
	checkpointEvery  = 256
	walBackstopPages = 16384 // 64 MiB of 4 KiB pages
)

type checkpointer struct {
	db   *sql.DB
	kick chan struct{}
	done chan struct{}
}

func newCheckpointer(dsn string) (*checkpointer, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	c := &checkpointer{db: db, kick: make(chan struct{}, 1), done: make(chan struct{})}
	go c.loop()
	return c, nil
}

func (c *checkpointer) loop() {
	defer close(c.done)
	for range c.kick {
		// A failed checkpoint (e.g. SQLITE_BUSY from another process) is
		// retried at the next kick; the backstop bounds the WAL meanwhile.
		_, _ = c.db.Exec("PRAGMA wal_checkpoint(PASSIVE)")
	}
}

// request asks for a checkpoint soon, without waiting for it.
func (c *checkpointer) request() {
	select {
	case c.kick <- struct{}{}:
	default: // one is already pending
	}
}

// close stops the loop (after a running checkpoint) and closes the
// connection. Only the writer goroutine sends kicks, and it has exited.
func (c *checkpointer) close() error {
	close(c.kick)
	<-c.done
	return c.db.Close()
}
