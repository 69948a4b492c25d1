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
package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"

	"github.com/andybalholm/brotli"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: precompress FILE...")
		os.Exit(2)
	}
	for _, name := range os.Args[1:] {
		if err := precompress(name, systemGzip()); err != nil {
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
// if it is "") and name.br.
func precompress(name, gzipPath string) error {
	raw, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	gz, err := gzipped(raw, gzipPath)
	if err != nil {
		return err
	}
	var br bytes.Buffer
	bw := brotli.NewWriterLevel(&br, brotli.BestCompression)
	bw.Write(raw)
	if err := bw.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(name+".gz", gz, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(name+".br", br.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("%s raw=%d gzip=%d br=%d\n", name, len(raw), len(gz), br.Len())
	return nil
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
