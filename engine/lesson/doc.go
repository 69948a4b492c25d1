// Package lesson is rvplay's lesson engine: it reads lesson definitions (the
// language-neutral lesson.json of each web/lessons/<nn>-<slug>/ directory),
// checks them, and evaluates a step's verify predicate against what a
// session holds: its etcd keys and revisions, its Kubernetes objects, and
// its record of exchanges (every request a client sent and what it got).
//
// A predicate checks what the learner achieved, not which button they
// pressed: "client B's PUT got a 409 Conflict" holds whether B was the lab's
// client card, the console, the editor, or the learner's own kubectl on a
// server session. The same record feeds the misconception detectors
// ("retried a 409 without re-reading", "resumed a watch from an item's
// resourceVersion") that a teacher's dashboard counts.
//
// The texts (markdown per step per language) are not read here: the browser
// loads them as static files, so adding a language never touches Go.
//
// The package is part of the engine: it runs in the browser (WebAssembly)
// and on the server, so it must not import net/http, syscall/js, SQLite or a
// websocket library, nor the web/ tree (definitions are passed in as an
// fs.FS).
package lesson
