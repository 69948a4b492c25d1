//go:build !js

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// build writes content to dir/app.wasm and precompresses it with the cache
// in cacheDir, returning whether the cache served it and the .gz and .br.
func build(t *testing.T, dir, cacheDir string, content []byte) (cached bool, gz, br []byte) {
	t.Helper()
	file := filepath.Join(dir, "app.wasm")
	if err := os.WriteFile(file, content, 0o644); err != nil {
		t.Fatal(err)
	}
	cached, err := precompress(file, systemGzip(), cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	return cached, read(t, file+".gz"), read(t, file+".br")
}

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A rebuild of an unchanged file, in this checkout or another one, takes
// both files from the cache, byte for byte what the encoders made of it.
func TestAnUnchangedFileIsNotCompressedAgain(t *testing.T) {
	cacheDir := t.TempDir()
	content := bytes.Repeat([]byte("a watch resumes after its resourceVersion\n"), 2048)
	cached, gz, br := build(t, t.TempDir(), cacheDir, content)
	if cached {
		t.Fatal("the first build was served from an empty cache")
	}
	cached, gz2, br2 := build(t, t.TempDir(), cacheDir, content)
	if !cached {
		t.Fatal("the second build of the same file compressed it again")
	}
	if !bytes.Equal(gz, gz2) || !bytes.Equal(br, br2) {
		t.Fatal("the cached files differ from those the encoders made")
	}
	wantGz, err := gzipped(content, systemGzip())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gz2, wantGz) || !bytes.Equal(br2, brotlied(content)) {
		t.Fatal("the cached files are not what the encoders make of the file")
	}
}

// A changed file is compressed anew: the files beside it decode to it,
// never to the build before.
func TestAChangedFileIsCompressedAnew(t *testing.T) {
	cacheDir, dir := t.TempDir(), t.TempDir()
	build(t, dir, cacheDir, bytes.Repeat([]byte("revision 7\n"), 4096))
	changed := bytes.Repeat([]byte("revision 8\n"), 4096)
	cached, gz, br := build(t, dir, cacheDir, changed)
	if cached {
		t.Fatal("a changed file was served from the cache")
	}
	if err := decodesTo(changed, gz, br); err != nil {
		t.Fatal(err)
	}
}

// An entry that does not decode to the file (damaged, or written by
// something else under its name) is not served: both are made again, and
// the entry replaced.
func TestACacheEntryThatDoesNotDecodeToTheFileIsMadeAgain(t *testing.T) {
	cacheDir := t.TempDir()
	content := bytes.Repeat([]byte("compacted at revision 23\n"), 2048)
	build(t, t.TempDir(), cacheDir, content)
	key := cacheKey(content, systemGzip())
	stale := filepath.Join(cacheDir, key+".br")
	if err := os.WriteFile(stale, brotlied([]byte("another module")), 0o644); err != nil {
		t.Fatal(err)
	}
	cached, gz, br := build(t, t.TempDir(), cacheDir, content)
	if cached {
		t.Fatal("an entry that decodes to another file was served")
	}
	if err := decodesTo(content, gz, br); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(read(t, stale), br) {
		t.Fatal("the bad entry was left in the cache")
	}
}

// The cache keeps the cacheEntries most recently used files' entries.
func TestTheCacheKeepsTheMostRecentlyUsed(t *testing.T) {
	cacheDir := t.TempDir()
	first := []byte("module 0")
	build(t, t.TempDir(), cacheDir, first)
	// Its times in the past, then used again: it stays while older ones go.
	old := time.Now().Add(-time.Hour)
	for _, ext := range []string{".gz", ".br"} {
		os.Chtimes(filepath.Join(cacheDir, cacheKey(first, systemGzip())+ext), old, old)
	}
	if cached, _, _ := build(t, t.TempDir(), cacheDir, first); !cached {
		t.Fatal("module 0 was not served from the cache")
	}
	for i := 1; i <= cacheEntries; i++ {
		content := []byte("module " + string(rune('0'+i)))
		build(t, t.TempDir(), cacheDir, content)
		past := old.Add(time.Duration(i) * time.Minute) // module 1 the least recently used
		for _, ext := range []string{".gz", ".br"} {
			os.Chtimes(filepath.Join(cacheDir, cacheKey(content, systemGzip())+ext), past, past)
		}
	}
	files, err := os.ReadDir(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2*cacheEntries {
		t.Fatalf("the cache holds %d files, want %d (%d entries)", len(files), 2*cacheEntries, cacheEntries)
	}
	if _, err := os.Stat(filepath.Join(cacheDir, cacheKey([]byte("module 1"), systemGzip())+".br")); err == nil {
		t.Error("the least recently used entry (module 1) was kept")
	}
	if _, err := os.Stat(filepath.Join(cacheDir, cacheKey(first, systemGzip())+".br")); err != nil {
		t.Error("module 0, the oldest entry but used again since, was evicted")
	}
}

// A gzip the cache cannot name (its program unreadable) caches nothing.
func TestAnEncoderItCannotNameIsNotCached(t *testing.T) {
	if cacheKey([]byte("x"), filepath.Join(t.TempDir(), "no-gzip")) != "" {
		t.Fatal("a missing gzip program has a cache key")
	}
	if cacheKey([]byte("x"), "") == cacheKey([]byte("x"), systemGzip()) && systemGzip() != "" {
		t.Fatal("compress/gzip and the system's gzip share a key")
	}
}
