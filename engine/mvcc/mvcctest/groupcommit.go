package mvcctest

import (
	"context"
	"fmt"
	"sync"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// heldBackend holds the first Commit until release is closed, and logs
// every Commit's revisions as it returns.
type heldBackend struct {
	mvcc.Backend
	entered chan struct{} // closed when the first Commit is called
	release chan struct{}
	first   sync.Once
	opened  sync.Once

	log *orderLog
	// commits are the main revisions of each Commit, in call order.
	mu      sync.Mutex
	commits [][]int64
}

// open releases the held Commit (once; a failing test's deferred call
// must not hang the store's Close).
func (b *heldBackend) open() { b.opened.Do(func() { close(b.release) }) }

func (b *heldBackend) Commit(records []mvcc.Record) error {
	b.first.Do(func() { close(b.entered) })
	<-b.release
	err := b.Backend.Commit(records)
	var mains []int64
	for _, r := range records {
		if len(mains) == 0 || mains[len(mains)-1] != r.Rev.Main {
			mains = append(mains, r.Rev.Main)
		}
	}
	b.mu.Lock()
	b.commits = append(b.commits, mains)
	b.mu.Unlock()
	b.log.add(fmt.Sprint("durable ", mains))
	return err
}

// orderLog records events from several goroutines in the order they
// happened.
type orderLog struct {
	mu     sync.Mutex
	events []string
}

func (l *orderLog) add(e string) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *orderLog) index(e string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, x := range l.events {
		if x == e {
			return i
		}
	}
	return -1
}

func init() {
	storeCases = append(storeCases, testCase{"GroupCommitAnswersAWriteOnlyOnceItIsDurable", func(h *harness) {
		// While one commit is held in the backend, the writes that queue
		// behind it are applied in order (they take the next revisions)
		// but neither visible, nor watched, nor acknowledged; released,
		// they reach the backend together in one Commit, then become
		// visible and watched in revision order, and each writer is
		// answered only after the Commit holding its revision returned.
		log := &orderLog{}
		held := &heldBackend{entered: make(chan struct{}), release: make(chan struct{}), log: log}
		h.reopen(func(b mvcc.Backend) mvcc.Backend { held.Backend = b; return held }, options())
		defer held.open()
		w, err := h.s.Watch(ctx, &mvcc.WatchRequest{Key: b("g"), RangeEnd: b("h")})
		if err != nil {
			h.t.Fatal(err)
		}
		defer w.Cancel()

		first := make(chan int64, 1)
		go func() {
			resp, err := h.s.Put(ctx, &mvcc.PutRequest{Key: b("g0"), Value: b("v")})
			if err != nil {
				h.t.Error(err)
				first <- 0
				return
			}
			log.add(fmt.Sprint("acknowledged ", resp.Header.Revision))
			first <- resp.Header.Revision
		}()
		<-held.entered
		// Seven more writers queue behind the held commit. Their context
		// has ended, so each returns as soon as its write is queued (a
		// write whose client gave up still commits, as in etcd).
		gone, cancel := context.WithCancel(ctx)
		cancel()
		for i := 1; i <= 7; i++ {
			if _, err := h.s.Put(gone, &mvcc.PutRequest{Key: b(fmt.Sprint("g", i)), Value: b("v")}); err != context.Canceled {
				h.t.Fatalf("queued write %d: %v, want context.Canceled", i, err)
			}
		}
		h.equal("visible revision while the first commit is held", h.kv.Rev(), int64(1))
		resp := h.rng(&mvcc.RangeRequest{Key: b("g"), RangeEnd: b("h")})
		h.equal("keys visible while the first commit is held", []any{resp.Header.Revision, kvs(resp.Kvs)}, []any{int64(1), []string{}})
		if _, ok, err := w.TryNext(ctx); ok || err != nil {
			h.t.Fatalf("the watcher was offered something while the first commit is held (%v)", err)
		}

		held.open()
		h.equal("first writer's revision", <-first, int64(2))
		last := h.put("g8", "v")
		h.equal("last writer's revision", last, int64(10))
		held.mu.Lock()
		commits := held.commits
		held.mu.Unlock()
		if len(commits) < 2 || fmt.Sprint(commits[0]) != "[2]" || len(commits[1]) < 7 || fmt.Sprint(commits[1][:7]) != "[3 4 5 6 7 8 9]" {
			h.t.Fatalf("commits %v: want [2], then revisions 3 to 9 in one Commit (group commit)", commits)
		}
		if d, a := log.index("durable [2]"), log.index("acknowledged 2"); d < 0 || a < d {
			h.t.Fatalf("revision 2 acknowledged before its commit returned: %v", log.events)
		}
		h.equal("events", collect(h.t, w, 9), []string{"PUT g0@2", "PUT g1@3", "PUT g2@4", "PUT g3@5", "PUT g4@6", "PUT g5@7", "PUT g6@8", "PUT g7@9", "PUT g8@10"})

		h.restart()
		resp = h.rng(&mvcc.RangeRequest{Key: b("g"), RangeEnd: b("h")})
		h.equal("after a restart", []any{resp.Header.Revision, len(resp.Kvs)}, []any{int64(10), 9})
	}})
}
