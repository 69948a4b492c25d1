// Package mvcc is etcd's multi-version key-value store: a global revision
// that every write transaction advances by one, per-key create revision,
// mod revision and version, generations ended by tombstones, reads at old
// revisions, transactions with compares, compaction, and watches from a
// revision. It reproduces etcd v3's semantics and error texts exactly (the
// differential test in test/etcddiff holds it to a real etcd), because
// kube-apiserver's resourceVersion is nothing but these revisions.
//
// kv.go states the contract (ReadView, WriteView, Watchable, Maintenance:
// what each operation means); the other files implement it on Store.
//
// All semantics live here, once. Storage is a Backend that only keeps
// revision -> record; the key index is rebuilt from it at start-up, as etcd
// rebuilds its keyIndex from bbolt. The memory backend is in this package
// (the browser uses it); engine/sqlite provides the durable one.
//
// Writes are group-committed (commit.go): a write txn changes the index and
// takes its revision under the store's lock, in order, then waits while
// the committer hands every txn that queued meanwhile to the backend in one
// Commit; only once that returned are the revisions published (visible,
// watched), in order, and the writers answered, so no one ever sees a
// write that a crash could still take back.
//
// The key index is a hash table for single keys (keytable.go) beside a B+
// tree that orders them for ranges (keyorder.go); each key keeps its newest
// put, so reads of current values never reach the backend. The same code
// runs natively and in the browser; where Go's WebAssembly port makes a
// construct dear (byte-at-a-time compares and hashes, out-of-line atomics),
// a file with a wasm build tag says so and does it differently
// (keycmp_wasm.go, keyhash_wasm.go, sync_wasm.go).
//
// Watches follow etcd's watchable store (watch.go), but the consumer drives
// delivery: the committer queues each revision's events on the watchers
// that are at the head of the store, without ever waiting for them, and
// the consumer's Next (a WatchStream's, shared by the watches of one etcd
// stream, or a watcher's own) takes them; a watcher has no goroutine. A
// watcher that starts from an old revision, or falls behind, reads the
// revisions it missed back from the backend in those calls, one bounded
// page at a time (Backend.Scan), while it holds a slot of a CatchUpLimiter
// that a server shares between all its stores (watch_catchup.go). What a
// watcher holds never grows with the history.
//
// A store's storage is bounded (quota.go): the bytes of the records it
// retains (etcd's --quota-backend-bytes, with etcd's NOSPACE alarm,
// alarm.go), the keys that exist at once, and the memory of its key index,
// drawn from a budget every store of a server shares. A write beyond a
// bound is refused with etcd's ErrNoSpace before it takes a revision.
//
// This package must not import net/http, syscall/js, SQLite or a websocket
// library: it is compiled to WebAssembly.
package mvcc
