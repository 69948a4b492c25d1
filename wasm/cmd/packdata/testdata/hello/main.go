// Command hello is a small Go program for js/wasm whose output depends on
// its initialised data: packdata's test runs it before and after packing.
package main

import (
	"fmt"
	"hash/crc32"
	"sort"
	"strings"
)

// sparse is initialised data with runs of zeros of several lengths, as the
// linker lays out type descriptors and tables.
var sparse = [...]uint32{1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6}

var words = map[string]int{"revision": 3, "compaction": 1, "watch": 2}

func main() {
	sum := crc32.NewIEEE()
	for _, v := range sparse {
		fmt.Fprint(sum, v)
	}
	keys := make([]string, 0, len(words))
	for k := range words {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Printf("crc %08x words %s\n", sum.Sum32(), strings.Join(keys, ","))
}
