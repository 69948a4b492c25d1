package kube

import (
	"encoding/binary"
	"encoding/hex"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
)

// Options configure a Registry.
type Options struct {
	// Clock is the time source (default: the wall clock).
	Clock clock.Clock
	// NewUID makes metadata.uid values (default: random UUIDv4).
	NewUID func() string
	// FieldManager keeps managedFields for Update operations (default:
	// the built-in one).
	FieldManager FieldManager
	// Applier is server-side apply (default: SchemaApplier).
	Applier Applier
	// Patcher applies json, merge and strategic patches (default:
	// SchemaPatcher).
	Patcher Patcher
	// WatchCache serves watches, and the reads kube-apiserver serves from
	// its watch cache, from one cache per resource (cacher.go), as
	// kube-apiserver's --watch-cache (its default) does. Without it every
	// watch and read goes to the store, as --watch-cache=false makes them:
	// the etcd-level behaviour (a session's watchCache setting, on by
	// default, calls SetWatchCache).
	WatchCache bool
	// WatchCacheDelay makes the watch cache lag this far behind the store:
	// its watches, bookmarks and reads see each write that much later.
	// 0: no lag.
	WatchCacheDelay time.Duration
	// WatchCacheBytes bounds the values one resource's window of events
	// holds (default DefaultWatchCacheBytes).
	WatchCacheBytes int64
	// BookmarkInterval is how often a watch with allowWatchBookmarks gets a
	// BOOKMARK (default one minute, as kube-apiserver).
	BookmarkInterval time.Duration
	// MinRequestTimeout bounds watches without timeoutSeconds (default
	// 1800 s).
	MinRequestTimeout time.Duration
	// SystemNamespaces are created before the first Kubernetes request;
	// nil means default, kube-system, kube-public and kube-node-lease.
	SystemNamespaces []string
}

// Registry is a session's registry of resources: what kube-apiserver's
// storage registry (genericregistry.Store) does for each resource of the
// table, over one KV store. The HTTP side is package kubeapi's. It is safe
// for concurrent use.
type Registry struct {
	kv      KV
	clock   clock.Clock
	newUID  func() string
	fm      FieldManager
	applier Applier
	patcher Patcher

	cacheDelay       atomic.Int64 // time.Duration
	bookmarkInterval atomic.Int64 // time.Duration
	minTimeout       time.Duration
	systemNS         []string

	bootMu sync.Mutex
	booted atomic.Bool

	// The watch caches, by resource prefix (cacher.go).
	cacheOff   atomic.Bool
	cachersMu  sync.Mutex
	cachers    map[string]*cacher
	cacheBytes int64
	// onSlowWatcher, if set, is told when a cache closes a watcher that
	// did not keep up.
	onSlowWatcher func()

	// The lag of resourceVersion "0" reads with the cache off (anyread.go).
	revMu   sync.Mutex
	revLog  *revisionLog
	revStop func()

	custom customResources

	// The lease objects with a TTL are put with (lease.go), and the one of
	// those stored in another resource's form (events.k8s.io/v1 Events:
	// kube gives each resource's storage its own manager).
	leases, convertedLeases leaseManager
}

// New returns a Registry over kv.
func New(kv KV, o Options) *Registry {
	s := &Registry{kv: kv, clock: o.Clock, newUID: o.NewUID, fm: o.FieldManager,
		applier: o.Applier, patcher: o.Patcher, minTimeout: o.MinRequestTimeout, systemNS: o.SystemNamespaces,
		cacheBytes: o.WatchCacheBytes}
	s.cacheOff.Store(!o.WatchCache)
	if s.clock == nil {
		s.clock = clock.Real{}
	}
	if s.applier == nil {
		s.applier = SchemaApplier{}
	}
	if s.patcher == nil {
		s.patcher = SchemaPatcher{}
	}
	if s.newUID == nil {
		s.newUID = randomUID
	}
	if s.fm == nil {
		s.fm = SchemaFieldManager{}
	}
	if s.minTimeout == 0 {
		s.minTimeout = 1800 * time.Second
	}
	if s.systemNS == nil {
		s.systemNS = []string{"default", "kube-system", "kube-public", "kube-node-lease"}
	}
	bi := o.BookmarkInterval
	if bi == 0 {
		bi = time.Minute
	}
	s.bookmarkInterval.Store(int64(bi))
	s.SetWatchCacheDelay(o.WatchCacheDelay)
	return s
}

// Close stops the registry's watch caches (the watches they served end)
// and its other background work.
func (reg *Registry) Close() {
	reg.closeCaches()
	reg.stopRevisionLog()
}

// OnSlowWatcher tells f whenever a watch cache closes a watcher that did
// not keep up (the server's metrics count them).
func (reg *Registry) OnSlowWatcher(f func()) { reg.onSlowWatcher = f }

// KV is the store the registry runs over.
func (reg *Registry) KV() KV { return reg.kv }

// Clock is the registry's time source.
func (reg *Registry) Clock() clock.Clock { return reg.clock }

// SetBookmarkInterval changes the interval of watch bookmarks.
func (reg *Registry) SetBookmarkInterval(d time.Duration) {
	if d > 0 {
		reg.bookmarkInterval.Store(int64(d))
	}
}

// BookmarkInterval is the interval of watch bookmarks.
func (reg *Registry) BookmarkInterval() time.Duration {
	return time.Duration(reg.bookmarkInterval.Load())
}

// WatchCacheDelay is how far the watch cache lags behind the store.
func (reg *Registry) WatchCacheDelay() time.Duration { return time.Duration(reg.cacheDelay.Load()) }

func randomUID() string {
	// math/rand/v2's generator is seeded from the OS and is unpredictable
	// enough for UIDs; crypto/rand would add 55 KB gzip to the browser build.
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], mrand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], mrand.Uint64())
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (reg *Registry) now() time.Time { return reg.clock.Now().UTC().Truncate(time.Second) }

func (reg *Registry) timestamp() string { return reg.now().Format(time.RFC3339) }
