package classroom

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/server/telemetry"
)

// Handler serves the classroom's HTTP API and, under /s/<id>/, every
// session's APIs:
//
//	GET    /sessions                   the sessions the caller may see (open ones; with a bearer token, its own)
//	POST   /sessions                   create a guarded session ({"name": "<id>"} optional): 201 {"id", "joinCode", "url", "teacherToken"}
//	GET    /s/<id>                     a redirect to /s/<id>/
//	DELETE /s/<id>                     end a guarded session and delete its data (teacher)
//	GET    /s/<id>/                    the lab page (Web); without credentials, the landing page's join form
//	POST   /s/<id>/join                {"code", "name"}: 201 {"token", ...} and the token as a cookie
//	POST   /s/<id>/sign-in             with a token of the session: 200 {"id", "url", "principal", "name", "role"} and the token as a cookie
//	GET    /s/<id>/kubeconfig          a kubeconfig for the caller's token
//	POST   /s/<id>/rvplay/v1/reset     a fresh store at revision 1 (teacher)
//	POST   /s/<id>/rvplay/v1/join-code a new join code, the old one refused from now on (teacher): 201 {"id", "joinCode", "url"}
//	GET    /s/<id>/rvplay/v1/channel   the session channel, a WebSocket: presence, pushes; with ?roster=1 (teacher) the roster and new join codes (channel.go)
//	POST   /s/<id>/rvplay/v1/push      move the class to a lesson step (teacher; push.go); GET: the last push
//	GET    /s/<id>/dashboard           the teacher's dashboard page (Web; teacher)
//	GET    /s/<id>/rvplay/v1/class     what the dashboard shows (teacher; dashboard.go)
//	GET    /s/<id>/rvplay/v1/results.json, results.csv   the class's results (teacher; results.go)
//	       /s/<id>/<path>              the session (package session): /v3/... the etcd gateway; /rvplay/v1/...
//	                                   its own API (settings, exchanges, lessons, misconceptions, pods/<ns>/<name>/fail;
//	                                   changing settings is the teacher's); the rest the Kubernetes API
//
// On a guarded session every request carries "Authorization: Bearer
// <token>" (on etcd's paths also etcd's own "Authorization: <token>"), a
// WebSocket's "base64url.bearer.authorization.k8s.io.<token>" subprotocol
// (websocket.go), or the session's cookie; the person it names reaches the
// engine as the api.Principal of the request's context, and the server's
// logs and per-client limits as its telemetry.Request.
type Handler struct {
	Registry *Registry
	// Web serves the lab page of a session (GET /s/<id>/); nil: none.
	Web http.Handler
	// Admit, if set, says whether client (telemetry.Request.Client: a
	// person of a guarded session, or an address) may make r now, and if
	// not, how long it should wait: a per-client rate limit. A refusal is
	// a 429 in the protocol of r's path, with Retry-After.
	Admit func(r *http.Request, client string) (retryAfter time.Duration, ok bool)
}

// CookieName is the cookie that carries a browser's token. Its path is
// the session's, so a browser sends each session only its own token.
const CookieName = "rvplay-token"

// cookieMaxAge keeps a browser's token for a month of classes.
const cookieMaxAge = 30 * 24 * 60 * 60

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case p == "/sessions":
		if !h.admit(w, r, p) {
			return
		}
		h.serveSessions(w, r)
	case strings.HasPrefix(p, "/s/"):
		h.serveSession(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (h *Handler) serveSessions(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		token, _ := bearer(r, false)
		writeJSON(w, http.StatusOK, h.Registry.VisibleTo(token))
	case http.MethodPost:
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		req, err := decodeCreate(body)
		if err != nil {
			writeStatus(w, kube.NewBadRequest(err.Error()))
			return
		}
		created, err := h.Registry.CreateGuarded(req.Name)
		switch {
		case err == nil:
		case errors.Is(err, ErrExists):
			writeStatus(w, kube.NewAlreadyExists("", "sessions", req.Name))
			return
		case errors.Is(err, ErrTooMany):
			writeStatus(w, kube.NewForbidden("", "sessions", "", err.Error()+": this server holds at most "+
				strconv.Itoa(h.Registry.opts.MaxSessions)+" sessions; idle sessions expire"))
			return
		case errors.Is(err, ErrClosed):
			writeStatus(w, kube.NewServiceUnavailable(err.Error()))
			return
		case CheckName(req.Name) != nil:
			writeStatus(w, kube.NewInvalid("", "Session", req.Name, []kube.FieldError{
				{Type: kube.CauseFieldValueInvalid, Field: "name", Value: req.Name, Detail: err.Error()}}))
			return
		default:
			writeStatus(w, kube.NewInternalError(err))
			return
		}
		setCookie(w, r, created.ID, created.TeacherToken)
		w.Header().Set("Location", created.URL)
		writeJSON(w, http.StatusCreated, created)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		writeStatus(w, kube.NewMethodNotSupported("", "sessions", strings.ToLower(r.Method)))
	}
}

// sessionPath splits a path under /s/ into the session's name and the
// path within it, "/" first ("" for /s/<name> itself): a slice of path, not
// a copy, as this runs on every request.
func sessionPath(path string) (name, sub string) {
	rest := strings.TrimPrefix(path, "/s/")
	name, _, ok := strings.Cut(rest, "/")
	if !ok {
		return name, ""
	}
	return name, rest[len(name):]
}

func (h *Handler) serveSession(w http.ResponseWriter, r *http.Request) {
	name, sub := sessionPath(r.URL.Path)
	hasSlash := sub != ""
	if !hasSlash {
		sub = "/"
	}
	info, ok := h.Registry.Lookup(name)
	if !ok {
		if h.admit(w, r, sub) {
			writeResponse(w, sessionNotFound(name))
		}
		return
	}
	if ri := telemetry.From(r.Context()); ri != nil {
		ri.Session = name
	}
	if !hasSlash {
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			if h.admit(w, r, sub) {
				http.Redirect(w, r, URL(name), http.StatusMovedPermanently)
			}
		case http.MethodDelete:
			h.end(w, r, info)
		default:
			w.Header().Set("Allow", "GET, HEAD, DELETE")
			writeStatus(w, kube.NewMethodNotSupported("", "sessions", strings.ToLower(r.Method)))
		}
		return
	}
	if sub == "/join" {
		// By address: whoever guesses join codes is held to the rate of
		// one client.
		if h.admit(w, r, sub) {
			h.join(w, r, info)
		}
		return
	}
	p, token, authed := h.authenticate(r, info, sub)
	if !h.admit(w, r, sub) {
		return
	}
	if sub == SignInPath {
		h.signIn(w, r, info, p, token, authed)
		return
	}
	if (sub == "/" || sub == DashboardPath) && (r.Method == http.MethodGet || r.Method == http.MethodHead) && h.Web != nil {
		if !authed {
			// A person without the session's credentials (a student who
			// has not joined yet) gets the join form.
			http.Redirect(w, r, "/?join="+name, http.StatusSeeOther)
			return
		}
		if sub == DashboardPath && p.Role < api.RoleTeacher {
			writeResponse(w, forbiddenPath(p, r.Method, sub))
			return
		}
		h.Web.ServeHTTP(w, r)
		return
	}
	if !authed {
		writeResponse(w, unauthorized(sub))
		return
	}
	if teacherOnly(r.Method, sub) && p.Role < api.RoleTeacher {
		writeResponse(w, forbiddenPath(p, r.Method, sub))
		return
	}
	switch sub {
	case "/kubeconfig":
		h.kubeconfig(w, r, info, p, token)
		return
	case ChannelPath:
		h.serveChannel(w, r, info, p)
		return
	case PushPath:
		h.servePush(w, r, info, p)
		return
	case ClassPath:
		h.serveClass(w, r, info)
		return
	case ResultsJSONPath, ResultsCSVPath:
		h.serveResults(w, r, info, sub)
		return
	case JoinCodePath:
		h.renewJoinCode(w, r, info)
		return
	case resetPath:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeStatus(w, kube.NewMethodNotSupported("", "sessions", strings.ToLower(r.Method)))
			return
		}
		if err := h.Registry.Reset(r.Context(), name); err != nil {
			writeResponse(w, registryError(sub, name, err))
			return
		}
		writeStatus(w, success(name))
		return
	}
	sr := &sessionRequest{}
	l, err := h.Registry.Lease(r.Context(), name, &sr.lease)
	if err != nil {
		writeResponse(w, registryError(sub, name, err))
		return
	}
	defer sr.lease.Release()
	r2 := sr.of(r, sub, p)
	// The teacher may change the settings (or a lesson's set-up may): the
	// class keeps them and its labs learn of it (settings.go).
	control := p.Role == api.RoleTeacher && strings.HasPrefix(sub, controlPrefix) && r.Method != http.MethodGet && r.Method != http.MethodHead
	var before session.Settings
	if control {
		before = l.Session().Settings()
	}
	l.HTTP.ServeHTTP(w, r2)
	if control {
		h.Registry.keepSettings(name, l.Session(), before)
	}
}

// sessionRequest is what a request to a session's API gets on its way
// there, in one allocation (a request is on its way every few
// microseconds): its hold on the loaded session, and the request as the
// session sees it, with its path within the session and its principal.
type sessionRequest struct {
	lease Lease
	r     http.Request
	url   url.URL
	ctx   api.PrincipalContext
}

// of is r as the session sees it: a shallow copy, as http.StripPrefix
// makes (the handler reads the request and never changes it, so a deep
// Clone, headers and all, would buy nothing), with sub as its path and p
// in its context.
func (sr *sessionRequest) of(r *http.Request, sub string, p api.Principal) *http.Request {
	sr.ctx.Set(r.Context(), p)
	sr.url = *r.URL
	sr.url.Path = sub
	sr.url.RawPath = ""
	sr.r = *r.WithContext(&sr.ctx)
	sr.r.URL = &sr.url
	return &sr.r
}

// authenticate finds who makes r on session info: on an open session
// everyone is its teacher; on a guarded one, the holder of the token the
// request carries, or nobody (authed false). The person of a guarded
// session becomes the request's telemetry principal and client.
func (h *Handler) authenticate(r *http.Request, info Session, sub string) (p api.Principal, token string, authed bool) {
	token, presented := bearer(r, session.IsEtcdPath(sub))
	if !presented {
		var err error
		token, presented, err = webSocketBearer(r)
		if err != nil {
			return api.Principal{}, "", false
		}
	}
	if !presented {
		if c, err := r.Cookie(CookieName); err == nil {
			token = c.Value
		}
	}
	p, authed = h.Registry.Authenticate(info.Name, token)
	if !info.Guarded {
		token = ""
	}
	if ri := telemetry.From(r.Context()); ri != nil && authed && info.Guarded {
		ri.Principal = p.ID
		ri.Client = info.Name + "/" + p.ID
	}
	return p, token, authed
}

// admit applies Admit to r, whose path within its session (or the
// classroom's) is path, and answers the refusal. It reports whether r may
// go on.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request, path string) bool {
	if h.Admit == nil {
		return true
	}
	wait, ok := h.Admit(r, telemetry.ClientOf(r))
	if ok {
		return true
	}
	writeResponse(w, rateLimited(path, wait))
	return false
}

// bearer returns the token of r's Authorization header, and whether the
// request has one at all (then a cookie is not consulted). etcd's gateway
// takes the token bare, without a scheme; etcd paths accept that too.
func bearer(r *http.Request, etcd bool) (token string, presented bool) {
	v := r.Header.Get("Authorization")
	if v == "" {
		return "", false
	}
	scheme, rest, ok := strings.Cut(v, " ")
	if ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(rest), true
	}
	if etcd && !strings.Contains(v, " ") {
		return v, true
	}
	return "", true
}

// resetPath is the teacher's reset of a session's store.
const resetPath = "/rvplay/v1/reset"

// JoinCodePath is the teacher's renewal of a guarded session's join code.
const JoinCodePath = "/rvplay/v1/join-code"

// teacherOnlyPrefixes are the session's control paths whose changes are
// the teacher's: settings and pushing the class to a lesson step (package
// session serves them; reading them is free). Failing a pod
// (/rvplay/v1/pods/<ns>/<name>/fail) is not among them: anyone who may
// write to the session may, as a lesson asks of every learner.
var teacherOnlyPrefixes = []string{"/rvplay/v1/settings", "/rvplay/v1/push"}

// teacherReadOnly are the session's paths that are the teacher's for every
// method, reading included: what the class did, everyone's.
var teacherReadOnly = []string{ClassPath, ResultsJSONPath, ResultsCSVPath}

// controlPrefix begins every path of the session's own API, the teacher's
// paths among them.
const controlPrefix = "/rvplay/"

// teacherOnly reports whether method on path (relative to the session) is
// the teacher's alone. Compaction is, too, but the etcd gateway refuses it
// itself, in etcd's words, as it refuses a student's writes under
// /registry/.
func teacherOnly(method, path string) bool {
	if !strings.HasPrefix(path, controlPrefix) {
		// Every path above is one of the session's own API: the others
		// (every etcd and Kubernetes request) need no look at the lists.
		return false
	}
	if path == resetPath || path == JoinCodePath || slices.Contains(teacherReadOnly, path) {
		return true
	}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	for _, p := range teacherOnlyPrefixes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

func (h *Handler) end(w http.ResponseWriter, r *http.Request, info Session) {
	path := "/s/" + info.Name
	p, _, authed := h.authenticate(r, info, path)
	if !h.admit(w, r, path) {
		return
	}
	switch {
	case !authed:
		writeResponse(w, unauthorized(path))
		return
	case p.Role < api.RoleTeacher:
		writeResponse(w, forbiddenPath(p, r.Method, path))
		return
	}
	switch err := h.Registry.End(r.Context(), info.Name); {
	case errors.Is(err, ErrOpenSession):
		writeStatus(w, kube.NewForbidden("", "sessions", info.Name,
			"an open session (named on the server's command line) lives as long as its server serves it"))
	case err != nil:
		writeResponse(w, registryError(path, info.Name, err))
	default:
		// The browser's token for the session is of no use any more.
		http.SetCookie(w, &http.Cookie{Name: CookieName, Path: "/s/" + info.Name, MaxAge: -1,
			HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
		writeStatus(w, success(info.Name))
	}
}

func (h *Handler) join(w http.ResponseWriter, r *http.Request, info Session) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeStatus(w, kube.NewMethodNotSupported("", "sessions", strings.ToLower(r.Method)))
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	req, err := decodeJoin(body)
	if err != nil {
		writeStatus(w, kube.NewBadRequest(err.Error()))
		return
	}
	joined, err := h.Registry.Join(r.Context(), info.Name, req.Code, req.Name)
	switch {
	case err == nil:
	case errors.Is(err, ErrWrongCode):
		writeStatus(w, kube.NewForbidden("", "sessions", info.Name, err.Error()))
		return
	case errors.Is(err, ErrOpenSession):
		writeStatus(w, kube.NewBadRequest(`session "`+info.Name+`" is open: everyone may use it without joining`))
		return
	default:
		writeResponse(w, registryError("/join", info.Name, err))
		return
	}
	setCookie(w, r, info.Name, joined.Token)
	writeJSON(w, http.StatusCreated, joined)
}

// NewJoinCode is the answer to a renewal of the join code: the code is
// shown once, as at the session's creation.
type NewJoinCode struct {
	ID       string `json:"id"`
	JoinCode string `json:"joinCode"`
	URL      string `json:"url"`
}

// renewJoinCode gives the session a new join code, for a class whose
// teacher no longer has the code (it was shown once, to whoever created
// the session) or whose code went where it should not: the old code
// admits nobody from then on, and the students who joined keep their
// tokens. Like a ServiceAccount's TokenRequest, a POST answered 201.
func (h *Handler) renewJoinCode(w http.ResponseWriter, r *http.Request, info Session) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeStatus(w, kube.NewMethodNotSupported("", "sessions", strings.ToLower(r.Method)))
		return
	}
	code, err := h.Registry.NewJoinCode(r.Context(), info.Name)
	switch {
	case err == nil:
	case errors.Is(err, ErrOpenSession):
		writeStatus(w, kube.NewBadRequest(`session "`+info.Name+`" is open: everyone may use it without a join code`))
		return
	default:
		writeResponse(w, registryError(JoinCodePath, info.Name, err))
		return
	}
	writeJSON(w, http.StatusCreated, NewJoinCode{ID: info.Name, JoinCode: code, URL: URL(info.Name)})
}

// SignInPath takes a token of a guarded session and hands it to the
// browser as the session's cookie: a teacher who created the session with
// curl, or on another computer, opens the dashboard with it, and a student
// moves to another computer with the token of their kubeconfig. The token
// is presented as on every other path (Authorization: Bearer).
const SignInPath = "/sign-in"

// SignedIn is the answer to a sign-in: who the token names in the session.
type SignedIn struct {
	ID        string `json:"id"`
	URL       string `json:"url"`
	Principal string `json:"principal"`
	Name      string `json:"name,omitempty"`
	Role      string `json:"role"`
}

func (h *Handler) signIn(w http.ResponseWriter, r *http.Request, info Session, p api.Principal, token string, authed bool) {
	switch {
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", "POST")
		writeStatus(w, kube.NewMethodNotSupported("", "sessions", strings.ToLower(r.Method)))
	case !info.Guarded:
		writeStatus(w, kube.NewBadRequest(`session "`+info.Name+`" is open: everyone may use it without signing in`))
	case !authed:
		writeResponse(w, unauthorized(SignInPath))
	default:
		setCookie(w, r, info.Name, token)
		writeJSON(w, http.StatusOK, SignedIn{ID: info.Name, URL: URL(info.Name), Principal: p.ID, Name: p.Name, Role: p.Role.String()})
	}
}

// readBody reads the body of a classroom request, at most maxRequestBody
// bytes. Beyond that it answers 413, for a broken body 400, and ok is
// false.
func readBody(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeStatus(w, kube.NewRequestEntityTooLarge(maxRequestBody))
		return nil, false
	case err != nil:
		writeStatus(w, kube.NewBadRequest("reading the request body: "+err.Error()))
		return nil, false
	}
	return body, true
}

// setCookie hands a browser its token for session name: HttpOnly (no
// script reads it), SameSite=Strict (no other site's page sends it) and
// scoped to the session's path (no other session sees it).
func setCookie(w http.ResponseWriter, r *http.Request, name, token string) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: token, Path: "/s/" + name, MaxAge: cookieMaxAge,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode,
	})
}

func (h *Handler) kubeconfig(w http.ResponseWriter, r *http.Request, info Session, p api.Principal, token string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeStatus(w, kube.NewMethodNotSupported("", "sessions", strings.ToLower(r.Method)))
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	own := ""
	if p.Role == api.RoleStudent {
		own = p.ID
	}
	var ca []byte
	if r.TLS != nil {
		ca = h.Registry.opts.CA
	}
	cfg := kubeconfig(info.Name, scheme+"://"+r.Host+"/s/"+info.Name, ca, p.ID, token, own)
	w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="kubeconfig-`+info.Name+`.yaml"`)
	w.Header().Set("Cache-Control", "no-store")
	io.WriteString(w, cfg)
}
