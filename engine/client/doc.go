// Package client holds the Go clients that rvplay's lessons drive: a REST
// client for the Kubernetes API, a Reflector (list, then watch from the
// list's resourceVersion, resume, relist on 410, bookmarks, watch-list), an
// informer Store, RetryOnConflict with client-go's backoff values, and
// client-go's shared informer factory and rate-limited work queue, on which
// engine/controllers builds kube-controller-manager's controllers.
//
// They speak the Kubernetes REST protocol exactly as kube-apiserver serves
// it, but through an api.Handler instead of a network connection: in the
// browser (WebAssembly) the handler is the session's in-process API, on the
// server it is the session's handler too. So the package must depend only on
// the standard library, engine/api and engine/clock — never on net/http (megabytes of
// WebAssembly), syscall/js, SQLite or client-go.
//
// The Reflector exists to be watched: every list page, watch start, event,
// bookmark, closed stream, 410 and relist is reported as a Step with the
// resourceVersion it involved (Reflector.OnStep, Reflector.Steps, and
// Step.MarshalJSON for a UI), so a lesson can show the algorithm as it runs:
//
//	c := client.New(session)                       // any api.Handler
//	inf := client.NewInformer(c.Resource(client.ConfigMaps).Namespace("default"))
//	inf.Reflector.OnStep = func(s client.Step) { show(s) }
//	inf.Reflector.WatchList = true                  // client-go >= 0.35 default
//	go inf.Run(ctx)
//
// Every request a Client sends is reported with its answer
// (Client.OnExchange), so a lab can show a client's log; a Mapper resolves
// the resource names kubectl accepts through the server's discovery; a
// Reflector can be disconnected (its watch closed, as by a dropped
// connection) and resumed from the revision it reached. Time is an
// engine/clock Clock: the wall clock keeps client-go's timings, a Fake lets
// tests and lessons move it by hand, the session's one with the store's.
//
// The browser build runs these clients for the lab (wasm/internal/labapi,
// web/static/js/goclients.js), over the in-page session offline and over
// fetch and WebSocket on a server session (wasm/internal/remote).
//
// What it follows from client-go (tools/cache, util/retry, apimachinery's
// errors): the choice of resourceVersion for each list and watch, the pager
// rules (limit 500, none for a specific RV, full list when a continue token
// expires), resuming on a clean close, relisting after Expired/Gone and
// "too large resource version", the "very short watch" rule, watch-list
// with its initial-events-end bookmark and fallback to LIST, the backoff
// between rounds (800ms doubling to 30s, jitter 1.0, reset after 2m), what
// a relist tells the handlers (DeltaFIFO.Replace and the shared informer:
// an object gone from the new state is a DeletedFinalStateUnknown holding
// the last state known, one whose resourceVersion changed an update), the
// error predicates and the retry timings. What it leaves out: DeltaFIFO's
// queue, resync periods (a resync re-delivers the informer's own cache and
// asks the server nothing, so it could not find a missed delete anyway)
// and indexers.
package client
