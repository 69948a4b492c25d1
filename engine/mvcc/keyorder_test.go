package mvcc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// check verifies the tree's invariants: every leaf in the chain sorted,
// the chain in order and linked both ways, every inner node's keys bounding
// its children, the counts right. It returns the keys in chain order.
func (t *keyOrder) check(tb testing.TB) [][]byte {
	tb.Helper()
	var keys [][]byte
	leaves := 0
	var prev *orderLeaf
	for l := t.first; l != nil; l = l.next {
		leaves++
		if l.prev != prev {
			tb.Fatalf("leaf %d: prev link broken", leaves)
		}
		if l.n == 0 && t.root != nil {
			tb.Fatalf("leaf %d: empty leaf in a tree of %d leaves", leaves, t.leaves)
		}
		for i := 0; i < l.n; i++ {
			if !bytes.Equal(l.keys[i], l.kis[i].key) {
				tb.Fatalf("leaf %d entry %d: key %q beside keyIndex of %q", leaves, i, l.keys[i], l.kis[i].key)
			}
			if len(keys) > 0 && bytes.Compare(keys[len(keys)-1], l.keys[i]) >= 0 {
				tb.Fatalf("keys out of order: %q then %q", keys[len(keys)-1], l.keys[i])
			}
			keys = append(keys, l.keys[i])
		}
		for i := l.n; i < len(l.keys); i++ {
			if l.keys[i] != nil || l.kis[i] != nil {
				tb.Fatalf("leaf %d keeps a reference past its %d entries", leaves, l.n)
			}
		}
		prev = l
	}
	if leaves != t.leaves || len(keys) != t.len {
		tb.Fatalf("counted %d leaves and %d keys, the tree says %d and %d", leaves, len(keys), t.leaves, t.len)
	}
	if t.root != nil {
		var walk func(n *orderInner, h int, lo, hi []byte) int
		walk = func(n *orderInner, h int, lo, hi []byte) int {
			if n.n < 1 || (n == t.root && n.n < 2) {
				tb.Fatalf("inner node at height %d with %d children", h, n.n)
			}
			found := 0
			for i := 0; i < n.n; i++ {
				clo, chi := lo, hi
				if i > 0 {
					clo = n.keys[i]
				}
				if i+1 < n.n {
					chi = n.keys[i+1]
				}
				if h == 1 {
					l := n.leaves[i]
					for j := 0; j < l.n; j++ {
						if (clo != nil && bytes.Compare(l.keys[j], clo) < 0) || (chi != nil && bytes.Compare(l.keys[j], chi) >= 0) {
							tb.Fatalf("key %q outside its bounds [%q, %q)", l.keys[j], clo, chi)
						}
					}
					found++
				} else {
					found += walk(n.inner[i], h-1, clo, chi)
				}
			}
			return found
		}
		if n := walk(t.root, t.height, nil, nil); n != t.leaves {
			tb.Fatalf("the inner nodes reach %d leaves, the chain has %d", n, t.leaves)
		}
	}
	return keys
}

func orderKey(r *rand.Rand) []byte {
	// Long shared prefixes and a few lengths, as etcd keys have.
	switch r.IntN(3) {
	case 0:
		return fmt.Appendf(nil, "/registry/configmaps/ns%d/cm-%d", r.IntN(4), r.IntN(3000))
	case 1:
		return fmt.Appendf(nil, "%064d", r.IntN(3000))
	}
	return []byte{byte(r.IntN(4)), byte(r.IntN(256))}
}

// TestKeyOrderAgreesWithASortedList drives the tree with random inserts and
// removals and checks, after each step, its invariants, its keys against a
// sorted list, and seek and span against a search of that list.
func TestKeyOrderAgreesWithASortedList(t *testing.T) {
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 1))
		tree := newKeyOrder()
		var model [][]byte
		for step := range 6000 {
			k := orderKey(r)
			i, found := slices.BinarySearchFunc(model, k, bytes.Compare)
			// Grow for the first half, then shrink: removals reach empty
			// leaves, collapsing roots and rebuilds.
			if step < 3000 || r.IntN(4) == 0 {
				if !found {
					tree.insert(&keyIndex{key: k})
					model = slices.Insert(model, i, k)
				}
			} else if found {
				tree.remove(k)
				model = slices.Delete(model, i, i+1)
			} else {
				tree.remove(k) // absent: no change
			}
			if step%97 != 0 && step < 5900 {
				continue
			}
			if got := tree.check(t); !slices.EqualFunc(got, model, bytes.Equal) {
				t.Fatalf("seed %d step %d: the tree holds %d keys, the list %d", seed, step, len(got), len(model))
			}
			for range 20 {
				from, end := orderKey(r), orderKey(r)
				c := tree.seek(from)
				at, _ := slices.BinarySearchFunc(model, from, bytes.Compare)
				if at == len(model) {
					if c.valid() {
						t.Fatalf("seek(%q) = %q, want the end", from, c.ki().key)
					}
					continue
				}
				if !c.valid() || !bytes.Equal(c.ki().key, model[at]) {
					t.Fatalf("seek(%q): want %q", from, model[at])
				}
				stop := tree.seek(end)
				to, _ := slices.BinarySearchFunc(model, end, bytes.Compare)
				if to >= at {
					if got := span(c, stop, 1<<30); got != to-at {
						t.Fatalf("span [%q, %q) = %d, want %d", from, end, got, to-at)
					}
					if got := span(c, stop, 5); got != min(to-at, 5) {
						t.Fatalf("span [%q, %q) limited to 5 = %d, want %d", from, end, got, min(to-at, 5))
					}
				}
			}
		}
		// Remove everything: the tree ends as one empty leaf.
		for _, k := range slices.Clone(model) {
			tree.remove(k)
		}
		tree.check(t)
		if tree.root != nil || tree.len != 0 || tree.seekFirst().valid() {
			t.Fatalf("seed %d: emptied tree has root %v, %d keys", seed, tree.root != nil, tree.len)
		}
	}
}

// TestKeyOrderInATallTree does the same with enough keys for inner nodes
// above inner nodes (splits and collapses of those), checking less often.
func TestKeyOrderInATallTree(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	const n = 200_000
	tree := newKeyOrder()
	model := make([][]byte, n)
	for i, v := range r.Perm(n) {
		model[i] = fmt.Appendf(nil, "/registry/pods/default/%08d", v)
		tree.insert(&keyIndex{key: model[i]})
	}
	if tree.height < 2 {
		t.Fatalf("%d keys made a tree of height %d; the test needs 2", n, tree.height)
	}
	slices.SortFunc(model, bytes.Compare)
	for round := 0; len(model) > 0; round++ {
		if got := tree.check(t); !slices.EqualFunc(got, model, bytes.Equal) {
			t.Fatalf("round %d: the tree holds %d keys, the list %d", round, len(got), len(model))
		}
		for range 100 {
			from := fmt.Appendf(nil, "/registry/pods/default/%08d", r.IntN(n+10))
			at, _ := slices.BinarySearchFunc(model, from, bytes.Compare)
			if c := tree.seek(from); at < len(model) != c.valid() || (c.valid() && !bytes.Equal(c.ki().key, model[at])) {
				t.Fatalf("round %d: seek(%q) disagrees with the list", round, from)
			}
		}
		// Remove a random half, or the rest once few are left.
		keep := model[:0]
		for _, k := range model {
			if len(model) > 100 && r.IntN(2) == 0 {
				keep = append(keep, k)
			} else {
				tree.remove(k)
			}
		}
		model = keep
	}
	tree.check(t)
	if tree.root != nil || tree.len != 0 {
		t.Fatalf("emptied tree has root %v, %d keys", tree.root != nil, tree.len)
	}
}

// TestKeyOrderFillsLeavesWhenKeysComeInOrder: keys inserted in ascending
// order (a rebuild, a bulk load) leave full leaves behind, not half-empty.
func TestKeyOrderFillsLeavesWhenKeysComeInOrder(t *testing.T) {
	tree := newKeyOrder()
	const n = 100 * orderMax
	for i := range n {
		tree.insert(&keyIndex{key: fmt.Appendf(nil, "%08d", i)})
	}
	tree.check(t)
	if tree.leaves != n/orderMax {
		t.Fatalf("%d keys in order fill %d leaves, want %d", n, tree.leaves, n/orderMax)
	}
}

// TestKeyOrderRepacksAfterMassRemoval: once most keys are gone, the tree is
// rebuilt, so a range walks about one leaf per 64 live keys.
func TestKeyOrderRepacksAfterMassRemoval(t *testing.T) {
	tree := newKeyOrder()
	const n = 100 * orderMax
	for i := range n {
		tree.insert(&keyIndex{key: fmt.Appendf(nil, "%08d", i)})
	}
	for i := range n {
		if i%50 != 0 {
			tree.remove(fmt.Appendf(nil, "%08d", i))
		}
	}
	tree.check(t)
	if live := n / 50; tree.leaves > live*8/orderMax+1 {
		t.Fatalf("%d live keys spread over %d leaves", live, tree.leaves)
	}
}

// BenchmarkKeyOrderInsert inserts 64-byte keys in random order into a tree
// of up to 100,000 keys (the store's Put benchmarks insert them in order).
func BenchmarkKeyOrderInsert(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]*keyIndex, 100_000)
	for i, v := range r.Perm(len(keys)) {
		keys[i] = &keyIndex{key: fmt.Appendf(nil, "%064d", v)}
	}
	tree := newKeyOrder()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%len(keys) == 0 {
			tree = newKeyOrder()
		}
		tree.insert(keys[i%len(keys)])
	}
}
