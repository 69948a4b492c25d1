//go:build !js

package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/andybalholm/brotli"
)

// Both encodings of a file decode to the file, whichever gzip made the
// .gz: the system's or compress/gzip.
func TestPrecompressedFilesDecodeToTheOriginal(t *testing.T) {
	raw := bytes.Repeat([]byte("resourceVersion is the key's mod_revision\n"), 4096)
	for name, gzipPath := range map[string]string{"system gzip": systemGzip(), "compress/gzip": ""} {
		t.Run(name, func(t *testing.T) {
			if name == "system gzip" && gzipPath == "" {
				t.Skip("no gzip on PATH; the other case covers compress/gzip")
			}
			file := filepath.Join(t.TempDir(), "app.wasm")
			if err := os.WriteFile(file, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := precompress(file, gzipPath, ""); err != nil {
				t.Fatal(err)
			}
			gz, err := os.Open(file + ".gz")
			if err != nil {
				t.Fatal(err)
			}
			defer gz.Close()
			zr, err := gzip.NewReader(gz)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, raw) {
				t.Fatalf(".gz decodes to %d bytes (err %v), want the %d of the file", len(got), err, len(raw))
			}
			br, err := os.Open(file + ".br")
			if err != nil {
				t.Fatal(err)
			}
			defer br.Close()
			if got, err := io.ReadAll(brotli.NewReader(br)); err != nil || !bytes.Equal(got, raw) {
				t.Fatalf(".br decodes to %d bytes (err %v), want the %d of the file", len(got), err, len(raw))
			}
		})
	}
}

// The system's gzip leaves no name or time in the header, so a rebuild of
// the same module gives the same .gz (and the same ETag).
func TestTheSystemGzipsOutputIsTheSameEachTime(t *testing.T) {
	path := systemGzip()
	if path == "" {
		t.Skip("no gzip on PATH")
	}
	raw := bytes.Repeat([]byte("etcd"), 1000)
	a, err := gzipped(raw, path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := gzipped(raw, path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("two runs of gzip -9 -n on the same input differ")
	}
}
