package classload

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is the shape of one run.
type Config struct {
	// Students join the class; each watches.
	Students int
	// Writers of them (the first ones) also write, WriteRate writes a
	// second each, on Objects ConfigMaps of their own with ValueBytes of
	// data each.
	Writers    int
	WriteRate  float64
	Objects    int
	ValueBytes int
	// Duration is how long the writers write.
	Duration time.Duration
	// Crash, if positive, is when the server is SIGKILLed, counted from
	// the first write; it is started again at once on the same database
	// and address, and its clients find it there.
	Crash time.Duration
	// Sleepers of the watchers (the last ones) stop watching Nap before
	// the crash and come back once the server is back and the teacher has
	// compacted the history after their last resourceVersion: they get a
	// 410 and list again, while the others resume where they were.
	Sleepers int
	Nap      time.Duration
}

// DefaultConfig is issue 12's class: 200 watchers, 20 of them writing, for
// 60 s. The issue leaves the writers' pace open: 5 writes a second each
// (100 a second in the session, 20,000 deliveries a second) is a class
// busy in a lesson, and well within each student's rate limit (100/s).
func DefaultConfig() Config {
	return Config{Students: 200, Writers: 20, WriteRate: 5, Objects: 5, ValueBytes: 256, Duration: 60 * time.Second}
}

// WithCrash is c with a SIGKILL halfway through, a tenth of the watchers
// asleep for the last 3 s before it.
func (c Config) WithCrash() Config {
	c.Crash = c.Duration / 2
	c.Sleepers = max(1, c.Students/10)
	c.Nap = min(3*time.Second, c.Crash/2)
	return c
}

func (c Config) validate() error {
	switch {
	case c.Students < 1 || c.Writers < 1 || c.Writers > c.Students:
		return fmt.Errorf("want 1 ≤ writers (%d) ≤ students (%d)", c.Writers, c.Students)
	case c.WriteRate <= 0 || c.Objects < 1 || c.Duration <= 0:
		return fmt.Errorf("want a positive write rate, object count and duration")
	case c.Crash > 0 && (c.Crash >= c.Duration || c.Nap >= c.Crash || c.Sleepers < 0 || c.Sleepers > c.Students-c.Writers):
		return fmt.Errorf("want the crash within the run, the nap before it, and sleepers among the watchers that do not write")
	}
	return nil
}

// timeouts of the waits for the server and the clients.
const (
	connectTimeout  = 60 * time.Second
	catchUpTimeout  = 60 * time.Second
	leftoverTimeout = 30 * time.Second
)

// Run creates a class on srv and puts cfg's load on it, then checks and
// measures what the server did. The error is for a run that could not be
// made; the report's Problems are the promises the server broke.
func Run(ctx context.Context, srv *Server, cfg Config) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cl, err := NewClass(ctx, srv.URL(), cfg.Students)
	if err != nil {
		return nil, err
	}
	rep := &Report{Config: cfg}
	// The teacher's first request loads the session: the figures before
	// the load are of a loaded session, its class joined.
	if _, err := cl.currentRevision(ctx); err != nil {
		return nil, err
	}
	cl.c.closeIdle()
	if rep.GoroutinesBefore, err = settledGoroutines(srv, -1, leftoverTimeout); err != nil {
		return nil, err
	}
	if rep.RSSBefore, _, err = srv.process().Memory(); err != nil {
		return nil, err
	}
	stacks, err := srv.process().GoroutineStacks()
	if err != nil {
		return nil, err
	}
	unstamped := unstampedReads.Load()
	smp := startSampler(srv, 250*time.Millisecond)
	defer smp.end()

	// Every client is gone when Run returns, whatever it returns.
	watchCtx, stopWatching := context.WithCancel(ctx)
	watchers := make([]*watcher, cfg.Students)
	var watching sync.WaitGroup
	defer func() {
		stopWatching()
		watching.Wait()
	}()
	for i, st := range cl.Students {
		w := newWatcher(cl, st)
		watchers[i] = w
		watching.Go(func() { w.run(watchCtx) })
	}
	if !waitFor(ctx, connectTimeout, 10*time.Millisecond, func() bool { return all(watchers, func(w *watcher) bool { return w.connected.Load() != 0 }) }) {
		return nil, fmt.Errorf("not every watcher could watch within %v", connectTimeout)
	}

	writers := make([]*writer, cfg.Writers)
	var inFlight atomic.Int64
	stopWriting := make(chan struct{})
	var writing sync.WaitGroup
	stopWriters := sync.OnceFunc(func() {
		close(stopWriting)
		writing.Wait()
	})
	defer stopWriters()
	start, ownStart := time.Now(), ownCPUTime()
	serverStart, err := srv.process().CPU()
	if err != nil {
		return nil, err
	}
	for i := range writers {
		w := newWriter(cl, i, cl.Students[i], cfg.Objects, cfg.WriteRate, cfg.ValueBytes, &inFlight)
		writers[i] = w
		writing.Go(func() { w.run(ctx, stopWriting) })
	}

	var before []event // the history up to the crash, read before a compaction loses it
	var killed time.Time
	if cfg.Crash > 0 {
		rep.Crash, before, killed, err = crash(ctx, srv, cl, watchers, start, cfg, &inFlight, &rep.Problems)
		if err != nil {
			return nil, err
		}
	}
	sleep(ctx, time.Until(start.Add(cfg.Duration)))
	stopWriters()
	rep.Elapsed, rep.ToolCPU = time.Since(start), ownCPUTime()-ownStart
	serverEnd, err := srv.process().CPU()
	if err != nil {
		return nil, err
	}
	rep.ServerCPU = serverEnd - serverStart
	if rep.Crash != nil {
		// The first process's time until its end, then the second's.
		rep.ServerCPU = rep.Crash.cpuAtKill - serverStart + serverEnd
	}

	final, err := cl.currentRevision(ctx)
	if err != nil {
		return nil, err
	}
	from := int64(1)
	if rep.Crash != nil {
		from = rep.Crash.Revision + 1
	}
	after, err := cl.history(ctx, from, final)
	if err != nil {
		return nil, err
	}
	h := append(before, after...)
	var last int64
	if len(h) > 0 {
		last = h[len(h)-1].rv
	}
	if !waitFor(ctx, catchUpTimeout, 10*time.Millisecond, func() bool { return all(watchers, func(w *watcher) bool { return w.rv.Load() >= last }) }) {
		for _, w := range watchers {
			if rv := w.rv.Load(); rv < last {
				rep.Problems = append(rep.Problems, fmt.Sprintf("%s: at revision %d %v after the last write (%d)", w.student.ID, rv, catchUpTimeout, last))
			}
		}
	}
	if m, err := metrics(srv.URL()); err == nil {
		rep.SlowClosedMetric = int(m["rvplay_watchers_closed_slow_total"])
	}
	stopWatching()
	watching.Wait()
	cl.c.closeIdle()
	for _, w := range writers {
		w.c.closeIdle()
	}
	if rep.GoroutinesAfter, err = settledGoroutines(srv, rep.GoroutinesBefore, leftoverTimeout); err != nil {
		return nil, err
	}
	if rep.GoroutinesAfter > rep.GoroutinesBefore {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%d goroutines %v after every client left, %d before they came %s",
			rep.GoroutinesAfter, leftoverTimeout, rep.GoroutinesBefore, moreGoroutines(stacks, srv.process())))
	}
	if rep.RSSAfter, _, err = srv.process().Memory(); err != nil {
		return nil, err
	}
	rep.RSSPeak, rep.GoroutinesPeak = smp.end()
	rep.RateLimited = int(cl.c.rateLimited.Load())
	for _, w := range writers {
		rep.RateLimited += int(w.c.rateLimited.Load())
	}

	lost := checkWrites(h, writers)
	rep.Problems = append(rep.Problems, lost...)
	if rep.Crash != nil {
		rep.Crash.Lost = countPrefixed(lost, "acknowledged")
	}
	for _, w := range writers {
		rep.Problems = append(rep.Problems, w.problems...)
	}
	for _, w := range watchers {
		rep.Problems = append(rep.Problems, w.problems...)
		rep.Problems = append(rep.Problems, checkWatcher(h, w)...)
		rep.ClosedByServer += w.closedByServer
		rep.Broken += w.broken
		rep.Expired += w.expired
	}
	if cr := rep.Crash; cr != nil {
		for i, w := range watchers {
			switch {
			case w.expired > 0:
				cr.Relisted++
			case i >= len(watchers)-cfg.Sleepers && cr.CompactedAt != 0:
				rep.Problems = append(rep.Problems, fmt.Sprintf("%s watched on after sleeping, from a revision compacted at %d, without a 410", w.student.ID, cr.CompactedAt))
			default:
				cr.Resumed++
			}
		}
	}
	rep.measureDelivery(writers, watchers, killed)
	rep.UnstampedReads = int(unstampedReads.Load() - unstamped)
	return rep, nil
}

// crash SIGKILLs the server at cfg.Crash with the load on it and starts
// it again; the sleepers stop watching cfg.Nap before, and come back once
// the teacher has compacted the history after their last
// resourceVersion. It returns the history up to the revision the server
// came back at, read before the compaction.
func crash(ctx context.Context, srv *Server, cl *Class, watchers []*watcher, start time.Time, cfg Config, inFlight *atomic.Int64, problems *[]string) (*CrashReport, []event, time.Time, error) {
	sleepers := watchers[len(watchers)-cfg.Sleepers:]
	awake := watchers[:len(watchers)-cfg.Sleepers]
	sleep(ctx, time.Until(start.Add(cfg.Crash-cfg.Nap)))
	for _, w := range sleepers {
		w.sleep()
	}
	sleep(ctx, time.Until(start.Add(cfg.Crash)))
	cpu, err := srv.process().CPU()
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	// Killed with a write in flight if one comes within a second.
	waitFor(ctx, time.Second, 100*time.Microsecond, func() bool { return inFlight.Load() > 0 })
	killed := time.Now()
	srv.Kill()
	// What the watchers knew when it died.
	var sleptAt int64
	for _, w := range sleepers {
		sleptAt = max(sleptAt, w.rv.Load())
	}
	awakeAt := int64(math.MaxInt64)
	for _, w := range awake {
		awakeAt = min(awakeAt, w.rv.Load())
	}
	if err := srv.Restart(); err != nil {
		return nil, nil, killed, fmt.Errorf("restarting after SIGKILL: %w", err)
	}
	cr := &CrashReport{Restart: time.Since(killed), cpuAtKill: cpu}
	if cr.Revision, err = cl.currentRevision(ctx); err != nil {
		return nil, nil, killed, err
	}
	h, err := cl.history(ctx, 1, cr.Revision)
	if err != nil {
		return nil, nil, killed, err
	}
	if len(sleepers) > 0 {
		// Compacted at the oldest revision an awake watcher knew, every
		// awake watcher resumes, and every sleeper, which knew only
		// revisions at least two before it, gets a 410. Were an awake
		// watcher that far behind, it gets one too: it lists again, as
		// it should.
		cr.CompactedAt = max(awakeAt, sleptAt+2)
		if err := cl.compact(ctx, cr.CompactedAt); err != nil {
			return nil, nil, killed, fmt.Errorf("the teacher's compaction: %w", err)
		}
		for _, w := range sleepers {
			w.wake()
		}
	}
	restarted := killed.Add(cr.Restart)
	if !waitFor(ctx, catchUpTimeout, 10*time.Millisecond, func() bool {
		return all(watchers, func(w *watcher) bool {
			return w.connected.Load() > restarted.UnixNano() && w.rv.Load() >= cr.Revision
		})
	}) {
		*problems = append(*problems, fmt.Sprintf("not every watcher was back and caught up with revision %d %v after the restart", cr.Revision, catchUpTimeout))
	}
	cr.Recovery = time.Since(killed)
	return cr, h, killed, nil
}

// measureDelivery sets the delivery figures from every event a watcher
// received of an acknowledged create or update (or a delete whose
// revision the history told). Delivery is timed at the clients' sockets
// (stamp_linux.go), from the first sign there that the write was made,
// its answer reaching the writer or its event reaching a watcher,
// whichever came first, to the event's arrival at each watcher: the
// server's work, and none of the load tool's waits for a core. The same
// from the writer's goroutine having its answer to the watcher's having
// the event, as the tool sees it, and from the write's sending, are
// given beside it. Writes acknowledged before killed (if set) that
// reached a watcher after it are left out: they waited for the restart.
func (rep *Report) measureDelivery(writers []*writer, watchers []*watcher, killed time.Time) {
	acked := map[int64]*write{}
	var took []time.Duration
	for _, w := range writers {
		rep.Unreachable += w.unreachable
		for i := range w.writes {
			wr := &w.writes[i]
			rep.Writes++
			if wr.uncertain {
				rep.Uncertain++
				if wr.rv != 0 {
					rep.UncertainMade++
				}
				continue
			}
			rep.Acked++
			took = append(took, wr.acked.Sub(wr.sent))
			if wr.rv != 0 {
				acked[wr.rv] = wr
			}
		}
	}
	rep.WriteLatency = quantiles(took)
	counted := func(wr *write, e event) bool {
		return killed.IsZero() || !wr.answered.Before(killed) || !time.Unix(0, e.arrived).After(killed)
	}
	first := map[int64]int64{} // the first arrival of each write's event, from its answer's
	for rv, wr := range acked {
		first[rv] = wr.answered.UnixNano()
	}
	for _, w := range watchers {
		for _, seg := range w.segments {
			for _, e := range seg.events {
				if wr := acked[e.rv]; wr != nil && counted(wr, e) {
					first[e.rv] = min(first[e.rv], e.arrived)
				}
			}
		}
	}
	var fromFirst, inTool, fromSend []time.Duration
	for _, w := range watchers {
		for _, seg := range w.segments {
			rep.Events += len(seg.events)
			for _, e := range seg.events {
				wr := acked[e.rv]
				if wr == nil || !counted(wr, e) {
					continue
				}
				if e.arrived < wr.answered.UnixNano() {
					rep.EarlyDeliveries++
				}
				fromFirst = append(fromFirst, time.Duration(e.arrived-first[e.rv]))
				inTool = append(inTool, max(0, time.Unix(0, e.recv).Sub(wr.acked)))
				fromSend = append(fromSend, time.Unix(0, e.arrived).Sub(wr.sent))
			}
		}
	}
	rep.Delivery = quantiles(fromFirst)
	rep.InTool = quantiles(inTool)
	rep.FromSend = quantiles(fromSend)
}

// waitFor polls cond every interval until it holds (true) or timeout
// passes or ctx ends (false).
func waitFor(ctx context.Context, timeout, every time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) || sleep(ctx, every) != nil {
			return cond()
		}
	}
	return true
}

func all[T any](xs []T, f func(T) bool) bool {
	for _, x := range xs {
		if !f(x) {
			return false
		}
	}
	return true
}

func countPrefixed(ss []string, prefix string) int {
	n := 0
	for _, s := range ss {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}
