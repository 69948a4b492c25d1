package main

import (
	"io"
	"net/http"
	"strings"

	"github.com/rvplay/rvplay/server/classroom"
)

// routes wires the server's paths:
//
//	GET  /healthz          200 "ok"
//	     /sessions, /s/…   the classroom: sessions and their APIs (package classroom)
//	     /, /lab, /static/ pages and assets (pages; nil: none)
func routes(reg *classroom.Registry, pages http.Handler) http.Handler {
	sessions := &classroom.Handler{Registry: reg, Web: pages}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/healthz":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, "ok")
		case p == "/sessions" || strings.HasPrefix(p, "/s/"):
			sessions.ServeHTTP(w, r)
		case pages != nil:
			pages.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}
