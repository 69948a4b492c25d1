//go:build !js

// Package sqlite is the mvcc.Backend on SQLite (modernc.org/sqlite, pure Go):
// the persistence of the classroom server. One database file holds many
// sessions; each session is an independent MVCC store with its own revision
// sequence, stored as rows (session, main, sub) -> record plus the session's
// compaction bookkeeping. All MVCC semantics stay in engine/mvcc; this package
// only stores revision -> record, durably, and reads it back fast:
//
//   - Load streams a session's records in revision order for the Store's
//     start-up index rebuild: one sequential b-tree range read at the driver
//     level (no copies beyond the driver's own), decoded on a goroutine of
//     its own while the caller indexes the previous chunk;
//   - Commit writes the records of many write txns in ONE SQL transaction
//     (the Store's group commit), and this package goes one step further:
//     the single write connection is run by one goroutine at a time, the
//     holder of the writer role, which merges the commits of several
//     sessions that arrive together into one SQL transaction, each in its
//     own savepoint so that one session's failure does not fail another's.
//     The first committer that finds the role free takes it and runs the
//     transaction on its own goroutine (no hand-over to another goroutine
//     and back on the commit path); if more commits queued meanwhile, it
//     passes the role to a writer goroutine, so no caller is kept writing
//     for others;
//   - Get and Scan read through a pool of read-only connections, concurrently
//     with commits (WAL: readers never wait for the writer);
//   - Remove deletes compacted revisions in batches of bounded size, each its
//     own transaction, so neither other sessions' commits nor the WAL
//     checkpoint wait behind one huge delete; each batch gives the pages it
//     freed back to the file system (auto_vacuum INCREMENTAL, set by
//     migrations/0003, and PRAGMA incremental_vacuum), so the file shrinks
//     after a compaction instead of keeping its high-water mark.
//
// The WAL is checkpointed by SQLite itself, inside the COMMIT that takes
// it past 1,000 pages. A background checkpointer on its own connection was
// tried and measured worse here: its fsyncs of the main file compete with
// the commits' fsyncs of the WAL, and a PASSIVE checkpoint racing with
// continuous commits never completes, so the WAL does not start over.
//
// The schema comes from package migrations, applied at Open in version order,
// each in its own transaction and recorded in schema_migrations.
//
// # Durability
//
// A Commit returns only after SQLite's COMMIT returned with
// synchronous=FULL in WAL mode: the WAL is fsynced at every commit, so an
// acknowledged write survives a SIGKILL of the process and also the loss of
// power or a kernel crash. synchronous=NORMAL would survive a process crash
// (the WAL is in the OS page cache) but may lose the last commits on power
// loss, which is not what "acknowledged = durable" means; etcd, which we
// compare against, fsyncs its WAL before acknowledging too. Group commit pays
// one fsync per batch, not per write, which is what keeps FULL affordable (see
// the package benchmarks, which measure both modes). OpenWithOptions can
// choose NORMAL for throwaway databases (tests, demos).
//
// It must never be built for js/wasm: modernc.org/sqlite does not build there
// and the browser uses the memory backend of engine/mvcc. It must not import
// net/http or anything above engine/mvcc.
package sqlite
