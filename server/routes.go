package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// server routes the HTTP paths of rvplay:
//
//	GET  /healthz            200 "ok"
//	GET  /sessions           the sessions, as JSON
//	POST /sessions           create one ({"name":"..."} optional)
//	GET  /s/<name>/          the lab page of a session (web)
//	     /s/<name>/<path>    the session's APIs: /v3/... (etcd), the rest (Kubernetes)
//	     /, /lab, /static/   pages and assets (web)
type server struct {
	reg *registry
	web http.Handler // nil: no pages
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/healthz":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok")
	case p == "/sessions":
		s.serveSessions(w, r)
	case strings.HasPrefix(p, "/s/"):
		s.serveSession(w, r)
	case s.web != nil:
		s.web.ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *server) serveSession(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/s/")
	name, sub, hasSlash := strings.Cut(rest, "/")
	if !hasSlash {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			http.Redirect(w, r, "/s/"+name+"/", http.StatusMovedPermanently)
			return
		}
		http.NotFound(w, r)
		return
	}
	ls, err := s.reg.lookup(name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if ls == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": `session "` + name + `" not found`})
		return
	}
	if sub == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) && s.web != nil {
		s.web.ServeHTTP(w, r) // the lab page of this session
		return
	}
	// The session sees paths relative to its base URL. A shallow copy with
	// its own URL, as http.StripPrefix makes: the handler reads the request
	// and never changes it, so a deep Clone (headers and all, on every
	// request) would buy nothing.
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path = "/" + sub
	u.RawPath = ""
	r2.URL = &u
	ls.http.ServeHTTP(w, r2)
}

type sessionInfo struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

func info(name string) sessionInfo { return sessionInfo{Name: name, URL: "/s/" + name + "/"} }

func (s *server) serveSessions(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		list := []sessionInfo{}
		for _, n := range s.reg.names() {
			list = append(list, info(n))
		}
		writeJSON(w, http.StatusOK, list)
	case http.MethodPost:
		var req struct {
			Name string `json:"name"`
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4096))
		if err != nil {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"message": "request body too large"})
			return
		}
		if len(strings.TrimSpace(string(body))) > 0 {
			if err := json.Unmarshal(body, &req); err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{"message": "invalid JSON: " + err.Error()})
				return
			}
		}
		name := req.Name
		if name == "" {
			for {
				name = randomName()
				if ls, _ := s.reg.lookup(name); ls == nil {
					break
				}
			}
		}
		_, created, err := s.reg.create(name)
		switch {
		case errors.Is(err, errClosed):
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"message": err.Error()})
		case err != nil && checkName(name) != nil:
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": err.Error()})
		case err != nil:
			writeJSON(w, http.StatusInternalServerError, map[string]string{"message": err.Error()})
		case !created:
			writeJSON(w, http.StatusConflict, map[string]string{
				"name": name, "url": info(name).URL, "message": `session "` + name + `" already exists`})
		default:
			w.Header().Set("Location", info(name).URL)
			writeJSON(w, http.StatusCreated, info(name))
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
