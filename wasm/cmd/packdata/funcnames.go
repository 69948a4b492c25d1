//go:build !js

package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Go's pclntab starts with a header (runtime.pcHeader): the magic of Go
// 1.20 and later (abi.Go120PCLnTabMagic), two zero pads, the minimum
// instruction size (1 for wasm) and the pointer size (8), then nfunc,
// nfiles, an unused word and the offsets, from the header, of the
// function name table, the compilation unit table, the file table, the
// PC-value tables and the function table, each a uint64.
var pclnHeaderStart = []byte{0xf1, 0xff, 0xff, 0xff, 0, 0, 1, 8}

const pclnHeaderSize = 8 + 8*8

// keptFuncNames are the names the runtime reads other than to print
// them: its stack scan recognises reflect's two stubs by name
// (runtime/stkframe.go, argMapInternals).
var keptFuncNames = map[string]bool{
	"reflect.makeFuncStub":    true,
	"reflect.methodValueCall": true,
}

// BlankFuncNames returns module with the names in its function name table
// (the pclntab's funcnametab: "github.com/rvplay/rvplay/engine/kube.(*Registry).Create"
// and the like, 270 KB of the lab's module, about 37 KB of its gzip -9)
// zeroed, so that every function is named "", but for keptFuncNames. The
// runtime reads those names only to print them: a traceback shows each
// frame as "(...)" followed by its file and line, which the file table
// and line tables, left alone, still give; runtime.Frame.Function and
// runtime.FuncForPC(pc).Name() are "". Go's linker has no flag to leave
// the names out (-s and -w strip other tables). The table is found by its
// header; a module with no such header, or more than one, is refused
// rather than guessed at. It returns how many names it blanked.
func BlankFuncNames(module []byte) ([]byte, int, error) {
	out := bytes.Clone(module)
	var found [][]byte // each match's bytes, within out
	for r := (reader{b: out, i: 8}); r.i < len(out); {
		id := r.byte()
		payload := r.bytes(int(r.u32()))
		if r.err != nil {
			return nil, 0, fmt.Errorf("section %d: %w", id, r.err)
		}
		if id != sectionData {
			continue
		}
		segs, err := readSegments(payload)
		if err != nil {
			return nil, 0, fmt.Errorf("data section: %w", err)
		}
		for _, s := range segs {
			for i := 0; ; i++ {
				j := bytes.Index(s.data[i:], pclnHeaderStart)
				if j < 0 {
					break
				}
				i += j
				found = append(found, s.data[i:]) // s.data aliases out
			}
		}
	}
	if len(found) != 1 {
		return nil, 0, fmt.Errorf("found %d pclntab headers (Go 1.20's magic, wasm, 64-bit pointers), not one", len(found))
	}
	tab, err := funcNameTable(found[0])
	if err != nil {
		return nil, 0, err
	}
	blanked := 0
	for len(tab) > 0 {
		end := bytes.IndexByte(tab, 0)
		if end < 0 {
			return nil, 0, errors.New("the function name table's last name is not terminated")
		}
		if end > 0 && !keptFuncNames[string(tab[:end])] {
			clear(tab[:end])
			blanked++
		}
		tab = tab[end+1:]
	}
	return out, blanked, nil
}

// funcNameTable is the function name table of the pclntab starting at
// pcln, checked against the header's other offsets (the tables follow
// one another in this order) and the segment's end.
func funcNameTable(pcln []byte) ([]byte, error) {
	if len(pcln) < pclnHeaderSize {
		return nil, errors.New("the pclntab header is cut short")
	}
	word := func(i int) uint64 { return binary.LittleEndian.Uint64(pcln[8+8*i:]) }
	names, cu, files, pctab, ftab := word(3), word(4), word(5), word(6), word(7)
	if names != pclnHeaderSize || !(names < cu && cu <= files && files <= pctab && pctab <= ftab) || ftab > uint64(len(pcln)) {
		return nil, fmt.Errorf("the pclntab header's offsets (names %d, units %d, files %d, PC tables %d, functions %d) are not those of Go 1.20 to 1.26 within %d bytes",
			names, cu, files, pctab, ftab, len(pcln))
	}
	return pcln[names:cu], nil
}
