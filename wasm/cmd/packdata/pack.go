//go:build !js

package main

import (
	"errors"
	"fmt"
)

// MaxGap is the longest run of zero bytes written out to join two segments.
// A segment's header costs gzip about four bytes, a run of zeros about two
// per 258; measured on the lab's module, any limit from 64 to 4,096 bytes
// gives the same size within 50 B (down to 33 segments from 100,000), and
// joining everything (megabytes of zeros between the data and the
// runtime's tables) is 6 KB worse.
const MaxGap = 256

const (
	sectionData      = 11
	sectionDataCount = 12

	opI32Const = 0x41
	opEnd      = 0x0b
)

// segment is an active data segment of memory 0: data written at off when
// the module is instantiated.
type segment struct {
	off  uint32
	data []byte
}

// Pack returns module with the segments of its data section joined wherever
// the next one starts at most maxGap bytes after the previous one ends; the
// other sections are copied unchanged (a data count section gets the new
// count). Only active segments of memory 0 with a constant offset, which is
// all Go's linker writes, are understood: a module with any other kind is
// refused rather than guessed at.
func Pack(module []byte, maxGap int) ([]byte, error) {
	if len(module) < 8 || string(module[:4]) != "\x00asm" || string(module[4:8]) != "\x01\x00\x00\x00" {
		return nil, errors.New("not a WebAssembly module (version 1)")
	}
	type section struct {
		id      byte
		payload []byte
	}
	var sections []section
	var segs []segment
	for r := (reader{b: module, i: 8}); r.i < len(module); {
		id := r.byte()
		payload := r.bytes(int(r.u32()))
		if r.err != nil {
			return nil, fmt.Errorf("section %d: %w", id, r.err)
		}
		if id == sectionData {
			var err error
			if segs, err = readSegments(payload); err != nil {
				return nil, fmt.Errorf("data section: %w", err)
			}
			segs = join(segs, maxGap)
			payload = encodeSegments(segs)
		}
		sections = append(sections, section{id, payload})
	}
	out := append(make([]byte, 0, len(module)+len(module)/4), module[:8]...)
	for _, s := range sections {
		if s.id == sectionDataCount { // it comes before the data section
			s.payload = appendU32(nil, uint32(len(segs)))
		}
		out = appendSection(out, s.id, s.payload)
	}
	return out, nil
}

func readSegments(payload []byte) ([]segment, error) {
	r := reader{b: payload}
	n := r.u32()
	segs := make([]segment, 0, n)
	for ; n > 0 && r.err == nil; n-- {
		if kind := r.u32(); kind != 0 {
			return nil, fmt.Errorf("segment %d is of kind %d, not an active segment of memory 0", len(segs), kind)
		}
		if op := r.byte(); op != opI32Const {
			return nil, fmt.Errorf("segment %d: its offset is not an i32.const", len(segs))
		}
		off := r.s32()
		if op := r.byte(); op != opEnd {
			return nil, fmt.Errorf("segment %d: its offset is not a constant", len(segs))
		}
		data := r.bytes(int(r.u32()))
		segs = append(segs, segment{off: uint32(off), data: data})
	}
	if r.err == nil && r.i != len(payload) {
		r.err = errors.New("bytes after the last segment")
	}
	return segs, r.err
}

// join merges each segment into the one before it when it starts within
// maxGap bytes of that one's end, in the order the module lists them (later
// segments overwrite earlier ones, so overlapping or backward segments are
// left apart). A joined segment grows by append, not by a copy per join:
// Go's linker cuts the lab's data into 100,000 segments that join into 33,
// and copying each joined segment whole at every join made packdata take
// 17 s of processor time on it.
func join(segs []segment, maxGap int) []segment {
	var out []segment
	for _, s := range segs {
		if n := len(out); n > 0 {
			last := &out[n-1]
			end := uint64(last.off) + uint64(len(last.data))
			if uint64(s.off) >= end && uint64(s.off)-end <= uint64(maxGap) {
				last.data = append(last.data, make([]byte, uint64(s.off)-end)...)
				last.data = append(last.data, s.data...)
				continue
			}
		}
		// Capped at its length: the first append copies it out of the
		// module, whose next bytes it would otherwise overwrite.
		s.data = s.data[:len(s.data):len(s.data)]
		out = append(out, s)
	}
	return out
}

func encodeSegments(segs []segment) []byte {
	b := appendU32(nil, uint32(len(segs)))
	for _, s := range segs {
		b = append(b, 0, opI32Const)
		b = appendS32(b, int32(s.off))
		b = append(b, opEnd)
		b = appendU32(b, uint32(len(s.data)))
		b = append(b, s.data...)
	}
	return b
}

func appendSection(b []byte, id byte, payload []byte) []byte {
	b = append(b, id)
	b = appendU32(b, uint32(len(payload)))
	return append(b, payload...)
}

func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// reader reads a module's LEB128 numbers and byte strings, remembering the
// first error (a truncated or malformed module).
type reader struct {
	b   []byte
	i   int
	err error
}

var errTruncated = errors.New("truncated")

func (r *reader) byte() byte {
	if r.err != nil || r.i >= len(r.b) {
		r.err = errTruncated
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.i {
		r.err = errTruncated
		return nil
	}
	b := r.b[r.i : r.i+n]
	r.i += n
	return b
}

func (r *reader) u32() uint32 {
	var v uint64
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			if v > 1<<32-1 {
				break
			}
			return uint32(v)
		}
	}
	if r.err == nil {
		r.err = errors.New("malformed u32")
	}
	return 0
}

func (r *reader) s32() int32 {
	var v int64
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		v |= int64(c&0x7f) << shift
		if c < 0x80 {
			if c&0x40 != 0 && shift+7 < 64 {
				v |= -1 << (shift + 7)
			}
			return int32(v)
		}
	}
	if r.err == nil {
		r.err = errors.New("malformed s32")
	}
	return 0
}
