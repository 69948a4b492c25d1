package session

import (
	"context"
	"slices"
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
// other 199 of a class send.
const DefaultRecordPerStudent = 512

// DefaultRecordStudents is how many exchanges the students' own rings of
// one session hold together: a class of 200 with full rings, about 55 MB
// (BENCHMARKS.md).
const DefaultRecordStudents = 200 * DefaultRecordPerStudent

// Record is a session's record of exchanges. It keeps them in bounded
// rings, oldest first out: the session's ring holds the last exchanges of
// everyone, and each student (api.RoleStudent) has a ring of their own
// that holds their last ones, so that a class's traffic cannot push a
// student's own recent exchanges out before their verify or the
// dashboard reads them.
//
// What the record holds is bounded whoever comes: the students' rings
// share one budget: each keeps perStudent of their last exchanges while
// the class fits (k students, k*perStudent <= budget), half of that once
// the class is up to twice as large, and so on (a new student shrinks
// the others' rings to make room); a student beyond budget students has
// no ring (their exchanges are in the session's ring only). Rings grow as
// exchanges come, up to their size, so a quiet session holds little (an
// exchange is about 550 bytes with its strings: BenchmarkClassRecordMemory).
type Record struct {
	mu         sync.Mutex
	all        ring
	perStudent int
	budget     int // exchanges the students' rings hold together
	students   map[string]*ring
	next       uint64 // Seq of the next exchange; the first is 1
	// changed is closed by the next add; made only while someone waits,
	// so that recording costs no allocation of its own.
	changed chan struct{}
}

// NewRecord returns a record whose session ring keeps the last size
// exchanges (DefaultRecordSize if size <= 0), each student's ring their
// last perStudent (DefaultRecordPerStudent if perStudent <= 0), and the
// students' rings together at most students exchanges
// (DefaultRecordStudents if students <= 0).
func NewRecord(size, perStudent, students int) *Record {
	if size <= 0 {
		size = DefaultRecordSize
	}
	if perStudent <= 0 {
		perStudent = DefaultRecordPerStudent
	}
	if students <= 0 {
		students = DefaultRecordStudents
	}
	return &Record{all: ring{size: size}, perStudent: perStudent, budget: students, next: 1}
}

// ring is a bounded ring of exchanges in Seq order. Its buffer never
// holds more slots than its size: what it holds is what it may hold.
type ring struct {
	size  int
	items []Exchange // grows to size, then wraps
	head  int        // index of the oldest once full
}

func (r *ring) push(e *Exchange) {
	if len(r.items) < r.size {
		if len(r.items) == cap(r.items) {
			grown := make([]Exchange, len(r.items), min(max(2*cap(r.items), 4), r.size))
			copy(grown, r.items)
			r.items = grown
		}
		r.items = append(r.items, *e)
		return
	}
	r.items[r.head] = *e
	r.head = (r.head + 1) % r.size
}

// shrink makes the ring keep only its last size exchanges from now on,
// in a buffer of that size.
func (r *ring) shrink(size int) {
	if size >= r.size {
		return
	}
	kept := make([]Exchange, 0, size)
	for i := max(r.len()-size, 0); i < r.len(); i++ {
		kept = append(kept, *r.at(i))
	}
	r.size, r.items, r.head = size, kept, 0
}

func (r *ring) len() int { return len(r.items) }

// at is the i-th oldest exchange kept.
func (r *ring) at(i int) *Exchange { return &r.items[(r.head+i)%len(r.items)] }

// after is the position of the first exchange with a Seq above seq.
func (r *ring) after(seq uint64) int {
	lo, hi := 0, r.len()
	for lo < hi {
		if mid := int(uint(lo+hi) >> 1); r.at(mid).Seq > seq {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// add stores e with the next sequence number and returns it.
func (r *Record) add(e *Exchange) uint64 {
	r.mu.Lock()
	e.Seq = r.next
	r.next++
	r.all.push(e)
	if e.Principal.Role == api.RoleStudent {
		if own := r.studentRing(e.Principal.ID); own != nil {
			own.push(e)
		}
	}
	ch := r.changed
	r.changed = nil
	r.mu.Unlock()
	if ch != nil {
		close(ch)
	}
	return e.Seq
}

// studentRing is id's own ring, made if the class's budget has room for
// one more. Every student's ring has the same size, perStudent halved
// until the class fits the budget: a new student who does not fit halves
// the others' rings, so that shrinking costs O(budget) at most
// log2(perStudent) times in a session, not at every join.
func (r *Record) studentRing(id string) *ring {
	if own := r.students[id]; own != nil {
		return own
	}
	share := r.perStudent
	for share > 0 && share*(len(r.students)+1) > r.budget {
		share /= 2
	}
	if share == 0 {
		return nil
	}
	if r.students == nil {
		r.students = map[string]*ring{}
	}
	for _, other := range r.students {
		other.shrink(share)
	}
	own := &ring{size: share}
	r.students[id] = own
	return own
}

// held is how many exchanges the record's buffers have room for: what
// it may hold at most.
func (r *Record) held() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := cap(r.all.items)
	for _, own := range r.students {
		n += cap(own.items)
	}
	return n
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
	slices.Sort(out)
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
