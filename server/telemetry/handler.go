package telemetry

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Recorder takes the outcome of every request (package metrics).
type Recorder interface {
	ObserveRequest(protocol, verb string, code int, elapsed time.Duration)
}

// Handler serves next, following each request: it carries a Request in
// its context, and its outcome goes to rec (if not nil) and to log. A
// request that is a stream (a watch) ends when the stream does; a
// WebSocket counts as its upgrade's 101.
func Handler(next http.Handler, rec Recorder, log *slog.Logger) http.Handler {
	return &handler{next: next, rec: rec, log: log}
}

// handler is Handler's, a type of its own rather than a closure: a closure
// is inlined into its caller's package, where the request's copy in
// ServeHTTP was found to escape, an allocation on every request.
type handler struct {
	next http.Handler
	rec  Recorder
	log  *slog.Logger
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	f := &followed{Context: r.Context(), sw: statusWriter{ResponseWriter: w}}
	ri := &f.ri
	ri.Protocol, ri.Verb = Classify(r)
	f.r = *r.WithContext(f) // its copy stays on the stack: WithContext is inlined
	h.next.ServeHTTP(&f.sw, &f.r)
	elapsed := time.Since(start)
	code := f.sw.status()
	logRequest(r.Context(), h.log, r, ri, code, elapsed)
	if h.rec != nil {
		h.rec.ObserveRequest(ri.Protocol, ri.Verb, code, elapsed)
	}
}

// followed is what Handler adds to a request, in one allocation (it runs
// on every request): the request's context, which carries its Request
// (From) without a context value of its own, the writer that notes its
// status, and the request as the handlers inside see it, with that
// context (a shallow copy, as WithContext makes, not an allocation of its
// own).
type followed struct {
	context.Context
	ri Request
	sw statusWriter
	r  http.Request
}

func (f *followed) Value(key any) any {
	if key == (requestKey{}) {
		return &f.ri
	}
	return f.Context.Value(key)
}

// logRequest logs a failed request (5xx) as an error, a refused one (4xx)
// as information, and the others (and the 429s of shed load) for
// debugging.
func logRequest(ctx context.Context, log *slog.Logger, r *http.Request, ri *Request, code int, elapsed time.Duration) {
	level, msg := slog.LevelDebug, "request"
	switch {
	case code >= 500:
		level, msg = slog.LevelError, "request failed"
	case code == http.StatusTooManyRequests:
		// Shed load: counted in the metrics, and logged only for
		// debugging, or a client held back would fill the log at the rate
		// it retries.
		level, msg = slog.LevelDebug, "request refused"
	case code >= 400:
		level, msg = slog.LevelInfo, "request refused"
	}
	if !log.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.String("protocol", ri.Protocol), slog.String("verb", ri.Verb),
		slog.Int("code", code), slog.Duration("elapsed", elapsed),
		slog.String("remote", RemoteHost(r)),
	}
	if ri.Session != "" {
		attrs = append(attrs, slog.String("session", ri.Session))
	}
	if ri.Principal != "" {
		attrs = append(attrs, slog.String("principal", ri.Principal))
	}
	if ua := r.UserAgent(); ua != "" {
		attrs = append(attrs, slog.String("userAgent", ua))
	}
	log.LogAttrs(ctx, level, msg, attrs...)
}

// statusWriter remembers the status written through it. It keeps what
// the server's handlers need of the ResponseWriter it wraps: Flush for
// chunked watches, Hijack for WebSocket upgrades (gorilla/websocket asks
// for http.Hijacker itself), and Unwrap for http.ResponseController's
// deadlines.
type statusWriter struct {
	http.ResponseWriter
	code     int
	hijacked bool
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 && code >= 200 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("telemetry: the connection cannot be hijacked")
	}
	c, rw, err := h.Hijack()
	if err == nil {
		w.hijacked = true
	}
	return c, rw, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// status is the status the client got: 101 for a hijacked connection (a
// WebSocket upgrade writes its 101 itself), 200 when the handler wrote
// nothing (net/http's default).
func (w *statusWriter) status() int {
	switch {
	case w.code != 0:
		return w.code
	case w.hijacked:
		return http.StatusSwitchingProtocols
	}
	return http.StatusOK
}
