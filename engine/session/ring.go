package session

import (
	"context"
	"sort"
	"sync"

	"github.com/rvplay/rvplay/engine/api"
)

// DefaultRecordSize is how many exchanges a session's ring keeps, whoever
// sent them.
const DefaultRecordSize = 2048

// DefaultRecordPerStudent is how many of their own exchanges each student
// of a class keeps: a lesson step's exchanges and the background of a lab
// (its compaction probe every 3 s) for a quarter of an hour and more, so
// that a student's verify finds their last exchanges however much the
// other 199 of a class send. A class of 200 whose every ring is full holds
// about 45 MB (BENCHMARKS.md).
const DefaultRecordPerStudent = 512

// Record is a session's record of exchanges. It keeps them in bounded
// rings, oldest first out: the session's ring holds the last exchanges of
// everyone, and each student (api.RoleStudent) has a ring of their own
// that holds their last ones, so that a class's traffic cannot push a
// student's own recent exchanges out before their verify or the
// dashboard reads them. Rings grow as exchanges come, up to their size,
// so a quiet session holds little (an exchange is about 400 bytes with
// its strings).
type Record struct {
	mu         sync.Mutex
	all        ring
	perStudent int
	students   map[string]*ring
	next       uint64 // Seq of the next exchange; the first is 1
	// changed is closed by the next add; made only while someone waits,
	// so that recording costs no allocation of its own.
	changed chan struct{}
}

// NewRecord returns a record whose session ring keeps the last size
// exchanges (DefaultRecordSize if size <= 0) and each student's ring
// their last perStudent (DefaultRecordPerStudent if perStudent <= 0).
func NewRecord(size, perStudent int) *Record {
	if size <= 0 {
		size = DefaultRecordSize
	}
	if perStudent <= 0 {
		perStudent = DefaultRecordPerStudent
	}
	return &Record{all: ring{size: size}, perStudent: perStudent, next: 1}
}

// ring is a bounded ring of exchanges in Seq order.
type ring struct {
	size  int
	items []Exchange // grows to size, then wraps
	head  int        // index of the oldest once full
}

func (r *ring) push(e *Exchange) {
	if len(r.items) < r.size {
		r.items = append(r.items, *e)
		return
	}
	r.items[r.head] = *e
	r.head = (r.head + 1) % r.size
}

func (r *ring) len() int { return len(r.items) }

// at is the i-th oldest exchange kept.
func (r *ring) at(i int) *Exchange { return &r.items[(r.head+i)%len(r.items)] }

// after is the position of the first exchange with a Seq above seq.
func (r *ring) after(seq uint64) int {
	return sort.Search(r.len(), func(i int) bool { return r.at(i).Seq > seq })
}

// add stores e with the next sequence number and returns it.
func (r *Record) add(e *Exchange) uint64 {
	r.mu.Lock()
	e.Seq = r.next
	r.next++
	r.all.push(e)
	if e.Principal.Role == api.RoleStudent {
		own := r.students[e.Principal.ID]
		if own == nil {
			if r.students == nil {
				r.students = map[string]*ring{}
			}
			own = &ring{size: r.perStudent}
			r.students[e.Principal.ID] = own
		}
		own.push(e)
	}
	ch := r.changed
	r.changed = nil
	r.mu.Unlock()
	if ch != nil {
		close(ch)
	}
	return e.Seq
}

// Filter selects exchanges; the zero Filter selects all.
type Filter struct {
	// Principal keeps only the exchanges of the principal with this ID
	// (a student's are read from their own ring).
	Principal string
	// Watches keeps only the streams (Kubernetes and etcd watches).
	Watches bool
}

func (f Filter) match(e *Exchange) bool {
	return (f.Principal == "" || e.Principal.ID == f.Principal) && (!f.Watches || e.Watch != nil)
}

// ringFor is the ring that holds what f selects best: a student's own,
// else the session's.
func (r *Record) ringFor(f Filter) *ring {
	if own := r.students[f.Principal]; f.Principal != "" && own != nil {
		return own
	}
	return &r.all
}

// Since returns the retained exchanges after seq that match f, oldest
// first, at most limit (0: all), and the sequence number to ask for next.
// Exchanges that fell out of the ring are simply missing: Oldest tells.
func (r *Record) Since(seq uint64, f Filter, limit int) ([]Exchange, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rg := r.ringFor(f)
	var out []Exchange
	last := seq
	for i := rg.after(seq); i < rg.len(); i++ {
		e := rg.at(i)
		last = e.Seq
		if !f.match(e) {
			continue
		}
		out = append(out, *e)
		if limit > 0 && len(out) >= limit {
			return out, last
		}
	}
	// Nothing later is kept for this filter: the next exchange is the
	// session's next.
	return out, max(last, r.next-1)
}

// Oldest is the sequence number of the oldest exchange the session's ring
// still keeps (Next when there is none).
func (r *Record) Oldest() uint64 { return r.OldestOf("") }

// OldestOf is the sequence number of the oldest exchange still kept of
// principal's (a student's own ring), or of the session's ring for "" and
// principals without a ring of their own.
func (r *Record) OldestOf(principal string) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.oldestLocked(r.ringFor(Filter{Principal: principal}))
}

func (r *Record) oldestLocked(rg *ring) uint64 {
	if rg.len() == 0 {
		return r.next
	}
	return rg.at(0).Seq
}

// Students lists the principals that have a ring of their own.
func (r *Record) Students() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.students))
	for id := range r.students {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Last is the sequence number of the newest exchange (0 before the first).
func (r *Record) Last() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next - 1
}

// Wait blocks until an exchange after seq exists or ctx ends, and reports
// which.
func (r *Record) Wait(ctx context.Context, seq uint64) bool {
	for {
		r.mu.Lock()
		ok := r.next-1 > seq
		if !ok && r.changed == nil {
			r.changed = make(chan struct{})
		}
		ch := r.changed
		r.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}
