// Package telemetry follows each request through the server for the logs
// and the metrics: what it is (its protocol and verb, from its path), who
// makes it (the session and the person, which package classroom fills in
// once it has authenticated them), and how it ends (status and duration).
//
// Handler wraps the server's routes: it puts a Request in every request's
// context, and when the request ends it hands the outcome to a Recorder
// (the Prometheus metrics) and logs it with log/slog: refused and failed
// requests at Info and Error, the others (and the 429s of shed load) at
// Debug. A log record names the session and the principal's id, never a
// token.
package telemetry
