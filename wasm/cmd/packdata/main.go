//go:build !js

// Command packdata rewrites the data section of a WebAssembly module built by
// Go so that it compresses better, leaving the memory it initialises
// byte for byte the same. Go's linker starts a new data segment at every run
// of more than eight zero bytes (to keep the raw file small) until it reaches
// 100,000 segments; each segment's header (its offset and length) is about
// eight bytes that gzip and brotli can hardly compress, while a short run of
// zeros costs them next to nothing. packdata joins segments separated by at
// most MaxGap zero bytes, writing the zeros out: for the lab's module the
// raw file grows by about a megabyte of zeros and its gzip -9 shrinks by
// about 167 KB (wasm/BENCHMARKS.md). It also takes the names, files and
// lines of the functions outside the module (the Go runtime, the standard
// library, dependencies) out of the runtime's function table
// (StripSymbols: about 100 KB of gzip -9), which only tracebacks print;
// -keep-symbols leaves them all. scripts/wasm-flags.sh runs it on every
// browser build, so that what is measured is what is served.
//
// Usage: packdata [-keep-symbols] [-module PATH] FILE.wasm (rewritten in place)
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	keepSymbols := flag.Bool("keep-symbols", false, "leave every function's name, file and line (tracebacks then show every frame whole)")
	module := flag.String("module", "github.com/rvplay/rvplay/", "the prefix of the names of the functions whose name, file and line stay")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: packdata [-keep-symbols] [-module PATH] FILE.wasm")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	var keep func(string) bool
	if !*keepSymbols {
		keep = func(name string) bool { return strings.HasPrefix(name, *module) }
	}
	if err := packFile(flag.Arg(0), keep); err != nil {
		fmt.Fprintln(os.Stderr, "packdata:", err)
		os.Exit(1)
	}
}

// packFile packs the data segments of the module in file name and strips
// the symbols of the functions keep refuses (nil: it strips none).
func packFile(name string, keep func(function string) bool) error {
	module, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	packed, err := Pack(module, MaxGap)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if keep != nil {
		if packed, _, err = StripSymbols(packed, keep); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), ".packdata-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(packed); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
