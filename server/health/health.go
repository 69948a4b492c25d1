// Package health serves the server's health endpoints as kube-apiserver
// serves /healthz, /livez and /readyz, so that the probes and scripts
// written for it work unchanged: "ok" when every check passes; with
// ?verbose, one line per check ("[+]ping ok") and "<endpoint> check
// passed"; on a failure, always that listing with the failed check's reason
// withheld ("[-]database failed: reason withheld") and a 500; ?exclude=<check>
// skips a check; /<endpoint>/<check> runs one check alone and says why it
// failed. The reasons go to the log.
package health

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
)

// Check is one named health check: nil means healthy.
type Check struct {
	Name  string
	Check func(r *http.Request) error
}

// Ping is kube-apiserver's "ping" check: the server answers HTTP.
var Ping = Check{Name: "ping", Check: func(*http.Request) error { return nil }}

// Shutdown is the readiness check that fails once the server has begun to
// shut down (kube-apiserver's "shutdown" check), so that a load balancer
// stops sending it new clients while it finishes with the ones it has.
type Shutdown struct{ shuttingDown atomic.Bool }

// Begin marks the start of the shutdown.
func (s *Shutdown) Begin() { s.shuttingDown.Store(true) }

// Check is the "shutdown" check.
func (s *Shutdown) Check() Check {
	return Check{Name: "shutdown", Check: func(*http.Request) error {
		if s.shuttingDown.Load() {
			return fmt.Errorf("process is shutting down")
		}
		return nil
	}}
}

// Endpoint serves one health endpoint, /<Name> and /<Name>/<check>.
type Endpoint struct {
	Name   string
	Checks []Check
	// Log takes the reasons of failed checks; nil: slog.Default().
	Log *slog.Logger
}

func (e *Endpoint) log() *slog.Logger {
	if e.Log != nil {
		return e.Log
	}
	return slog.Default()
}

func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	root := "/" + e.Name
	switch p := r.URL.Path; {
	case p == root:
		e.serveAll(w, r)
	case strings.HasPrefix(p, root+"/"):
		name := strings.TrimPrefix(p, root+"/")
		for _, c := range e.Checks {
			if c.Name == name {
				e.serveOne(w, r, c)
				return
			}
		}
		http.NotFound(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (e *Endpoint) serveAll(w http.ResponseWriter, r *http.Request) {
	excluded := map[string]bool{}
	for _, x := range r.URL.Query()["exclude"] {
		excluded[x] = true
	}
	var out strings.Builder
	var failed []string
	for _, c := range e.Checks {
		if excluded[c.Name] {
			delete(excluded, c.Name)
			fmt.Fprintf(&out, "[+]%s excluded: ok\n", c.Name)
			continue
		}
		if err := c.Check(r); err != nil {
			// The endpoint is public: the reason goes to the log only.
			fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", c.Name)
			failed = append(failed, c.Name)
			e.log().Warn(e.Name+" check failed", "check", c.Name, "err", err)
			continue
		}
		fmt.Fprintf(&out, "[+]%s ok\n", c.Name)
	}
	if len(excluded) > 0 {
		var names []string
		for _, c := range r.URL.Query()["exclude"] {
			if excluded[c] {
				names = append(names, fmt.Sprintf("%q", c))
				delete(excluded, c)
			}
		}
		fmt.Fprintf(&out, "warn: some health checks cannot be excluded: no matches for %s\n", strings.Join(names, ","))
	}
	if len(failed) > 0 {
		// Always verbose on a failure.
		http.Error(w, out.String()+e.Name+" check failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if _, verbose := r.URL.Query()["verbose"]; !verbose {
		fmt.Fprint(w, "ok")
		return
	}
	fmt.Fprintf(w, "%s%s check passed\n", out.String(), e.Name)
}

func (e *Endpoint) serveOne(w http.ResponseWriter, r *http.Request, c Check) {
	if err := c.Check(r); err != nil {
		http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	fmt.Fprint(w, "ok")
}
