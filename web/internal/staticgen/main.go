// Command staticgen writes the offline playground as plain files that any
// static file server can host: the landing page and the lab rendered to
// HTML with the same templ components the server uses (relative URLs, no
// server section), plus every static asset including the WebAssembly engine.
// scripts/build-static.sh runs it after scripts/build-wasm.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/a-h/templ"
	"github.com/rvplay/rvplay/web"
)

func main() {
	out := flag.String("out", "dist", "output directory (replaced)")
	flag.Parse()
	if err := build(*out); err != nil {
		fmt.Fprintln(os.Stderr, "staticgen:", err)
		os.Exit(1)
	}
}

func build(out string) error {
	assets := web.Static()
	if _, err := fs.Stat(assets, "wasm/rvplay.wasm"); err != nil {
		return fmt.Errorf("the WebAssembly engine is missing (run scripts/build-wasm.sh first): %w", err)
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	p := web.PageConfig{Static: "static/", Home: "./", LabHref: "lab.html", Standalone: true}
	pages := map[string]templ.Component{
		"index.html": web.Landing(p),
		"lab.html":   web.Lab(p, web.OfflineLab(p)),
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for name, c := range pages {
		f, err := os.Create(filepath.Join(out, name))
		if err != nil {
			return err
		}
		if err := c.Render(context.Background(), f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if err := copyTree(assets, filepath.Join(out, "static")); err != nil {
		return err
	}
	// The lessons' definitions and texts, fetched by the lab as data.
	return copyTree(web.LessonFiles(), filepath.Join(out, "static", "lessons"))
}

// copyTree writes every file of fsys under dir.
func copyTree(fsys fs.FS, dir string) error {
	return fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}
