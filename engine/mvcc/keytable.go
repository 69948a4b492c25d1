package mvcc

import (
	"math/bits"
	"unsafe"
)

// keyTable is the index's point-lookup table: key bytes to their keyIndex,
// beside the B-tree that orders them. It is open addressing with linear
// probing and backward-shift deletion, kept at most half full, and it stores
// each entry's hash: growing never rehashes a key, a probe compares hashes
// before bytes, and keyFor hashes a new key once for its lookup and its
// insert. With a Go map those three cost a quarter of a put of a new key.
// The hash is Go's own seeded one natively (hash/maphash, AES instructions);
// under WebAssembly, where maphash falls back to a byte-at-a-time hash and
// a byte-at-a-time compare made point lookups the largest cost of a
// single-key range in the browser, keys are hashed and compared eight bytes
// at a time (keyhash_wasm.go).
type keyTable struct {
	slots []keySlot // length a power of two; ki == nil marks a free slot
	n     int
	h     keyHasher
}

type keySlot struct {
	hash uint64
	ki   *keyIndex
}

func newKeyTable() *keyTable {
	return &keyTable{slots: make([]keySlot, 16), h: newKeyHasher()}
}

func (t *keyTable) hash(key []byte) uint64 { return t.h.hash(key) }

func (t *keyTable) get(key []byte) *keyIndex { return t.getHashed(key, t.hash(key)) }

// getHashed is get for a key whose hash the caller has.
func (t *keyTable) getHashed(key []byte, h uint64) *keyIndex {
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.ki == nil {
			return nil
		}
		if s.hash == h && equalKeys(s.ki.key, key) {
			return s.ki
		}
	}
}

// put adds ki under ki.key, which must not be in the table yet; h is the
// key's hash.
func (t *keyTable) put(ki *keyIndex, h uint64) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	t.insert(keySlot{h, ki})
	t.n++
}

func (t *keyTable) insert(s keySlot) {
	mask := uint64(len(t.slots) - 1)
	i := s.hash & mask
	for t.slots[i].ki != nil {
		i = (i + 1) & mask
	}
	t.slots[i] = s
}

func (t *keyTable) grow() {
	old := t.slots
	t.slots = make([]keySlot, 2*len(old))
	for _, s := range old {
		if s.ki != nil {
			t.insert(s)
		}
	}
}

// remove deletes key if present. The entries after it in its probe run
// move back, so that lookups never need tombstones.
func (t *keyTable) remove(key []byte) {
	h := t.hash(key)
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for {
		s := &t.slots[i]
		if s.ki == nil {
			return
		}
		if s.hash == h && equalKeys(s.ki.key, key) {
			break
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; t.slots[j].ki != nil; j = (j + 1) & mask {
		// The entry at j may fill the hole at i unless its home slot lies
		// cyclically in (i, j].
		home := t.slots[j].hash & mask
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = keySlot{}
	t.n--
}

// hashWords mixes key eight bytes at a time (unaligned little-endian loads
// and a multiply-xorshift per word, as in the wyhash/xxhash family), in two
// lanes so that the multiplies of neighbouring words overlap, and ends with
// murmur3's finaliser, which needs no 128-bit product (math/bits.Mul64 is
// not an instruction under WebAssembly).
func hashWords(key []byte, seed uint64) uint64 {
	const m1, m2 = 0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9
	a := seed ^ uint64(len(key))*m1
	b := seed*m2 ^ m1
	p := unsafe.Pointer(unsafe.SliceData(key))
	n := uintptr(len(key))
	i := uintptr(0)
	for ; i+16 <= n; i += 16 {
		a = (a ^ *(*uint64)(unsafe.Add(p, i))) * m2
		b = (b ^ *(*uint64)(unsafe.Add(p, i+8))) * m2
		a ^= a >> 31
		b ^= b >> 31
	}
	if i+8 <= n {
		a = (a ^ *(*uint64)(unsafe.Add(p, i))) * m2
		a ^= a >> 31
		i += 8
	}
	if i < n {
		var w uint64
		for j := i; j < n; j++ {
			w |= uint64(*(*byte)(unsafe.Add(p, j))) << (8 * (j - i))
		}
		b = (b ^ w) * m2
		b ^= b >> 31
	}
	h := a ^ bits.RotateLeft64(b, 29)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// equalKeys reports a == b, eight bytes at a time.
func equalKeys(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	pa, pb := unsafe.Pointer(unsafe.SliceData(a)), unsafe.Pointer(unsafe.SliceData(b))
	n := uintptr(len(a))
	i := uintptr(0)
	for ; i+8 <= n; i += 8 {
		if *(*uint64)(unsafe.Add(pa, i)) != *(*uint64)(unsafe.Add(pb, i)) {
			return false
		}
	}
	for ; i < n; i++ {
		if *(*byte)(unsafe.Add(pa, i)) != *(*byte)(unsafe.Add(pb, i)) {
			return false
		}
	}
	return true
}
