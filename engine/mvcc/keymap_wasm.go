//go:build wasm

package mvcc

// keyMap is the index's point-lookup table: under WebAssembly the keyTable
// (word-at-a-time hash and compare), see keytable.go for why.
type keyMap struct{ t *keyTable }

func newKeyMap() keyMap                   { return keyMap{newKeyTable()} }
func (m keyMap) get(key []byte) *keyIndex { return m.t.get(key) }
func (m keyMap) put(ki *keyIndex)         { m.t.put(ki) }
func (m keyMap) remove(key []byte)        { m.t.remove(key) }
