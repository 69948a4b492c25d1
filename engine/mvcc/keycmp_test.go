package mvcc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
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
