package mvcc

import (
	"bytes"
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
