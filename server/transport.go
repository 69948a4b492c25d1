package main

import (
	"flag"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/etcdgw"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/server/classroom"
	"github.com/rvplay/rvplay/server/httpapi"
)

// transport holds the flags that bound what a client can make the HTTP
// transport hold (README, "Limits"): request bodies, answers, origins.
type transport struct {
	maxBody      *int64
	bodyMemory   *int64
	bodyTimeout  *time.Duration
	writeTimeout *time.Duration
	maxResponse  *int64
	origins      *string
}

// bodyMemoryWait is how long a body waits for memory from the budget
// before it is refused with 429.
const bodyMemoryWait = time.Second

func transportFlags(fs *flag.FlagSet) *transport {
	return &transport{
		maxBody: fs.Int64("max-body-bytes", httpapi.DefaultMaxBodyBytes,
			"largest request body, in bytes (kube-apiserver's 3 MiB); larger ones are refused with 413"),
		bodyMemory: fs.Int64("body-memory-bytes", 64<<20,
			"memory all request bodies being received may hold at once, across sessions; a body that finds it taken waits up to 1s, then is refused with 429"),
		bodyTimeout: fs.Duration("body-timeout", httpapi.DefaultBodyTimeout,
			"time a client has to send a request's body"),
		writeTimeout: fs.Duration("write-timeout", httpapi.DefaultWriteTimeout,
			"time a client has to take a watch event, or each MiB of an answer, before it is disconnected"),
		maxResponse: fs.Int64("max-response-bytes", etcdgw.DefaultMaxResponseBytes,
			"largest etcd gateway answer (a range, a txn, a delete with prev_kv), protobuf-encoded, as etcd's gRPC send limit; larger ones are refused (ResourceExhausted, 429)"),
		origins: fs.String("allowed-origins", "",
			"comma-separated origins (scheme://host[:port]) whose pages may change sessions besides the server's own; curl and kubectl need none"),
	}
}

// apply sets the transport's bounds in opts, for every session's adapter
// and gateway, and returns the origins whose pages may change sessions.
// The adapters count on guard for their bodies' read deadline and for
// the check of origins.
func (t *transport) apply(opts *classroom.Options) (*httpapi.Origins, error) {
	origins, err := httpapi.NewOrigins(strings.Split(*t.origins, ","))
	if err != nil {
		return nil, fmt.Errorf("--allowed-origins: %w", err)
	}
	if *t.bodyMemory < *t.maxBody {
		return nil, fmt.Errorf("--body-memory-bytes (%d) must be at least --max-body-bytes (%d)", *t.bodyMemory, *t.maxBody)
	}
	opts.HTTP.MaxBodyBytes = *t.maxBody
	opts.HTTP.BodyTimeout = *t.bodyTimeout
	// guard's BodyDeadline, around every path, has set it.
	opts.HTTP.BodyDeadlineSet = true
	opts.HTTP.Bodies = httpapi.NewBodyBudget(*t.bodyMemory, bodyMemoryWait)
	opts.HTTP.Origins = origins
	// guard's Origins.Guard, around every path, has checked them.
	opts.HTTP.OriginsGuarded = true
	opts.HTTP.WriteTimeout = *t.writeTimeout
	opts.Session.Gateway.MaxResponseBytes = *t.maxResponse
	return origins, nil
}

// guard is the server's outermost handler: no page of a site that origins
// does not trust changes anything, on any path (httpapi.Origins.Guard),
// and every body is read under --body-timeout.
func (t *transport) guard(origins *httpapi.Origins, h http.Handler) http.Handler {
	return origins.Guard(httpapi.BodyDeadline(h, *t.bodyTimeout), refuseServerPath)
}

// refuseServerPath words a refusal of any path of the server: a session's
// path as the session would, the server's own paths as a Status.
func refuseServerPath(r *http.Request, why api.Refusal) *api.Response {
	p := r.URL.Path
	if rest, ok := strings.CutPrefix(p, "/s/"); ok {
		if _, sub, ok := strings.Cut(rest, "/"); ok {
			p = "/" + sub
		}
	}
	return session.Refuse(p, why)
}
