// Package client holds the Go clients that rvplay's lessons drive: a REST
// client for the Kubernetes API, a Reflector (list, then watch from the
// list's resourceVersion, resume, relist on 410, bookmarks, watch-list), an
// informer Store, RetryOnConflict with client-go's backoff values and a small
// deployment controller.
//
// They speak the Kubernetes REST protocol exactly as kube-apiserver serves
// it, but through an api.Handler instead of a network connection: in the
// browser (WebAssembly) the handler is the session's in-process API, on the
// server it is the session's handler too. So the package must depend only on
// the standard library and engine/api — never on net/http (megabytes of
// WebAssembly), syscall/js, SQLite or client-go.
//
// The Reflector exists to be watched: every list page, watch start, event,
// bookmark, closed stream, 410 and relist is reported as a Step with the
// resourceVersion it involved, so a UI can show the algorithm as it runs.
package client
