package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/rvplay/rvplay/web/lessons"
)

// static holds the assets. "all:" keeps web/static/wasm (written by
// scripts/build-wasm.sh, gitignored) when it exists; the package compiles
// without it, and the lab then says the engine is missing.
//
//go:embed all:static
var static embed.FS

// LessonFiles are the lessons' definitions and texts
// (<nn>-<slug>/lesson.json, <nn>-<slug>/<lang>/<nn>.md), served under
// static/lessons/ for the lab to fetch as data.
func LessonFiles() fs.FS { return lessons.Files() }

// Static returns the static assets (css/, js/, vendor/, wasm/).
func Static() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	return sub
}

// Server says what the pages need to know of the server that serves them.
type Server struct {
	// Store is "etcd" when the sessions live on an etcd cluster (the
	// server's --store etcd://), "" otherwise (LabConfig.Store).
	Store string
}

// StoreEtcd is Server.Store for sessions on an etcd cluster.
const StoreEtcd = "etcd"

// Handler serves the pages and the static assets of a server whose
// sessions each have a store of their own (Server{}.Handler()).
func Handler() http.Handler { return Server{}.Handler() }

// Handler serves the pages and the static assets:
//
//	GET /               landing page
//	GET /lab            the offline lab (engine in the page)
//	GET /s/<session>/   the lab on a server session
//	GET /s/<session>/dashboard  the teacher's dashboard of a class (the classroom lets only its teacher here)
//	GET /static/...     assets; the .wasm precompressed (br, gzip) by negotiation
//	GET /static/lessons/...  the lessons' definitions and texts
func (s Server) Handler() http.Handler {
	mux := http.NewServeMux()
	p := serverPage()
	mux.Handle("GET /{$}", templ.Handler(Landing(p)))
	// Each page's configuration is made when it is asked for: its
	// languages and lesson index are read once, on the first page, not
	// held by a server that serves none.
	mux.HandleFunc("GET /lab", func(w http.ResponseWriter, r *http.Request) {
		templ.Handler(Lab(p, OfflineLab(p))).ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /s/{session}/{$}", func(w http.ResponseWriter, r *http.Request) {
		templ.Handler(Lab(p, serverLab(p, s, r.PathValue("session")))).ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /s/{session}/dashboard", func(w http.ResponseWriter, r *http.Request) {
		templ.Handler(Dashboard(p, dashboard(p, r.PathValue("session")))).ServeHTTP(w, r)
	})
	assets := &assetServer{fsys: Static()}
	mux.Handle("GET /static/", http.StripPrefix("/static/", assets))
	mux.Handle("GET /static/lessons/", http.StripPrefix("/static/lessons/", &assetServer{fsys: LessonFiles()}))
	return mux
}

// assetServer serves embedded files with a strong ETag, and a precompressed
// variant (NAME.br, NAME.gz) when the file has one and the client accepts
// it: the WebAssembly engine is ~3 MB raw and well under a third of that
// compressed.
type assetServer struct {
	fsys  fs.FS
	etags sync.Map // name -> etag
}

var contentTypes = map[string]string{
	".wasm": "application/wasm",
	".js":   "text/javascript; charset=utf-8",
	".mjs":  "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".json": "application/json",
	".svg":  "image/svg+xml",
	".txt":  "text/plain; charset=utf-8",
	".md":   "text/markdown; charset=utf-8",
	".html": "text/html; charset=utf-8",
}

func (a *assetServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := path.Clean("/" + r.URL.Path)[1:]
	if name == "" || strings.HasSuffix(name, ".gz") || strings.HasSuffix(name, ".br") {
		http.NotFound(w, r)
		return
	}
	ctype, ok := contentTypes[path.Ext(name)]
	if !ok {
		ctype = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Add("Vary", "Accept-Encoding")
	w.Header().Set("Cache-Control", "no-cache") // revalidate: ETags make that cheap

	file := name
	for _, enc := range []struct{ token, ext string }{{"br", ".br"}, {"gzip", ".gz"}} {
		if !acceptsEncoding(r.Header.Get("Accept-Encoding"), enc.token) {
			continue
		}
		if _, err := fs.Stat(a.fsys, name+enc.ext); err == nil {
			file = name + enc.ext
			w.Header().Set("Content-Encoding", enc.token)
			break
		}
	}
	data, err := fs.ReadFile(a.fsys, file)
	if err != nil {
		w.Header().Del("Content-Encoding")
		http.NotFound(w, r)
		return
	}
	w.Header().Set("ETag", a.etag(file, data))
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
}

func (a *assetServer) etag(name string, data []byte) string {
	if v, ok := a.etags.Load(name); ok {
		return v.(string)
	}
	sum := sha256.Sum256(data)
	tag := `"` + hex.EncodeToString(sum[:12]) + `"`
	a.etags.Store(name, tag)
	return tag
}

// acceptsEncoding reports whether an Accept-Encoding value admits token
// (present, or via "*", with a non-zero q).
func acceptsEncoding(header, token string) bool {
	star := false
	for _, part := range strings.Split(header, ",") {
		fields := strings.Split(part, ";")
		name := strings.ToLower(strings.TrimSpace(fields[0]))
		q := 1.0
		for _, f := range fields[1:] {
			f = strings.TrimSpace(f)
			if v, ok := strings.CutPrefix(f, "q="); ok {
				if x, err := strconv.ParseFloat(v, 64); err == nil {
					q = x
				}
			}
		}
		switch name {
		case token:
			return q > 0
		case "*":
			star = q > 0
		}
	}
	return star
}
