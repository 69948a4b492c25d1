//go:build !wasm

package mvcc

import "unsafe"

// keyMap is the index's point-lookup table: natively Go's map, whose
// string hash uses AES instructions (keymap_wasm.go says why WebAssembly
// builds use the keyTable instead).
type keyMap struct{ m map[string]*keyIndex }

func newKeyMap() keyMap                   { return keyMap{map[string]*keyIndex{}} }
func (m keyMap) get(key []byte) *keyIndex { return m.m[string(key)] }

// put shares ki.key's bytes with the map key: ki.key is never modified.
func (m keyMap) put(ki *keyIndex) {
	m.m[unsafe.String(unsafe.SliceData(ki.key), len(ki.key))] = ki
}

func (m keyMap) remove(key []byte) { delete(m.m, string(key)) }
