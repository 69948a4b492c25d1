//go:build !js

// Command precompress writes NAME.gz (gzip -9) and NAME.br (brotli, quality
// 11) beside each file it is given, so the server and static hosts can send
// the WebAssembly precompressed. It uses pure Go encoders so that a fresh
// machine needs nothing but the Go toolchain; it prints the sizes, which
// scripts/build-wasm.sh records against the size budget.
package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"

	"github.com/andybalholm/brotli"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: precompress FILE...")
		os.Exit(2)
	}
	for _, name := range os.Args[1:] {
		if err := precompress(name); err != nil {
			fmt.Fprintln(os.Stderr, "precompress:", err)
			os.Exit(1)
		}
	}
}

func precompress(name string) error {
	raw, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(raw)
	if err := zw.Close(); err != nil {
		return err
	}
	var br bytes.Buffer
	bw := brotli.NewWriterLevel(&br, brotli.BestCompression)
	bw.Write(raw)
	if err := bw.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(name+".gz", gz.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(name+".br", br.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("%s raw=%d gzip=%d br=%d\n", name, len(raw), gz.Len(), br.Len())
	return nil
}
