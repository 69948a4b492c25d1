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

// A function's entry in the function table (runtime._func) holds, among
// others, the offsets of its name in the name table and of its PC-value
// tables: pcsp (the frame size, which unwinding needs), pcfile and pcln
// (its source file and line, which only tracebacks and runtime.Caller
// read), then npcdata more tables (stack maps, unsafe points, inlining).
const (
	funcNameOff    = 4
	funcPCSP       = 16
	funcPCFile     = 20
	funcPCLn       = 24
	funcNPCData    = 28
	funcPCDataList = 44
)

// keptFuncNames are the names the runtime reads other than to print
// them: its stack scan recognises reflect's two stubs by name
// (runtime/stkframe.go, argMapInternals).
var keptFuncNames = map[string]bool{
	"reflect.makeFuncStub":    true,
	"reflect.methodValueCall": true,
}

// StripSymbols returns module with the names, source files and lines of
// the functions keep refuses taken out of the runtime's function table
// (the pclntab: names such as "strconv.ParseFloat" and, per function, a
// table from each PC to its file and line; for the lab's module 277 KB
// and 189 KB raw, about 40 KB and 120 KB of its gzip -9). The runtime
// reads them only to print them (tracebacks, runtime.Caller,
// runtime.FuncForPC), but for keptFuncNames: a traceback shows such a
// frame as "(...)" at "?:0", and a kept function's frame as before.
// Go's linker cannot leave them out (-s and -w strip other tables).
// A name becomes "" (its bytes zeroed); a function's file and line
// tables become none (offset 0, which the runtime reads as unknown), and
// their bytes are zeroed unless another table shares them. The table is
// found by its header; a module with no such header, or more than one,
// or a table that does not read as Go 1.20 to 1.26 writes it, is
// refused rather than guessed at. It returns how many functions it
// stripped.
func StripSymbols(module []byte, keep func(name string) bool) ([]byte, int, error) {
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
	t, err := readPclntab(found[0])
	if err != nil {
		return nil, 0, err
	}
	stripped, err := t.strip(keep)
	return out, stripped, err
}

// pclntab is the tables of a pclntab, as slices of the module's bytes.
type pclntab struct {
	nfunc              int
	names, pctab, ftab []byte
	funcs              [][]byte // each function's _func, to the end of ftab
}

func readPclntab(pcln []byte) (*pclntab, error) {
	if len(pcln) < pclnHeaderSize {
		return nil, errors.New("the pclntab header is cut short")
	}
	le := binary.LittleEndian
	word := func(i int) uint64 { return le.Uint64(pcln[8+8*i:]) }
	nfunc, names, cu, files, pctab, ftab := word(0), word(3), word(4), word(5), word(6), word(7)
	if names != pclnHeaderSize || !(names < cu && cu <= files && files <= pctab && pctab <= ftab) ||
		ftab > uint64(len(pcln)) || nfunc > uint64(len(pcln)-int(ftab))/8 {
		return nil, fmt.Errorf("the pclntab header (%d functions; names %d, units %d, files %d, PC tables %d, functions %d) is not that of Go 1.20 to 1.26 within %d bytes",
			nfunc, names, cu, files, pctab, ftab, len(pcln))
	}
	t := &pclntab{nfunc: int(nfunc), names: pcln[names:cu], pctab: pcln[pctab:ftab], ftab: pcln[ftab:]}
	for i := range t.nfunc {
		off := le.Uint32(t.ftab[8*i+4:])
		if uint64(off)+funcPCDataList > uint64(len(t.ftab)) {
			return nil, fmt.Errorf("function %d's entry is outside the table", i)
		}
		f := t.ftab[off:]
		if n := le.Uint32(f[funcNPCData:]); uint64(funcPCDataList)+4*uint64(n) > uint64(len(f)) {
			return nil, fmt.Errorf("function %d's PC-value tables are outside the table", i)
		}
		if le.Uint32(f[funcNameOff:]) >= uint32(len(t.names)) {
			return nil, fmt.Errorf("function %d's name is outside the name table", i)
		}
		t.funcs = append(t.funcs, f)
	}
	return t, nil
}

// name is the name at off in the name table.
func (t *pclntab) name(off uint32) []byte {
	n := t.names[off:]
	if i := bytes.IndexByte(n, 0); i >= 0 {
		n = n[:i]
	}
	return n
}

func (t *pclntab) strip(keep func(string) bool) (int, error) {
	le := binary.LittleEndian
	// the tables that stay: every function's pcsp and pcdata, and the
	// files and lines of the functions kept
	kept := map[uint32]bool{}
	var strip [][]byte
	for _, f := range t.funcs {
		kept[le.Uint32(f[funcPCSP:])] = true
		for i := range le.Uint32(f[funcNPCData:]) {
			kept[le.Uint32(f[funcPCDataList+4*i:])] = true
		}
		if name := t.name(le.Uint32(f[funcNameOff:])); keep(string(name)) || keptFuncNames[string(name)] {
			kept[le.Uint32(f[funcPCFile:])] = true
			kept[le.Uint32(f[funcPCLn:])] = true
		} else {
			strip = append(strip, f)
		}
	}
	for _, f := range strip {
		for _, field := range []int{funcPCFile, funcPCLn} {
			off := le.Uint32(f[field:])
			if off != 0 && !kept[off] {
				n, err := pcValueLen(t.pctab, off)
				if err != nil {
					return 0, err
				}
				clear(t.pctab[off : off+n])
			}
			le.PutUint32(f[field:], 0)
		}
		name := t.name(le.Uint32(f[funcNameOff:]))
		clear(name)
	}
	return len(strip), nil
}

// pcValueLen is the length of the PC-value table at off in pctab: pairs
// of a zig-zag value delta and a PC delta, both unsigned varints, ended
// by a zero value delta after the first pair (runtime.step).
func pcValueLen(pctab []byte, off uint32) (uint32, error) {
	i := int(off)
	for first := true; ; first = false {
		delta, n := binary.Uvarint(pctab[min(i, len(pctab)):])
		if n <= 0 {
			return 0, fmt.Errorf("the PC-value table at %d runs past the tables' end", off)
		}
		i += n
		if delta == 0 && !first {
			return uint32(i) - off, nil
		}
		_, n = binary.Uvarint(pctab[i:])
		if n <= 0 {
			return 0, fmt.Errorf("the PC-value table at %d runs past the tables' end", off)
		}
		i += n
	}
}
