//go:build !js

package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// module returns a module with a one-page memory and a data section holding
// segs; countSection adds a data count section (which precedes the code and
// data sections).
func module(segs []segment, countSection bool) []byte {
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = appendSection(m, 5, []byte{1, 0, 64}) // memory 0: 64 pages minimum
	if countSection {
		m = appendSection(m, sectionDataCount, appendU32(nil, uint32(len(segs))))
	}
	m = appendSection(m, sectionData, encodeSegments(segs))
	return appendSection(m, 0, append([]byte{4}, "name"...)) // a custom section after it
}

// image is the memory a module's data section initialises.
func image(t *testing.T, m []byte) (mem []byte, segments int) {
	t.Helper()
	mem = make([]byte, 64<<16)
	r := reader{b: m, i: 8}
	for r.i < len(m) {
		id := r.byte()
		payload := r.bytes(int(r.u32()))
		if id != sectionData {
			continue
		}
		segs, err := readSegments(payload)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range segs {
			copy(mem[s.off:], s.data)
		}
		segments = len(segs)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return mem, segments
}

func TestPackingKeepsTheMemoryItInitialises(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var segs []segment
	off := uint32(4096)
	apart := 1 // segments left after packing: the first, and each after a long gap
	for i := range 2000 {
		if i > 0 {
			gap := uint32(9 + rng.IntN(300)) // Go's linker cuts at runs over 8 zeros
			if rng.IntN(50) == 0 {
				gap = 1 << 14
			}
			if gap > MaxGap {
				apart++
			}
			off += gap
		}
		data := make([]byte, 1+rng.IntN(40))
		for i := range data {
			data[i] = byte(1 + rng.IntN(255))
		}
		segs = append(segs, segment{off: off, data: data})
		off += uint32(len(data))
	}
	in := module(segs, false)
	given := bytes.Clone(in)
	out, err := Pack(in, MaxGap)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(in, given) {
		t.Fatal("Pack wrote into the module it was given") // a joined segment grew over the next one's bytes
	}
	before, n := image(t, in)
	after, m := image(t, out)
	if !bytes.Equal(before, after) {
		t.Fatal("the packed module initialises memory differently")
	}
	if n != 2000 || m != apart {
		t.Errorf("%d segments packed into %d, want %d: those apart by at most %d zeros joined", n, m, apart, MaxGap)
	}
	if !bytes.HasSuffix(out, append([]byte{0, 5, 4}, "name"...)) {
		t.Error("the section after the data section was not copied")
	}
}

func TestGapsLongerThanTheLimitStayApart(t *testing.T) {
	segs := []segment{
		{off: 100, data: []byte{1, 2}},
		{off: 102 + MaxGap, data: []byte{3}},       // exactly MaxGap zeros apart: joined
		{off: 103 + 2*MaxGap + 1, data: []byte{4}}, // one zero more: apart
		{off: 50, data: []byte{5}},                 // backwards: apart, as it may overwrite
	}
	out, err := Pack(module(segs, true), MaxGap)
	if err != nil {
		t.Fatal(err)
	}
	mem, n := image(t, out)
	if n != 3 {
		t.Errorf("%d segments, want 3", n)
	}
	if mem[100] != 1 || mem[102+MaxGap] != 3 || mem[103+2*MaxGap+1] != 4 || mem[50] != 5 {
		t.Error("a segment's bytes moved")
	}
	if want := module([]segment{
		{off: 100, data: append(append([]byte{1, 2}, make([]byte, MaxGap)...), 3)},
		{off: 103 + 2*MaxGap + 1, data: []byte{4}},
		{off: 50, data: []byte{5}},
	}, true); !bytes.Equal(out, want) {
		t.Error("the data count section does not count the packed segments")
	}
}

func TestSegmentsItDoesNotUnderstandAreRefused(t *testing.T) {
	passive := []byte("\x00asm\x01\x00\x00\x00")
	passive = appendSection(passive, sectionData, []byte{1, 1, 3, 'a', 'b', 'c'})
	if _, err := Pack(passive, MaxGap); err == nil {
		t.Error("a passive segment was accepted")
	}
	truncated := module([]segment{{off: 8, data: []byte("abc")}}, false)
	if _, err := Pack(truncated[:len(truncated)-9], MaxGap); err == nil {
		t.Error("a truncated module was accepted")
	}
	if _, err := Pack([]byte("\x7fELF\x02\x01\x01\x00"), MaxGap); err == nil {
		t.Error("a file that is not a module was accepted")
	}
}

// A Go program for js/wasm packed by the command runs as it did, under
// Node with the Go toolchain's go_js_wasm_exec.
func TestAPackedGoProgramRunsTheSame(t *testing.T) {
	prog, run := buildForJS(t, "./testdata/hello")
	want := run()
	raw, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	if err := packFile(prog, nil); err != nil {
		t.Fatal(err)
	}
	packed, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	before, n := image(t, raw)
	after, m := image(t, packed)
	if !bytes.Equal(before, after) || m >= n {
		t.Fatalf("packed %d segments into %d, same memory %v", n, m, bytes.Equal(before, after))
	}
	if got := run(); got != want {
		t.Errorf("after packing the program printed %q, before %q", got, want)
	}
}

// buildForJS builds one of testdata's programs for js/wasm and returns
// its path and a function running it under Node.
func buildForJS(t *testing.T, pkg string) (prog string, run func() string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a program for js/wasm")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed (scripts/ensure-deps.sh installs it)")
	}
	prog = filepath.Join(t.TempDir(), filepath.Base(pkg)+".wasm")
	build := exec.Command("go", "build", "-o", prog, pkg)
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	return prog, func() string {
		t.Helper()
		out, err := exec.Command(filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "go_js_wasm_exec"), prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return string(out)
	}
}

func TestAProgramWithoutSymbolsRunsTheSame(t *testing.T) {
	prog, run := buildForJS(t, "./testdata/hello")
	want := run()
	if err := packFile(prog, func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if got := run(); got != want {
		t.Errorf("without its symbols the program printed %q, before %q", got, want)
	}
	packed, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	if _, n, err := StripSymbols(packed, func(string) bool { return false }); err != nil || n == 0 {
		t.Errorf("stripping again: %d functions, %v", n, err)
	}
	for _, name := range []string{"main.main", "runtime.main", "fmt.Fprintf"} {
		if bytes.Contains(packed, []byte(name+"\x00")) {
			t.Errorf("%s is still named", name)
		}
	}
	for name := range keptFuncNames {
		if !bytes.Contains(packed, []byte("\x00"+name+"\x00")) {
			t.Errorf("%s lost its name, which the runtime reads", name)
		}
	}
}

// The functions kept keep their names, files and lines; the others' frames
// say nothing of where they are.
func TestAFrameKeepsItsSymbolsWhereItsFunctionIsKept(t *testing.T) {
	prog, run := buildForJS(t, "./testdata/frames")
	whole := "main.main at main.go:13\nruntime.main at proc.go:"
	if got := run(); !strings.HasPrefix(got, whole) {
		t.Fatalf("with every symbol: %q, want %q…", got, whole)
	}
	if err := packFile(prog, func(name string) bool { return strings.HasPrefix(name, "main.") }); err != nil {
		t.Fatal(err)
	}
	if got, want := run(), "main.main at main.go:13\n at ?:0\n"; got != want {
		t.Errorf("with main's symbols only: %q, want %q", got, want)
	}
}

func TestAModuleWithoutAPclntabIsRefused(t *testing.T) {
	m := module([]segment{{off: 4096, data: []byte("no table here")}}, false)
	if _, _, err := StripSymbols(m, nil); err == nil || !strings.Contains(err.Error(), "found 0 pclntab headers") {
		t.Errorf("StripSymbols of a module without a pclntab: %v", err)
	}
}
