package mvcc

// Revision is etcd's revision pair: Main numbers one atomic change set (one
// write transaction), Sub numbers the changes inside it in execution order.
// Sub-revisions never leave the store; they order the events of one txn and
// name the backend's records.
type Revision struct {
	Main int64
	Sub  int64
}

// Less orders revisions by Main, then Sub.
func (a Revision) Less(b Revision) bool {
	return a.Main < b.Main || (a.Main == b.Main && a.Sub < b.Sub)
}

// Record is what a Backend stores under one revision: the key-value as it
// was written, or a tombstone (a delete), whose KeyValue holds only the key
// and ModRevision.
type Record struct {
	Rev       Revision
	Tombstone bool
	KV        KeyValue
}

// Size is what a record weighs on a page: its key and value bytes.
func (r *Record) Size() int { return len(r.KV.Key) + len(r.KV.Value) }

// PageLimit bounds one Backend.Scan. A limit of zero or less does not bound.
type PageLimit struct {
	Records int
	Bytes   int
}

// Full reports whether a page of n records weighing size bytes has reached
// the limit.
func (l PageLimit) Full(n, size int) bool {
	return (l.Records > 0 && n >= l.Records) || (l.Bytes > 0 && size >= l.Bytes)
}

// Meta is the bookkeeping a Backend persists beside the records.
type Meta struct {
	// CompactRevision is the revision of the last Compact (logical): reads
	// below it fail. -1 when the store was never compacted.
	CompactRevision int64
	// FinishedCompactRevision is the last compaction whose physical removal
	// completed; a restart resumes one that did not.
	FinishedCompactRevision int64
}

// Backend stores revision -> record. It knows nothing of keys' generations,
// compares or watches: all MVCC semantics live in Store, once, whatever the
// backend. A Backend is used by one Store.
//
// Writes reach the backend from a single goroutine (the Store's committer),
// which hands over the records of every write txn that queued up while the
// previous commit ran: that is the group commit. Reads may come from any
// goroutine concurrently with a commit.
type Backend interface {
	// Load calls fn for every stored record in ascending revision order and
	// returns the persisted Meta. The Store calls it once, at start-up, to
	// rebuild its key index.
	Load(fn func(Record) error) (Meta, error)

	// Commit stores the records of one or more whole write txns, in
	// ascending revision order, durably and atomically: after a crash either
	// all of them are there or none is. It returns only once they are durable.
	Commit(records []Record) error

	// Get returns the record stored under rev. ok is false when there is none
	// (never written, or removed by compaction).
	Get(rev Revision) (rec Record, ok bool, err error)

	// Scan appends to page, in ascending revision order, the records that
	// come after `after` and whose main revision is at most to, and returns
	// the page. It stops at limit.Records records, or after the record that
	// brings the keys and values on the page to limit.Bytes (so a record
	// larger than that is a page of its own), and reports with more whether
	// records in the range are left. Watchers that fell behind catch up
	// through it one page at a time, resuming after the last record of the
	// previous page: what a watcher holds does not grow with the history,
	// and no read transaction stays open while it delivers.
	Scan(after Revision, to int64, limit PageLimit, page []Record) (out []Record, more bool, err error)

	// SetCompactRevision durably records a logical compaction (Meta.CompactRevision).
	SetCompactRevision(rev int64) error

	// Remove physically deletes the given revisions and, when finished >= 0,
	// durably records it as Meta.FinishedCompactRevision (a compaction is
	// removed in several steps; only the last one finishes it).
	Remove(revs []Revision, finished int64) error

	Close() error
}
