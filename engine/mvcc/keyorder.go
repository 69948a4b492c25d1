package mvcc

// keyOrder keeps the index's keys in byte order, for ranges: a B+ tree
// whose leaves hold the keys with their keyIndex and are chained left to
// right. A range is two descents (its first key and its end) and then a
// plain loop along the leaves with a cursor: no callback and no key
// comparison per key, and the leaves' sizes bound the number of keys in the
// range before any is read, so a listing allocates its result once.
//
// It replaced github.com/google/btree, whose iteration calls a closure per
// item, so that a bounded range cost two indirect calls and one key
// comparison per key. WebAssembly makes each of those dear (a Go call
// there spills to the Go stack and checks for a stack switch; a 64-byte
// comparison is a loop instead of vector instructions): the browser's
// engine listed 100 keys at under a third of native speed.
type keyOrder struct {
	root   *orderInner // nil while the whole tree is the one leaf, first
	first  *orderLeaf  // the leftmost leaf; never nil
	height int         // levels of inner nodes above the leaves
	len    int         // keys
	leaves int         // leaves in the chain
}

// orderMax is the most keys a leaf (or children an inner node) holds. The
// arrays have room for one more, so that a node takes the new entry first
// and then splits.
const orderMax = 64

type orderLeaf struct {
	n          int
	keys       [orderMax + 1][]byte // keys[i] is kis[i].key
	kis        [orderMax + 1]*keyIndex
	prev, next *orderLeaf
}

// orderInner routes a key to child i when keys[i] <= key < keys[i+1]
// (keys[0] is unused: child 0 takes everything below keys[1]). Its children
// are leaves at height 1 and inner nodes above.
type orderInner struct {
	n      int
	keys   [orderMax + 1][]byte
	inner  [orderMax + 1]*orderInner
	leaves [orderMax + 1]*orderLeaf
}

func newKeyOrder() *keyOrder {
	return &keyOrder{first: &orderLeaf{}, leaves: 1}
}

// child returns the index of the child whose keys include key.
func (n *orderInner) child(key []byte) int {
	lo, hi := 1, n.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if compareKeys(n.keys[m], key) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// search returns the position of the first key >= key in the leaf.
func (l *orderLeaf) search(key []byte) int {
	lo, hi := 0, l.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if compareKeys(l.keys[m], key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// leafFor descends to the leaf whose keys include key.
func (t *keyOrder) leafFor(key []byte) *orderLeaf {
	if t.root == nil {
		return t.first
	}
	n := t.root
	for h := t.height; h > 1; h-- {
		n = n.inner[n.child(key)]
	}
	return n.leaves[n.child(key)]
}

// insert adds ki, whose key the tree does not hold yet.
func (t *keyOrder) insert(ki *keyIndex) {
	t.len++
	if t.root == nil {
		if sib := t.insertLeaf(t.first, ki, true); sib != nil {
			t.root = &orderInner{n: 2}
			t.root.leaves[0], t.root.leaves[1], t.root.keys[1] = t.first, sib, sib.keys[0]
			t.height = 1
		}
		return
	}
	if sib := t.insertInner(t.root, t.height, ki, true); sib != nil {
		r := &orderInner{n: 2}
		r.inner[0], r.inner[1], r.keys[1] = t.root, sib, sib.keys[0]
		t.root = r
		t.height++
	}
}

// insertInner inserts under n (at height h) and returns n's new right
// sibling if n split; its keys[0] is then the sibling's lower bound. last
// says n is the rightmost node of its level.
func (t *keyOrder) insertInner(n *orderInner, h int, ki *keyIndex, last bool) *orderInner {
	i := n.child(ki.key)
	last = last && i == n.n-1
	var bound []byte
	if h == 1 {
		sib := t.insertLeaf(n.leaves[i], ki, last)
		if sib == nil {
			return nil
		}
		copy(n.leaves[i+2:n.n+1], n.leaves[i+1:n.n])
		n.leaves[i+1], bound = sib, sib.keys[0]
	} else {
		sib := t.insertInner(n.inner[i], h-1, ki, last)
		if sib == nil {
			return nil
		}
		copy(n.inner[i+2:n.n+1], n.inner[i+1:n.n])
		n.inner[i+1], bound = sib, sib.keys[0]
	}
	copy(n.keys[i+2:n.n+1], n.keys[i+1:n.n])
	n.keys[i+1] = bound
	n.n++
	if n.n <= orderMax {
		return nil
	}
	m := splitPoint(n.n, last && i+1 == n.n-1)
	sib := &orderInner{n: n.n - m}
	copy(sib.keys[:], n.keys[m:n.n])
	clear(n.keys[m:n.n])
	if h == 1 {
		copy(sib.leaves[:], n.leaves[m:n.n])
		clear(n.leaves[m:n.n])
	} else {
		copy(sib.inner[:], n.inner[m:n.n])
		clear(n.inner[m:n.n])
	}
	n.n = m
	return sib
}

// insertLeaf inserts ki into l and returns l's new right sibling if l split.
func (t *keyOrder) insertLeaf(l *orderLeaf, ki *keyIndex, last bool) *orderLeaf {
	i := l.search(ki.key)
	copy(l.keys[i+1:l.n+1], l.keys[i:l.n])
	copy(l.kis[i+1:l.n+1], l.kis[i:l.n])
	l.keys[i], l.kis[i] = ki.key, ki
	l.n++
	if l.n <= orderMax {
		return nil
	}
	m := splitPoint(l.n, last && i == l.n-1)
	sib := &orderLeaf{n: l.n - m, prev: l, next: l.next}
	copy(sib.keys[:], l.keys[m:l.n])
	copy(sib.kis[:], l.kis[m:l.n])
	clear(l.keys[m:l.n])
	clear(l.kis[m:l.n])
	l.n = m
	if l.next != nil {
		l.next.prev = sib
	}
	l.next = sib
	t.leaves++
	return sib
}

// splitPoint is where a node of n entries splits: in half, except when the
// new entry went to the end of the rightmost node. Keys written in
// ascending order (a bulk load, a restart's rebuild, names handed out in
// order) then leave full nodes behind instead of half-empty ones.
func splitPoint(n int, appended bool) int {
	if appended {
		return n - 1
	}
	return n / 2
}

// remove deletes the entry of key, if the tree holds it.
func (t *keyOrder) remove(key []byte) {
	var path [32]struct {
		n *orderInner
		i int
	}
	l := t.first
	if t.root != nil {
		n := t.root
		for h := t.height; h >= 1; h-- {
			i := n.child(key)
			path[h] = struct {
				n *orderInner
				i int
			}{n, i}
			if h > 1 {
				n = n.inner[i]
			} else {
				l = n.leaves[i]
			}
		}
	}
	i := l.search(key)
	if i == l.n || !equalKeys(l.keys[i], key) {
		return
	}
	copy(l.keys[i:l.n-1], l.keys[i+1:l.n])
	copy(l.kis[i:l.n-1], l.kis[i+1:l.n])
	l.n--
	l.keys[l.n], l.kis[l.n] = nil, nil
	t.len--
	if l.n == 0 && t.root != nil {
		// Unchain the empty leaf and drop it from its parent, and any
		// parent left empty from its own.
		if l.prev != nil {
			l.prev.next = l.next
		} else {
			t.first = l.next
		}
		if l.next != nil {
			l.next.prev = l.prev
		}
		t.leaves--
		for h := 1; h <= t.height; h++ {
			n, i := path[h].n, path[h].i
			copy(n.keys[i:n.n-1], n.keys[i+1:n.n])
			copy(n.leaves[i:n.n-1], n.leaves[i+1:n.n])
			copy(n.inner[i:n.n-1], n.inner[i+1:n.n])
			n.n--
			n.keys[n.n], n.leaves[n.n], n.inner[n.n] = nil, nil, nil
			if n.n > 0 {
				break
			}
		}
		// A root with one child hands the root role down.
		for t.root != nil && t.root.n == 1 {
			if t.height == 1 {
				t.root, t.height = nil, 0
			} else {
				t.root = t.root.inner[0]
				t.height--
			}
		}
	}
	// Deletes leave leaves partly empty; once they hold on average fewer
	// than an eighth of what they can, the tree is rebuilt packed, so
	// that memory and range walks follow the live keys.
	if t.leaves > 1 && t.len*8 < t.leaves*orderMax {
		t.rebuild()
	}
}

// rebuild packs the tree: the keys are inserted again, in order, which
// fills each leaf before the next (see splitPoint).
func (t *keyOrder) rebuild() {
	packed := newKeyOrder()
	for c := t.seekFirst(); c.valid(); c.next() {
		packed.insert(c.ki())
	}
	*t = *packed
}

// orderCursor is a position in the key order: a leaf and an entry of it,
// or the end (a nil leaf).
type orderCursor struct {
	leaf *orderLeaf
	i    int
}

func (c orderCursor) valid() bool           { return c.leaf != nil }
func (c orderCursor) ki() *keyIndex         { return c.leaf.kis[c.i] }
func (c orderCursor) at(d orderCursor) bool { return c.leaf == d.leaf && c.i == d.i }

func (c *orderCursor) next() {
	c.i++
	if c.i >= c.leaf.n {
		c.leaf, c.i = c.leaf.next, 0
	}
}

// run returns the keys from c to the end of c's leaf or to end, whichever
// comes first, and the cursor past them.
func (c orderCursor) run(end orderCursor) ([]*keyIndex, orderCursor) {
	if c.leaf == end.leaf {
		return c.leaf.kis[c.i:end.i], end
	}
	return c.leaf.kis[c.i:c.leaf.n], orderCursor{c.leaf.next, 0}
}

func (t *keyOrder) seekFirst() orderCursor {
	c := orderCursor{leaf: t.first}
	if c.leaf.n == 0 {
		c.leaf = nil
	}
	return c
}

// seek returns the cursor at the first key >= key, or the end.
func (t *keyOrder) seek(key []byte) orderCursor {
	l := t.leafFor(key)
	c := orderCursor{l, l.search(key)}
	if c.i >= l.n {
		// Past the leaf's last key: the next leaf starts above key.
		c.leaf, c.i = l.next, 0
	}
	return c
}

// span bounds the number of keys from c up to (not including) end, at
// most limit: it adds up leaf sizes, so it reads one leaf per 64 keys.
func span(c, end orderCursor, limit int) int {
	n := 0
	for l := c.leaf; l != nil && n < limit; l = l.next {
		if l == end.leaf {
			return min(n+end.i-c.i, limit)
		}
		n += l.n - c.i
		c.i = 0
	}
	return min(n, limit)
}
