package mvcc

// generation is one life of a key: from the put that created it to the
// delete that ended it (the tombstone, kept as the last revision), or still
// open. As in etcd, ver counts every revision appended to the generation,
// the tombstone included, so that the version of an older revision is
// ver minus the number of revisions after it.
type generation struct {
	ver     int64
	created int64
	revs    []indexRev
}

// indexRev is one revision of a key as the index keeps it: the revision,
// and the bytes its record holds in the backend (RecordSize), so that a
// compaction knows how much of the session's quota it frees without
// reading the records back. Sub and the size fit in 32 bits each (a txn's
// changes and a record are far smaller), which keeps an entry as small as
// a Revision.
type indexRev struct {
	main int64
	sub  int32
	size uint32
}

func (r indexRev) rev() Revision { return Revision{Main: r.main, Sub: int64(r.sub)} }

func (g *generation) isEmpty() bool { return len(g.revs) == 0 }

// keyIndex is the history of one key: its generations, oldest first. The
// last generation is empty right after a delete. latest caches the value of
// the newest put when it is the newest revision, so that reads of current
// state do not go to the backend.
type keyIndex struct {
	key         []byte
	generations []generation
	latest      *storedKV
	gen0        [1]generation // backing for the first generation: one allocation per key
	rev0        [2]indexRev   // backing for the first generation's first revisions
}

func (ki *keyIndex) isEmpty() bool {
	return len(ki.generations) == 1 && ki.generations[0].isEmpty()
}

func (ki *keyIndex) last() *generation { return &ki.generations[len(ki.generations)-1] }

// put appends a revision written with kv, whose record takes size bytes
// (its CreateRevision and Version open a new generation when the key does
// not currently exist, which also restores generations correctly from a
// compacted backend).
func (ki *keyIndex) put(rev Revision, size int64, kv *storedKV) {
	g := ki.last()
	if g.isEmpty() {
		g.created = kv.CreateRevision
		g.ver = kv.Version - 1
	}
	g.revs = append(g.revs, indexRev{main: rev.Main, sub: int32(rev.Sub), size: uint32(size)})
	g.ver++
	ki.latest = kv
}

// tombstone ends the current generation with a delete at rev, whose
// record takes size bytes.
func (ki *keyIndex) tombstone(rev Revision, size int64) {
	g := ki.last()
	g.revs = append(g.revs, indexRev{main: rev.Main, sub: int32(rev.Sub), size: uint32(size)})
	g.ver++
	ki.generations = append(ki.generations, generation{})
	ki.latest = nil
}

// get finds the revision of the key visible at atRev: the newest revision
// <= atRev in the generation that is alive at atRev. ok is false when the
// key did not exist at atRev.
func (ki *keyIndex) get(atRev int64) (mod Revision, created, ver int64, ok bool) {
	for gi := len(ki.generations) - 1; gi >= 0; gi-- {
		g := &ki.generations[gi]
		if g.isEmpty() || g.revs[0].main > atRev {
			continue
		}
		// The generation began at or before atRev. If it ended (tombstone)
		// at or before atRev, the key did not exist then.
		if gi != len(ki.generations)-1 && g.revs[len(g.revs)-1].main <= atRev {
			return Revision{}, 0, 0, false
		}
		for n := len(g.revs) - 1; n >= 0; n-- {
			if g.revs[n].main <= atRev {
				return g.revs[n].rev(), g.created, g.ver - int64(len(g.revs)-n-1), true
			}
		}
	}
	return Revision{}, 0, 0, false
}

// newestAt returns the newest put of the key when it is what a read at rev
// sees (it is the newest revision, and rev is at or after it), else nil:
// the answer for most reads, without walking generations or the backend.
func (ki *keyIndex) newestAt(rev int64) *storedKV {
	if l := ki.latest; l != nil && l.ModRevision <= rev {
		return l
	}
	return nil
}

// storedKV is a key's newest put as the index caches it, with a list of
// one: itself. A single-key read of the current value returns that list as
// its Kvs (shared, like the KeyValue, and never modified), so it needs no
// allocation of its own.
type storedKV struct {
	KeyValue
	list [1]*KeyValue
}

func (s *storedKV) init(kv KeyValue) *storedKV {
	s.KeyValue = kv
	s.list[0] = &s.KeyValue
	return s
}

// compact drops the history that compaction at atRev makes unreachable and
// appends the revisions to remove from the backend to removed, and the
// bytes their records held to *freed: for each key, the newest revision at
// or before atRev is kept unless it is a tombstone; everything older goes,
// with the generations it ended. (etcd 3.4 and the rule; later etcd
// releases keep a tombstone exactly at atRev.)
func (ki *keyIndex) compact(atRev int64, removed []Revision, freed *int64) []Revision {
	gi := 0
	for gi < len(ki.generations)-1 {
		g := &ki.generations[gi]
		if tomb := g.revs[len(g.revs)-1].main; tomb >= atRev {
			break
		}
		removed = dropRevs(g.revs, removed, freed)
		gi++
	}
	g := &ki.generations[gi]
	if !g.isEmpty() {
		keep := -1
		for n := len(g.revs) - 1; n >= 0; n-- {
			if g.revs[n].main <= atRev {
				keep = n
				break
			}
		}
		if keep > 0 {
			removed = dropRevs(g.revs[:keep], removed, freed)
			g.revs = append([]indexRev(nil), g.revs[keep:]...)
		}
		if len(g.revs) == 1 && gi != len(ki.generations)-1 && g.revs[0].main <= atRev {
			// Only the tombstone that ended this generation is left.
			removed = dropRevs(g.revs, removed, freed)
			gi++
		}
	}
	if gi > 0 {
		ki.generations = append([]generation(nil), ki.generations[gi:]...)
	}
	return removed
}

func dropRevs(revs []indexRev, removed []Revision, freed *int64) []Revision {
	for _, r := range revs {
		removed = append(removed, r.rev())
		*freed += int64(r.size)
	}
	return removed
}

// keyIndexUndo restores a keyIndex to the state before a write txn touched
// it, should the txn fail half way (it appends only, so lengths suffice).
type keyIndexUndo struct {
	ki       *keyIndex
	existed  bool
	gens     int
	lastRevs int
	lastVer  int64
	lastCrt  int64
	latest   *storedKV
}

func (u *keyIndexUndo) restore(t *treeIndex) {
	if !u.existed {
		t.order.remove(u.ki.key)
		t.byKey.remove(u.ki.key)
		return
	}
	ki := u.ki
	ki.generations = ki.generations[:u.gens]
	g := ki.last()
	g.revs = g.revs[:u.lastRevs]
	g.ver = u.lastVer
	g.created = u.lastCrt
	ki.latest = u.latest
}

// treeIndex maps keys to their keyIndex: a hash table for single keys
// (the most common lookup, and key comparisons are slow in WebAssembly) and
// a B+ tree beside it for ranges.
type treeIndex struct {
	order *keyOrder
	byKey *keyTable
}

func newTreeIndex() *treeIndex {
	return &treeIndex{byKey: newKeyTable(), order: newKeyOrder()}
}

func (t *treeIndex) lookup(key []byte) *keyIndex {
	return t.byKey.get(key)
}

// keyFor returns the keyIndex of key, creating it, and the undo record of
// its state before the caller changes it.
func (t *treeIndex) keyFor(key []byte) (*keyIndex, keyIndexUndo) {
	h := t.byKey.hash(key)
	if ki := t.byKey.getHashed(key, h); ki != nil {
		g := ki.last()
		return ki, keyIndexUndo{ki: ki, existed: true, gens: len(ki.generations),
			lastRevs: len(g.revs), lastVer: g.ver, lastCrt: g.created, latest: ki.latest}
	}
	ki := &keyIndex{key: append([]byte(nil), key...)}
	ki.generations = ki.gen0[:]
	ki.gen0[0].revs = ki.rev0[:0]
	t.order.insert(ki)
	t.byKey.put(ki, h)
	return ki, keyIndexUndo{ki: ki}
}

// span returns the cursors bounding a range of more than one key: from its
// first key to the first key past it (the end cursor when end is empty,
// meaning every key >= key). from equals to when the range holds no key.
func (t *treeIndex) span(key, end []byte) (from, to orderCursor) {
	from = t.order.seek(key)
	if len(end) == 0 {
		return from, orderCursor{}
	}
	if compareKeys(key, end) >= 0 {
		return from, from
	}
	return from, t.order.seek(end)
}

// visit calls fn for the keyIndex of every key in the range: the single key
// when end is nil, every key >= key when end is empty but not nil, else
// [key, end). It stops when fn returns false. fn must not add or remove
// keys.
func (t *treeIndex) visit(key, end []byte, fn func(*keyIndex) bool) {
	if end == nil {
		if ki := t.lookup(key); ki != nil {
			fn(ki)
		}
		return
	}
	for c, stop := t.span(key, end); !c.at(stop) && fn(c.ki()); c.next() {
	}
}
