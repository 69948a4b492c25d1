package kube

import (
	"context"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// cacher is kube-apiserver's Cacher for one resource: ONE store watch of
// the resource's keys feeds its watch cache (cache.go), and every
// Kubernetes watch of the resource is served from the cache, each event
// taken in once, with its previous object from the cache, whatever the
// number of watchers. Its goroutine takes the store's responses in and
// dispatches them; readers that must see what the store has published
// (a resourceVersion "0" list right after a write) take them in
// themselves first (sync), under the same lock, so that a cache without
// lag is never behind a write that was acknowledged.
//
// A watcher's buffer holds about a second of the window's events (kube's
// channel size, cache.go); when an event finds it full, the dispatch waits
// for the watcher to make room, within the cacher's time budget (100 ms,
// refilled by 50 ms a second, kube's dispatchTimeoutBudget), then closes
// it: its stream ends, as kube-apiserver's cacher closes a watcher that
// does not keep up, and its client watches again from the last
// resourceVersion it got. This is the one rule for slow Kubernetes
// watchers, whatever the transport.
//
// The session's watch-cache lag (Registry.SetWatchCacheDelay) holds every
// response of the store back that long before the cache takes it in: a
// lagging cache is a cache behind the store, for its reads, its watches
// and its bookmarks alike.
//
// A store watch that the storage ends (on an etcd cluster, "etcdserver:
// no leader") is started again from the revision after the last one the
// cache took in (storeRewatch, rewatch.go): the cache's watchers go on,
// missing and repeating nothing.
type cacher struct {
	reg    *Registry
	r      *Resource
	prefix string
	cache  *watchCache

	// proc is held while responses are applied and dispatched (by the
	// loop or a reader's sync), and while bookmarks are dispatched.
	proc sync.Mutex
	// intake guards the store watch and the responses taken from it: a
	// writer takes its write's response in (Registry.wrote) without
	// waiting for a dispatch, so that each response is stamped with the
	// time it was published, whenever the loop gets to apply it.
	intake      sync.Mutex
	ws          WatchStream
	wsCancel    context.CancelFunc
	rewatch     storeRewatch      // where the store watch goes on from if the storage ends it
	pending     []pendingResponse // taken from the store, not yet applied (due after the lag)
	budget      timeBudget
	bookmarkDue bool // the bookmark timer fired: dispatch once the cache is fresh
	dispatchBuf []*cacheWatcher
	dueBuf      []pendingResponse
	blockedBuf  []blockedWatcher

	// watchers is guarded by cache.mu: a watcher joins under the same lock
	// that gives it its initial state or window of events.
	watchers []*cacheWatcher
	// nextBookmark is the earliest time a watcher wants a bookmark (zero:
	// none); guarded by cache.mu.
	nextBookmark time.Time

	// The revision kube's compactor last compacted to, as last read
	// (cache_read.go).
	compactMu     sync.Mutex
	compactRev    int64
	compactReadAt time.Time

	kick    chan struct{} // the loop re-reads its timers
	stop    context.CancelFunc
	stopped chan struct{}
}

type pendingResponse struct {
	resp mvcc.WatchResponse
	at   time.Time
}

type blockedWatcher struct {
	w *cacheWatcher
	q queued
}

// newCacher lists the resource and starts the store watch that feeds its
// cache, and the loop that takes it in.
func newCacher(reg *Registry, r *Resource) (*cacher, error) {
	c := &cacher{reg: reg, r: r, prefix: r.Prefix(""), cache: newWatchCache(r, reg.cacheBytes),
		kick: make(chan struct{}, 1), stopped: make(chan struct{})}
	c.budget.last = reg.clock.Now()
	c.proc.Lock()
	err := c.listLocked()
	c.proc.Unlock()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.stop = cancel
	go c.loop(ctx)
	return c, nil
}

// listLocked (re)lists the resource and watches it from the next
// revision (the caller holds proc). Watchers of the old state are closed
// (kube's cacher terminates them when its reflector lists again); their
// clients watch again, and those whose resourceVersion is older than the
// new list get "too old resource version".
func (c *cacher) listLocked() error {
	c.intake.Lock()
	defer c.intake.Unlock()
	if c.wsCancel != nil {
		// The watcher ends now, not in a goroutine of its context's.
		c.ws.Cancel()
		c.wsCancel()
	}
	resp, err := c.reg.kv.Range(context.Background(), &mvcc.RangeRequest{Key: []byte(c.prefix), RangeEnd: prefixEnd([]byte(c.prefix))})
	if err != nil {
		return err
	}
	rev := resp.Header.Revision
	// The cache's watch is the server's, not a client's: the watchers it
	// serves take the session's slots (admitWatcher), it takes none.
	c.rewatch.from(rev + 1)
	ws, cancel, err := c.rewatch.watch(mvcc.Uncapped(context.Background()), c.reg.kv, c.prefix)
	if err != nil {
		return err
	}
	c.ws, c.wsCancel = ws, cancel
	c.pending = nil
	c.wake() // the loop waits on the new watch
	c.cache.mu.Lock()
	c.cache.replaceLocked(resp.Kvs, rev)
	old := c.watchers
	c.watchers = nil
	c.cache.mu.Unlock()
	for _, w := range old {
		w.end()
	}
	return nil
}

// loop takes the store's responses in as they come, and dispatches
// bookmarks when they are due.
func (c *cacher) loop(ctx context.Context) {
	defer close(c.stopped)
	var lag, bookmark, rewatch timerAt
	defer lag.stop()
	defer bookmark.stop()
	defer rewatch.stop()
	for {
		c.proc.Lock()
		if err := c.takeLocked(ctx); err != nil {
			c.proc.Unlock()
			c.shutdown()
			return
		}
		c.intake.Lock()
		due := c.dueLocked()
		ready := c.ws.Ready()
		rewatchAt := c.rewatch.at
		c.intake.Unlock()
		c.proc.Unlock()
		c.cache.mu.RLock()
		next := c.nextBookmark
		c.cache.mu.RUnlock()
		lagC := lag.at(c.reg.clock, due)
		bookmarkC := bookmark.at(c.reg.clock, next)
		rewatchC := rewatch.at(c.reg.clock, rewatchAt)
		select {
		case <-ready:
		case <-lagC:
			lag.fired()
		case <-rewatchC:
			rewatch.fired()
		case <-bookmarkC:
			bookmark.fired()
			c.bookmarkTick()
		case <-c.kick:
		case <-ctx.Done():
			c.shutdown()
			return
		}
	}
}

// shutdown ends the store watch and every watcher.
func (c *cacher) shutdown() {
	c.proc.Lock()
	c.intake.Lock()
	if c.wsCancel != nil {
		// The watcher ends now, not in a goroutine of its context's.
		c.ws.Cancel()
		c.wsCancel()
	}
	c.intake.Unlock()
	c.proc.Unlock()
	c.cache.mu.Lock()
	old := c.watchers
	c.watchers = nil
	c.cache.mu.Unlock()
	for _, w := range old {
		w.end()
	}
}

// close stops the cacher and waits for its loop to end.
func (c *cacher) close() {
	c.stop()
	<-c.stopped
}

func (c *cacher) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// sync takes in, and dispatches, every response the store has published
// and the lag lets through: a read served after it sees every write
// acknowledged before it (unless the cache lags on purpose).
func (c *cacher) sync(ctx context.Context) {
	c.proc.Lock()
	defer c.proc.Unlock()
	_ = c.takeLocked(ctx)
}

// takeLocked takes the store's responses in as far as there are any, and
// applies those the lag lets through (the caller holds proc). It returns
// an error only when the store watch cannot go on (the store closed).
func (c *cacher) takeLocked(ctx context.Context) error {
	c.intake.Lock()
	err := c.intakeLocked(ctx)
	if err == nil && c.rewatch.due(c.reg.clock.Now()) {
		if err = c.rewatchLocked(); err == nil {
			err = c.intakeLocked(ctx)
		}
	}
	delay := c.reg.WatchCacheDelay()
	now := c.reg.clock.Now()
	n := 0
	for n < len(c.pending) && !c.pending[n].at.Add(delay).After(now) {
		n++
	}
	due := append(c.dueBuf[:0], c.pending[:n]...)
	clear(c.pending[:n])
	c.pending = append(c.pending[:0], c.pending[n:]...)
	left := len(c.pending)
	c.intake.Unlock()
	c.dueBuf = due
	defer clear(due)
	for i, p := range due {
		if p.resp.CompactRevision != 0 {
			// The store watch fell behind past a compaction: list again
			// (what was taken after it is dropped with the old watch).
			if err := c.listLocked(); err != nil {
				return err
			}
			return c.takeLocked(ctx)
		}
		c.applyLocked(due[i].resp, p.at)
	}
	if err != nil {
		return err
	}
	if c.bookmarkDue && (left == 0 || n > 0) {
		c.bookmarkDue = false
		c.dispatchBookmarksLocked()
	}
	return nil
}

// intakeLocked takes the responses the store has published into pending,
// stamped with the time they are taken (the caller holds intake). It
// returns an error once the store watch has ended for another reason than
// a compaction or the storage's (the store closed, ctx ended); a watch
// the storage ended is marked lost, to be watched again (takeLocked).
func (c *cacher) intakeLocked(ctx context.Context) error {
	if c.rewatch.waiting() {
		return nil // the store watch ended; takeLocked starts the next
	}
	for {
		resp, ok, err := c.ws.TryNext(ctx)
		if !ok {
			return err // nil: nothing more now
		}
		if resp.CompactRevision == 0 && err != nil {
			if !storeWatchLost(err) {
				return err // the store watch ended: the store closed
			}
			c.rewatch.ended(c.reg.clock.Now())
			c.wake()
			return nil
		}
		c.rewatch.took(&resp)
		c.pending = append(c.pending, pendingResponse{resp: resp, at: c.reg.clock.Now()})
		if resp.CompactRevision != 0 {
			return nil // the watch has ended; the applier lists again
		}
	}
}

// rewatchLocked starts the store watch again from the revision after the
// last one it delivered (the caller holds proc and intake): the responses
// taken in and pending go on, the cache's watchers miss and repeat
// nothing. Only a store that refuses the watch outright (closed) makes it
// fail.
func (c *cacher) rewatchLocked() error {
	if c.wsCancel != nil {
		c.ws.Cancel()
		c.wsCancel()
		c.wsCancel = nil
	}
	ws, cancel, err := c.rewatch.watch(mvcc.Uncapped(context.Background()), c.reg.kv, c.prefix)
	if err != nil {
		return err
	}
	c.ws, c.wsCancel = ws, cancel
	return nil
}

// dueLocked is when the oldest response held back by the lag is due (zero
// when none is; the caller holds intake).
func (c *cacher) dueLocked() time.Time {
	if len(c.pending) == 0 {
		return time.Time{}
	}
	return c.pending[0].at.Add(c.reg.WatchCacheDelay())
}

// applyLocked takes one response into the cache and dispatches its events
// to the watchers that were there when the cache took it (a watcher that
// joins later finds it in its initial state or window).
func (c *cacher) applyLocked(resp mvcc.WatchResponse, at time.Time) {
	c.cache.mu.Lock()
	var evs []*cacheEvent
	rev := resp.Header.Revision
	for _, ev := range resp.Events {
		if ce := c.cache.applyLocked(ev, at); ce != nil {
			evs = append(evs, ce)
		}
		rev = max(rev, ev.Kv.ModRevision)
	}
	c.cache.moveLocked(rev)
	ws := append(c.dispatchBuf[:0], c.watchers...)
	limit := c.cache.bufferLocked()
	c.cache.mu.Unlock()
	c.dispatchBuf = ws
	for _, ev := range evs {
		c.dispatchLocked(ev, ws, limit)
	}
	clear(ws)
}

// dispatchLocked offers ev to the watchers that want it; those whose
// buffer is full get what is left of the time budget to make room, one
// after the other, and are closed if they do not.
func (c *cacher) dispatchLocked(ev *cacheEvent, ws []*cacheWatcher, limit int) {
	blocked := c.blockedBuf[:0]
	for _, w := range ws {
		typ, ok := w.wants(ev)
		if !ok {
			continue
		}
		q := queued{ev: ev, typ: typ}
		if !w.offer(q, limit) {
			blocked = append(blocked, blockedWatcher{w, q})
		}
	}
	if len(blocked) > 0 {
		c.waitForRoom(blocked, limit)
	}
	clear(blocked)
	c.blockedBuf = blocked[:0]
}

func (c *cacher) waitForRoom(blocked []blockedWatcher, limit int) {
	clk := c.reg.clock
	start := clk.Now()
	budget := c.budget.take(start)
	var timer clock.Timer
	var expired <-chan time.Time
	if budget > 0 {
		timer = clk.NewTimer(budget)
		expired = timer.C()
	}
	for _, b := range blocked {
		if expired != nil && b.w.waitForRoom(b.q, limit, expired) {
			continue
		}
		// The budget is spent: the others get no more wait.
		expired = nil
		c.closeSlow(b.w)
	}
	if timer != nil {
		timer.Stop()
	}
	c.budget.giveBack(budget - clk.Now().Sub(start))
}

// closeSlow closes a watcher that did not keep up.
func (c *cacher) closeSlow(w *cacheWatcher) {
	c.remove(w)
	w.end()
	if c.reg.onSlowWatcher != nil {
		c.reg.onSlowWatcher()
	}
}

// remove takes w out of the watchers, if it is there.
func (c *cacher) remove(w *cacheWatcher) {
	c.cache.mu.Lock()
	defer c.cache.mu.Unlock()
	i := w.slot
	if i < 0 || i >= len(c.watchers) || c.watchers[i] != w {
		return
	}
	last := len(c.watchers) - 1
	c.watchers[i] = c.watchers[last]
	c.watchers[i].slot = i
	c.watchers[last] = nil
	c.watchers = c.watchers[:last]
	w.slot = -1
}

// addLocked makes w one of the watchers (the caller holds cache.mu).
func (c *cacher) addLocked(w *cacheWatcher) {
	w.slot = len(c.watchers)
	c.watchers = append(c.watchers, w)
	if w.bookmarks && !w.bookmarkAt.IsZero() {
		if c.nextBookmark.IsZero() || w.bookmarkAt.Before(c.nextBookmark) {
			c.nextBookmark = w.bookmarkAt
			c.wake()
		}
	}
}

// bookmarkTick is the bookmark timer: the cache asks its store watch for
// a progress notification first, so that the bookmarks carry the store's
// revision (as etcd's progress notifications keep kube's cache at the
// store's revision between its resource's writes), and dispatches them
// once it has taken that in.
func (c *cacher) bookmarkTick() {
	c.proc.Lock()
	defer c.proc.Unlock()
	c.cache.mu.Lock()
	c.nextBookmark = time.Time{} // until they are dispatched
	c.cache.mu.Unlock()
	c.bookmarkDue = true
	c.intake.Lock()
	asked := c.ws.RequestProgress()
	waiting := len(c.pending) > 0
	c.intake.Unlock()
	if !asked && !waiting {
		c.bookmarkDue = false
		c.dispatchBookmarksLocked()
	}
}

// dispatchBookmarksLocked gives every watcher whose bookmark is due one at
// the cache's revision, if it has room (kube never waits for a bookmark),
// and schedules its next one (the caller holds proc).
func (c *cacher) dispatchBookmarksLocked() {
	now := c.reg.clock.Now()
	interval := c.reg.BookmarkInterval()
	c.cache.mu.Lock()
	rev := c.cache.rev
	limit := c.cache.bufferLocked()
	var next time.Time
	for _, w := range c.watchers {
		if !w.bookmarks || w.bookmarkAt.IsZero() {
			continue
		}
		if !w.bookmarkAt.After(now) {
			w.offerBookmark(rev, limit)
			w.bookmarkAt = w.nextBookmarkAfter(now, interval)
			if w.bookmarkAt.IsZero() {
				continue
			}
		}
		if next.IsZero() || w.bookmarkAt.Before(next) {
			next = w.bookmarkAt
		}
	}
	c.nextBookmark = next
	c.cache.mu.Unlock()
}

// requestProgress asks the store watch for a progress notification, so
// that the cache moves to the store's revision even when nothing of its
// resource changed (kube's ConditionalProgressRequester does this while a
// consistent read waits).
func (c *cacher) requestProgress() {
	c.intake.Lock()
	c.ws.RequestProgress()
	c.intake.Unlock()
}

// fresh is the revision the cache has reached, and a channel closed when
// it moves.
func (c *cacher) fresh() (int64, <-chan struct{}) {
	c.cache.mu.RLock()
	defer c.cache.mu.RUnlock()
	return c.cache.rev, c.cache.fresh
}

// catchUp brings the cache to rev if the store's responses already allow
// it (no lag, rev reached): it takes in what the store published, and asks
// for a progress notification if that was not enough.
func (c *cacher) catchUp(ctx context.Context, rev int64) bool {
	if cur, _ := c.fresh(); cur >= rev {
		return true
	}
	c.sync(ctx)
	if cur, _ := c.fresh(); cur >= rev {
		return true
	}
	c.requestProgress()
	c.sync(ctx)
	cur, _ := c.fresh()
	return cur >= rev
}

// waitFresh waits, at most blockTimeout, for the cache to reach rev
// (kube's waitUntilFreshLocked); past it the answer is kube's 504 "Too
// large resource version" with a Retry-After of 1 s.
func (c *cacher) waitFresh(ctx context.Context, rev int64) error {
	if rev == 0 {
		c.sync(ctx) // "any" revision: what the cache has, lag and all
		return nil
	}
	if c.catchUp(ctx, rev) {
		return nil
	}
	timer := c.reg.clock.NewTimer(blockTimeout)
	defer timer.Stop()
	return c.waitFreshUntil(ctx, rev, timer)
}

// waitFreshUntil waits for the cache to reach rev until timer fires, then
// answers 504 "Too large resource version".
func (c *cacher) waitFreshUntil(ctx context.Context, rev int64, timer clock.Timer) error {
	for {
		cur, moved := c.fresh()
		if cur >= rev {
			return nil
		}
		c.requestProgress()
		select {
		case <-moved:
		case <-timer.C():
			cur, _ := c.fresh()
			if cur >= rev {
				return nil
			}
			return NewTooLargeResourceVersion(rev, cur, tooHighRetrySeconds)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// --- time --------------------------------------------------------------------

// timerAt keeps one timer of a clock armed for a time, re-arming it only
// when the time changes (a fake clock's tests count the timers made).
type timerAt struct {
	t    clock.Timer
	when time.Time
}

func (ta *timerAt) at(clk clock.Clock, when time.Time) <-chan time.Time {
	if when.IsZero() {
		ta.stop()
		return nil
	}
	if ta.t != nil && ta.when.Equal(when) {
		return ta.t.C()
	}
	ta.stop()
	ta.t, ta.when = clk.NewTimer(when.Sub(clk.Now())), when
	return ta.t.C()
}

func (ta *timerAt) fired() { ta.t, ta.when = nil, time.Time{} }

func (ta *timerAt) stop() {
	if ta.t != nil {
		ta.t.Stop()
		ta.t, ta.when = nil, time.Time{}
	}
}

// timeBudget is kube's cacher time budget: the time a dispatch may wait
// for watchers whose buffer is full, 50 ms earned per second, at most
// 100 ms (time_budget.go).
type timeBudget struct {
	budget time.Duration
	last   time.Time
}

const (
	budgetPerSecond = 50 * time.Millisecond
	maxBudget       = 100 * time.Millisecond
)

func (b *timeBudget) take(now time.Time) time.Duration {
	if earned := now.Sub(b.last); earned > 0 {
		b.budget += time.Duration(earned.Seconds() * float64(budgetPerSecond))
	}
	b.budget = min(b.budget, maxBudget)
	b.last = now
	out := b.budget
	b.budget = 0
	return out
}

func (b *timeBudget) giveBack(unused time.Duration) {
	if unused > 0 {
		b.budget = min(b.budget+unused, maxBudget)
	}
}

// --- the registry's caches ---------------------------------------------------

// cacheKey names r's cache: one per served version of a resource, as
// kube-apiserver builds one storage (and Cacher) per group-version-resource,
// even where they share their keys (a custom resource's versions,
// events.k8s.io/v1 and core/v1 Events).
func cacheKey(r *Resource) string { return r.GroupVersion() + "/" + r.Resource }

// cacherFor is r's cacher, started if it was not, or nil when the session
// runs without the watch cache. A custom resource's first cache starts
// those of its definition's other served versions too, as kube's
// crdHandler builds every version's storage when it first serves one:
// their windows begin together.
func (reg *Registry) cacherFor(r *Resource) *cacher {
	if reg.cacheOff.Load() {
		return nil
	}
	reg.cachersMu.Lock()
	defer reg.cachersMu.Unlock()
	if reg.cacheOff.Load() {
		return nil
	}
	if c := reg.cachers[cacheKey(r)]; c != nil {
		return c
	}
	c := reg.startCacherLocked(r)
	if c != nil && r.Custom() {
		for _, v := range reg.custom.versionsOf(r) {
			if reg.cachers[cacheKey(v)] == nil {
				reg.startCacherLocked(v)
			}
		}
	}
	return c
}

// startCacherLocked starts r's cacher (the caller holds cachersMu).
func (reg *Registry) startCacherLocked(r *Resource) *cacher {
	c, err := newCacher(reg, r)
	if err != nil {
		return nil // the store is closing: the etcd path answers
	}
	if reg.cachers == nil {
		reg.cachers = map[string]*cacher{}
	}
	reg.cachers[cacheKey(r)] = c
	return c
}

// startCaches starts the cache of every served resource, as kube-apiserver
// does when it starts (so that their windows begin then).
func (reg *Registry) startCaches() {
	for _, r := range Resources {
		if r.watchable() {
			reg.cacherFor(r)
		}
	}
}

// SetWatchCache turns the watch cache on (kube-apiserver's default,
// --watch-cache=true) or off: every watch and read then goes to the store,
// as kube-apiserver's --watch-cache=false makes them. Turning it off
// closes the watches the caches served; their clients watch again.
func (reg *Registry) SetWatchCache(on bool) {
	reg.cachersMu.Lock()
	was := !reg.cacheOff.Swap(!on)
	var old []*cacher
	if was && !on {
		for _, c := range reg.cachers {
			old = append(old, c)
		}
		reg.cachers = nil
	}
	reg.cachersMu.Unlock()
	for _, c := range old {
		c.close()
	}
	if on && !was && reg.booted.Load() {
		reg.startCaches()
	}
}

// WatchCache reports whether the watch cache is on.
func (reg *Registry) WatchCache() bool { return !reg.cacheOff.Load() }

// SetWatchCacheDelay makes the watch cache lag d behind the store.
func (reg *Registry) SetWatchCacheDelay(d time.Duration) {
	if d < 0 {
		d = 0
	}
	reg.cacheDelay.Store(int64(d))
	if d > 0 {
		reg.startRevisionLog()
	}
	reg.cachersMu.Lock()
	for _, c := range reg.cachers {
		c.wake()
	}
	reg.cachersMu.Unlock()
}

// wrote tells the caches of r's keys (every served version's) of a write
// the registry made. The cache stamps
// each response of the store with the time it takes it in, the time its
// window (and its lag) count from; taken here, before the write returns,
// the stamp is the write's time, not the time the cache's loop happened
// to run (a fake clock's tests and lessons move time right after a
// write). The loop applies and dispatches it: the writer never waits for
// watchers.
func (reg *Registry) wrote(r *Resource, rev int64) {
	reg.noteRevision(rev)
	prefix := r.Prefix("")
	reg.cachersMu.Lock()
	var buf [2]*cacher
	cs := buf[:0]
	for _, c := range reg.cachers {
		if c.prefix == prefix {
			cs = append(cs, c)
		}
	}
	reg.cachersMu.Unlock()
	for _, c := range cs {
		c.intake.Lock()
		_ = c.intakeLocked(context.Background()) // the loop reports the end of the store watch
		c.intake.Unlock()
		c.wake()
	}
}

// closeCaches stops every cache (Close).
func (reg *Registry) closeCaches() {
	reg.cachersMu.Lock()
	old := reg.cachers
	reg.cachers = nil
	reg.cacheOff.Store(true)
	reg.cachersMu.Unlock()
	for _, c := range old {
		c.close()
	}
}
