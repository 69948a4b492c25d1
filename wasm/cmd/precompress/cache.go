//go:build !js

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// cacheEntries is how many files' compressed forms the cache keeps (the
// module's are about 3.4 MB together); the least recently used go first.
const cacheEntries = 8

// defaultCacheDir is rvplay/precompress in the user's cache directory
// (~/.cache on Linux), shared by every checkout on the machine, or "" (no
// cache) where there is none.
func defaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "rvplay", "precompress")
}

// cache holds compressed files by key: KEY.gz and KEY.br in dir. Its zero
// key (or dir) caches nothing.
type cache struct {
	dir, key string
}

// cacheKey names what the two files are made of: the file's bytes and the
// encoders that made them (the gzip program's own bytes, or Go's
// compress/gzip; the brotli package's version and quality), so that a new
// gzip or brotli makes them anew rather than serving another encoder's
// bytes.
func cacheKey(raw []byte, gzipPath string) string {
	h := sha256.New()
	fmt.Fprintf(h, "rvplay precompress 1\n")
	if gzipPath != "" {
		program, err := os.ReadFile(gzipPath)
		if err != nil {
			return "" // an encoder it cannot name: no cache
		}
		fmt.Fprintf(h, "gzip -9 -n: program %x\n", sha256.Sum256(program))
	} else {
		fmt.Fprintf(h, "gzip: compress/gzip BestCompression, %s\n", runtime.Version())
	}
	fmt.Fprintf(h, "br: github.com/andybalholm/brotli %s quality 11\n", brotliVersion())
	fmt.Fprintf(h, "file: %d bytes\n", len(raw))
	h.Write(raw)
	return hex.EncodeToString(h.Sum(nil))
}

// brotliVersion is the version of the brotli package linked in, as the
// build recorded it ("unknown" where it did not).
func brotliVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == "github.com/andybalholm/brotli" {
				if m.Replace != nil {
					m = m.Replace
				}
				return m.Path + "@" + m.Version + " " + m.Sum
			}
		}
	}
	return "unknown"
}

func (c cache) enabled() bool { return c.dir != "" && c.key != "" }

// load returns the entry's two files, and whether the cache has them.
func (c cache) load() (gz, br []byte, ok bool) {
	if !c.enabled() {
		return nil, nil, false
	}
	gz, err := os.ReadFile(filepath.Join(c.dir, c.key+".gz"))
	if err != nil {
		return nil, nil, false
	}
	br, err = os.ReadFile(filepath.Join(c.dir, c.key+".br"))
	if err != nil {
		return nil, nil, false
	}
	now := time.Now() // used: the last to be evicted
	for _, ext := range []string{".gz", ".br"} {
		os.Chtimes(filepath.Join(c.dir, c.key+ext), now, now)
	}
	return gz, br, true
}

// store keeps the two files under the key, each written whole before it
// takes its name (builds in other checkouts may read it meanwhile), and
// evicts the least recently used entries beyond cacheEntries.
func (c cache) store(gz, br []byte) error {
	if !c.enabled() {
		return nil
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	for _, f := range []struct {
		ext  string
		data []byte
	}{{".br", br}, {".gz", gz}} { // an entry without its .gz is no entry; one without its .br is evicted
		if err := writeWhole(filepath.Join(c.dir, c.key+f.ext), f.data); err != nil {
			return err
		}
	}
	return c.evict()
}

func writeWhole(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// evict removes the entries beyond the cacheEntries most recently used.
func (c cache) evict() error {
	files, err := os.ReadDir(c.dir)
	if err != nil {
		return err
	}
	used := map[string]time.Time{} // key -> its .br's time
	for _, f := range files {
		key, ok := strings.CutSuffix(f.Name(), ".br")
		if !ok {
			continue
		}
		if info, err := f.Info(); err == nil {
			used[key] = info.ModTime()
		}
	}
	keys := make([]string, 0, len(used))
	for k := range used {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return used[b].Compare(used[a]) })
	var errs []error
	for _, k := range keys[min(len(keys), cacheEntries):] {
		for _, ext := range []string{".br", ".gz"} {
			if err := os.Remove(filepath.Join(c.dir, k+ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
