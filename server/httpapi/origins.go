package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rvplay/rvplay/engine/api"
)

// Origins says which web pages may change a session. Sessions carry no
// credentials a browser would withhold from another site, so without this
// check any page a student visits could write into a session or wipe it
// with a plain form or fetch (a text/plain POST needs no CORS preflight).
// A state-changing request (any method but GET, HEAD and OPTIONS, and every
// WebSocket upgrade) is served only when it comes from no browser at all
// (no Origin header and no cross-site Sec-Fetch-Site: curl, kubectl,
// client-go), from the server's own pages, or from an origin configured as
// allowed. Pages of allowed origins also get CORS headers naming their
// origin; no answer ever carries a wildcard.
//
// The nil *Origins allows the server's own pages only.
type Origins struct {
	allowed map[string]bool
}

// NewOrigins returns the policy allowing, besides the server's own pages,
// the given origins ("https://lab.example.org", scheme://host[:port], as a
// browser sends them in its Origin header).
func NewOrigins(allowed []string) (*Origins, error) {
	o := &Origins{allowed: map[string]bool{}}
	for _, a := range allowed {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		u, err := url.Parse(a)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			return nil, fmt.Errorf("allowed origin %q: want scheme://host[:port], as in a browser's Origin header", a)
		}
		o.allowed[strings.ToLower(u.Scheme+"://"+u.Host)] = true
	}
	return o, nil
}

// safe reports a request that changes nothing.
func safe(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return !websocket.IsWebSocketUpgrade(r)
	}
	return false
}

// Permit reports whether r may be served.
func (o *Origins) Permit(r *http.Request) bool {
	if safe(r) {
		return true
	}
	fetchSite := r.Header.Get("Sec-Fetch-Site")
	if fetchSite == "same-origin" {
		return true // the browser itself vouches for the page
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return fetchSite != "cross-site" && fetchSite != "same-site"
	}
	return sameHost(origin, r) || o.allows(origin)
}

func (o *Origins) allows(origin string) bool {
	return o != nil && o.allowed[strings.ToLower(origin)]
}

// sameHost reports an origin on the host the request was sent to, as
// gorilla/websocket's own check does.
func sameHost(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// cors adds the CORS headers for a page of an allowed origin and answers
// its preflight; it reports whether the request is answered.
func (o *Origins) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || sameHost(origin, r) || !o.allows(origin) {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	if !strings.Contains(strings.Join(h.Values("Vary"), ","), "Origin") {
		h.Add("Vary", "Origin")
	}
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	// A preflight, answered as kube-apiserver's CORS filter does.
	h.Set("Access-Control-Allow-Methods", "POST, GET, OPTIONS, PUT, DELETE, PATCH")
	if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
		h.Set("Access-Control-Allow-Headers", req)
	}
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}

// Guard is the server's outermost handler: it serves next what o permits
// (with CORS headers for allowed origins) and answers the rest with
// refuse's answer.
func (o *Origins) Guard(next http.Handler, refuse func(r *http.Request, why api.Refusal) *api.Response) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !o.Permit(r) {
			w.Header().Set("Connection", "close")
			http.NewResponseController(w).SetReadDeadline(time.Now()) // see readBody
			resp := refuse(r, api.Refusal{Kind: api.CrossOrigin, Detail: originOf(r)})
			writeAnswer(w, resp, len(resp.Body))
			return
		}
		if o.cors(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}
