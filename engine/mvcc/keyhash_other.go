//go:build !wasm

package mvcc

import "hash/maphash"

// keyHasher is Go's map hash with a random seed per table: AES-based and
// seeded, so no chosen set of keys collides on every server.
type keyHasher struct{ seed maphash.Seed }

func newKeyHasher() keyHasher              { return keyHasher{maphash.MakeSeed()} }
func (h keyHasher) hash(key []byte) uint64 { return maphash.Bytes(h.seed, key) }
