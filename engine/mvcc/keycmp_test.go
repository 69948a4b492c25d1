package mvcc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCompareKeysOrdersAsBytesCompare: the B-tree's key order must be
// bytes.Compare's on every build (keycmp_wasm.go has its own loop).
func TestCompareKeysOrdersAsBytesCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	key := func() []byte {
		k := make([]byte, r.IntN(40))
		for i := range k {
			k[i] = "ab\x00\xff/"[r.IntN(5)]
		}
		return k
	}
	for i := 0; i < 20000; i++ {
		a, b := key(), key()
		if r.IntN(3) == 0 {
			b = append(append([]byte(nil), a...), b[:r.IntN(len(b)+1)]...)
		}
		if got, want := compareKeys(a, b), bytes.Compare(a, b); got != want {
			t.Fatalf("compareKeys(%q, %q) = %d, want %d", a, b, got, want)
		}
	}
}

// BenchmarkCompareKeys: two 64-byte keys with a long common prefix, as
// the B-tree compares them (run it under js/wasm as well).
func BenchmarkCompareKeys(b *testing.B) {
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("%064d", i*7919%10000))
	}
	n := 0
	for i := 0; b.Loop(); i++ {
		n += compareKeys(keys[i&1023], keys[(i*7)&1023])
	}
	_ = n
}

// TestKeyTableAgreesWithAMap: the WebAssembly build's point-lookup table
// finds exactly what a Go map holds, through inserts, lookups of present
// and absent keys, and deletions (which shift probe runs back), with keys
// that share long prefixes and keys shorter than a word.
func TestKeyTableAgreesWithAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tab, want := newKeyTable(), map[string]*keyIndex{}
	key := func() []byte {
		if r.IntN(2) == 0 {
			return []byte(fmt.Sprintf("/registry/configmaps/default/%d", r.IntN(3000)))
		}
		k := make([]byte, r.IntN(12))
		for i := range k {
			k[i] = "ab\x00"[r.IntN(3)]
		}
		return k
	}
	for i := 0; i < 100000; i++ {
		k := key()
		got, w := tab.get(k), want[string(k)]
		if got != w {
			t.Fatalf("step %d: get(%q) = %v, want %v", i, k, got, w)
		}
		switch {
		case w == nil && r.IntN(3) > 0:
			ki := &keyIndex{key: k}
			tab.put(ki, tab.hash(k))
			want[string(k)] = ki
		case w != nil && r.IntN(2) == 0:
			tab.remove(k)
			delete(want, string(k))
		}
		if tab.n != len(want) {
			t.Fatalf("step %d: %d entries, want %d", i, tab.n, len(want))
		}
	}
	for k, ki := range want {
		if tab.get([]byte(k)) != ki {
			t.Fatalf("get(%q) lost its entry", k)
		}
	}
}

func TestEqualKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 20000; i++ {
		a := make([]byte, r.IntN(30))
		for j := range a {
			a[j] = "ab"[r.IntN(2)]
		}
		b := append([]byte(nil), a...)
		if len(b) > 0 && r.IntN(2) == 0 {
			b[r.IntN(len(b))] ^= 1
		}
		if r.IntN(5) == 0 {
			b = append(b, 'a')
		}
		if got := equalKeys(a, b); got != bytes.Equal(a, b) {
			t.Fatalf("equalKeys(%q, %q) = %v", a, b, got)
		}
	}
}

// TestHashWordsSpreadsLowBits: the key table indexes slots by a hash's low
// bits, so keys that differ in one digit of a long shared prefix must
// spread evenly over them.
func TestHashWordsSpreadsLowBits(t *testing.T) {
	const buckets, keys = 4096, 4096 * 16
	count := make([]int, buckets)
	for i := range keys {
		count[hashWords(fmt.Appendf(nil, "%064d", i), 42)%buckets]++
	}
	// 16 per bucket on average; Poisson(16) exceeds 40 with probability
	// about 1e-7 per bucket.
	if m := slices.Max(count); m > 40 {
		t.Fatalf("a bucket of the low 12 bits holds %d of %d keys (16 expected)", m, keys)
	}
}

func BenchmarkHashWords(b *testing.B) {
	k := fmt.Appendf(nil, "%064d", 12345)
	var sink uint64
	for i := 0; i < b.N; i++ {
		sink ^= hashWords(k, uint64(i))
	}
	_ = sink
}

// TestHashWordsSeparatesKeys: the WebAssembly build's key hash gives equal
// keys equal hashes and, for a hundred thousand distinct keys of every
// length around a word boundary, no collisions (a 64-bit hash would have
// one with probability below 1e-9).
func TestHashWordsSeparatesKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	seed := r.Uint64()
	seen := map[uint64]string{}
	for i := 0; i < 100000; i++ {
		k := make([]byte, r.IntN(20))
		for j := range k {
			k[j] = byte(r.IntN(4))
		}
		switch r.IntN(3) {
		case 0:
			k = append(k, fmt.Sprint(i)...)
		case 1:
			// etcd-like: long shared prefixes, in both lanes.
			k = fmt.Appendf(k, "/registry/configmaps/ns-%d/%0*d", i%7, r.IntN(40), i)
		}
		h := hashWords(k, seed)
		if h != hashWords(append([]byte(nil), k...), seed) {
			t.Fatalf("hashWords(%q) differs between two copies", k)
		}
		if prev, ok := seen[h]; ok && prev != string(k) {
			t.Fatalf("hashWords(%q) = hashWords(%q)", k, prev)
		}
		seen[h] = string(k)
	}
}
