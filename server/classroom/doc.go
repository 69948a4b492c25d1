// Package classroom is the server's session registry and the access rules
// of a class: which sessions exist, which are loaded, and who may do what
// in each.
//
// A session is open (named on the server's command line: everyone who
// knows its name is its teacher) or guarded (created with POST /sessions:
// its teacher holds the token the creation returned, and students join
// with its join code and get tokens of their own; the teacher may replace
// the code, and a token signs another browser in). Every request to a
// guarded session carries a token, as a bearer token or the session's
// cookie; the person it names reaches the engine as the request's
// api.Principal, and the protocols refuse what the person's role may not
// do in their own words (engine/api/etcdgw for etcd's keys and compaction;
// this package for the session's teacher-only control paths).
//
// Sessions are bounded: at most Options.MaxSessions exist, at most
// Options.MaxLoaded are loaded at once, a session is loaded on first use
// and unloaded when idle (it then holds no goroutine and no index, only a
// few hundred bytes of access data), and a guarded session unused for
// Options.ExpireAfter is ended and its data deleted. Random session ids,
// tokens and join codes come from crypto/rand and only their hashes are
// stored (credentials.go), but for a renewed join code, which replicas
// sharing an etcd cluster pass each other in clear on a short lease
// (shared.go).
//
// A guarded session is a class (channel.go, push.go, dashboard.go): each
// browser keeps a channel open on which it reports where its learner is
// and a student's lab gets the teacher's pushes to a lesson step; the
// teacher's dashboard reads who is connected, where each student is and
// since when, their watches, progress and misconceptions, and exports the
// results. What a class
// achieved, and the settings its teacher left, outlive the session's time
// in memory (progress.go, findings.go, settings.go).
//
// The registry keeps its records in its Storage: SQLite (engine/sqlite:
// session access and students, migration 0002; a class's progress and
// findings, 0004; its settings, 0005; its students' keys' first
// creations, 0007) or, with --store etcd://, the cluster
// (server/etcdstore). Handler serves the HTTP API. Package main only wires them to flags.
package classroom
