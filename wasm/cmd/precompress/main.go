//go:build !js

// Command precompress writes NAME.gz (gzip -9) and NAME.br (brotli, quality
// 11) beside each file it is given, so the server and static hosts can send
// the WebAssembly precompressed; it prints the sizes, which
// scripts/build-wasm.sh records against the size budget.
//
// The .gz is what a browser gets over plain HTTP (browsers ask for brotli
// only over HTTPS), so a class server's students load it: it is made by the
// system's gzip -9 where there is one, whose deflate is about 1% smaller
// than compress/gzip's best (the module's 10 MB: 1,991,844 against
// 2,010,321 B, across the 2,000,000 B budget the lint step measures with
// gzip -9), and by compress/gzip on a machine without it, so that a fresh
// machine needs nothing but the Go toolchain. The .br is pure Go.
//
// Brotli's quality 11 takes about 30 s of one core on the module, and a
// build runs again whenever any Go file it watches changes, mostly with the
// module unchanged: both files are kept in a cache by the file's content and
// the encoders' identity (cache.go), and taken from there when they still
// decode to the file. What is written is, byte for byte, what the encoders
// make of the file; either way it is checked to decode to the file first.
//
// Usage: precompress [-cache DIR] FILE...
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/andybalholm/brotli"
)

func main() {
	cacheDir := flag.String("cache", defaultCacheDir(), `the directory of the cache of compressed files ("": none)`)
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: precompress [-cache DIR] FILE...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 1 {
		flag.Usage()
		os.Exit(2)
	}
	gzipPath := systemGzip()
	for _, name := range flag.Args() {
		if _, err := precompress(name, gzipPath, *cacheDir); err != nil {
			fmt.Fprintln(os.Stderr, "precompress:", err)
			os.Exit(1)
		}
	}
}

// systemGzip is the path of the system's gzip, or "" where there is none.
func systemGzip() string {
	path, err := exec.LookPath("gzip")
	if err != nil {
		return ""
	}
	return path
}

// precompress writes name.gz (by the gzip at gzipPath, or compress/gzip
// if it is "") and name.br, taken from the cache in cacheDir when it holds
// them for this content ("": no cache); it reports whether they were.
func precompress(name, gzipPath, cacheDir string) (cached bool, err error) {
	raw, err := os.ReadFile(name)
	if err != nil {
		return false, err
	}
	c := cache{dir: cacheDir}
	if cacheDir != "" {
		c.key = cacheKey(raw, gzipPath)
	}
	gz, br, cached := c.load()
	if cached && decodesTo(raw, gz, br) != nil {
		cached = false // a damaged or foreign entry: made again below
	}
	if !cached {
		if gz, err = gzipped(raw, gzipPath); err != nil {
			return false, err
		}
		br = brotlied(raw)
		if err := decodesTo(raw, gz, br); err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
		if err := c.store(gz, br); err != nil {
			fmt.Fprintln(os.Stderr, "precompress: warning: cannot keep the files in the cache:", err)
		}
	}
	if err := os.WriteFile(name+".gz", gz, 0o644); err != nil {
		return false, err
	}
	if err := os.WriteFile(name+".br", br, 0o644); err != nil {
		return false, err
	}
	from := ""
	if cached {
		from = " (from the cache)"
	}
	fmt.Printf("%s raw=%d gzip=%d br=%d%s\n", name, len(raw), len(gz), len(br), from)
	return cached, nil
}

// gzipped is raw compressed at gzip's best: by the program at gzipPath
// (-n: no name or time in the header, so that a rebuild of the same
// module gives the same file), or by compress/gzip if gzipPath is "".
func gzipped(raw []byte, gzipPath string) ([]byte, error) {
	if gzipPath != "" {
		cmd := exec.Command(gzipPath, "-9", "-n", "-c")
		cmd.Stdin = bytes.NewReader(raw)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("%s -9: %v: %s", gzipPath, err, bytes.TrimSpace(stderr.Bytes()))
		}
		return out.Bytes(), nil
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(raw)
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return gz.Bytes(), nil
}

// brotlied is raw compressed by brotli at its best quality (11).
func brotlied(raw []byte) []byte {
	var br bytes.Buffer
	bw := brotli.NewWriterLevel(&br, brotli.BestCompression)
	bw.Write(raw) // a bytes.Buffer takes every write
	bw.Close()
	return br.Bytes()
}

// decodesTo checks that gz and br both decode to raw, so that what is
// served for the file, with whichever encoding, is the file.
func decodesTo(raw, gz, br []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return fmt.Errorf("the .gz: %w", err)
	}
	if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, raw) {
		return fmt.Errorf("the .gz decodes to %d bytes (%v), not to the %d of the file", len(got), err, len(raw))
	}
	if got, err := io.ReadAll(brotli.NewReader(bytes.NewReader(br))); err != nil || !bytes.Equal(got, raw) {
		return fmt.Errorf("the .br decodes to %d bytes (%v), not to the %d of the file", len(got), err, len(raw))
	}
	return nil
}
