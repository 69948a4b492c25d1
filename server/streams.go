package main

import (
	"log/slog"
	"net/http"

	"github.com/rvplay/rvplay/server/metrics"
	"github.com/rvplay/rvplay/server/telemetry"
)

// streamObserver counts what watch streams send and the watchers closed
// for being slow (httpapi.StreamObserver), and logs each such close, as
// kube-apiserver logs "Forcing watcher close due to unresponsiveness".
type streamObserver struct {
	metrics *metrics.Metrics
	log     *slog.Logger
}

func (o streamObserver) FramesSent(r *http.Request, n int) { o.metrics.EventsSent(protocolOf(r), n) }

func (o streamObserver) Behind(r *http.Request) { o.metrics.StreamBehind(protocolOf(r)) }

func (o streamObserver) SlowClosed(r *http.Request) {
	protocol := protocolOf(r)
	o.metrics.SlowWatcherClosed(protocol)
	attrs := []any{"protocol", protocol, "path", r.URL.Path}
	if ri := telemetry.From(r.Context()); ri != nil {
		attrs = append(attrs, "session", ri.Session, "principal", ri.Principal)
	}
	o.log.Info("watch closed: its client did not keep up", attrs...)
}

// protocolOf is the protocol of r as the telemetry named it.
func protocolOf(r *http.Request) string {
	p, _ := telemetry.Names(r)
	return p
}
