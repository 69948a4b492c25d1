// Command hello is a small Go program for js/wasm whose output depends on
// its initialised data: packdata's test runs it before and after packing
// and blanking the function names. It calls through reflect.MakeFunc and
// collects garbage inside the call, since the runtime's stack scan finds
// reflect's stubs by their names.
package main

import (
	"fmt"
	"hash/crc32"
	"reflect"
	"runtime"
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
	var keys []string
	join := func(in []reflect.Value) []reflect.Value {
		runtime.GC() // scans the stub's frame, whose arguments hold pointers
		return []reflect.Value{reflect.ValueOf(strings.Join(in[0].Interface().([]string), in[1].String()))}
	}
	var joinWith func([]string, string) string
	reflect.ValueOf(&joinWith).Elem().Set(reflect.MakeFunc(reflect.TypeOf(joinWith), join))
	for k := range words {
		keys = append(keys, strings.Repeat(k, 1)) // on the heap
	}
	sort.Strings(keys)
	fmt.Printf("crc %08x words %s\n", sum.Sum32(), joinWith(keys, ","))
}
