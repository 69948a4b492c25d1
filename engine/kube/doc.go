// Package kube is what kube-apiserver does over etcd: object metadata
// (uid, creationTimestamp, generation, managedFields), preconditions and
// optimistic concurrency, the Status errors kube-apiserver sends, the status
// and scale subresources, list with every resourceVersion ×
// resourceVersionMatch × limit/continue combination, and watch (initial
// events, bookmarks, 410 on compacted revisions, selector transitions).
//
// Objects are JSON documents (map[string]any), stored under the keys
// kube-apiserver uses (/registry/<resource>/<namespace>/<name>), so that the
// same write can be looked at through the etcd gateway: an object's
// metadata.resourceVersion is its key's mod_revision and a list's
// resourceVersion is the revision it was read at.
//
// A create's or an update's body is read here as kube-apiserver's decoder
// reads it (body.go: kind and apiVersion, types, unknown fields as
// fieldValidation says), the same on every build; the transport only turns
// YAML and protobuf into JSON first.
//
// A write is bounded before the costly work as kube-apiserver bounds it,
// and by one bound of rvplay's own (limits.go): etcd's request limit,
// the fields whose ownership is tracked. A write the store refuses for a
// quota reads as ResourceQuota's 403 (quota.go). Objects with a TTL
// (Events) are put with an etcd lease, as kube-apiserver's storage puts
// them, so that they expire (lease.go).
//
// A CustomResourceDefinition's CEL rules (x-kubernetes-validations) run
// through ValidationRules (customrules.go), which the server installs
// with kube-apiserver's own evaluator (server/crdrules): that code
// imports net/http and adds some 29 MB to the server's binary
// (BENCHMARKS.md), so this package does not link it. Without one (the browser's build) the rules are kept and not
// evaluated, and the writes they would have checked say so in a Warning
// (RulesNotEvaluated).
//
// The package talks to storage through the small KV interface (shaped on
// engine/mvcc's request types) so that it can run over a real etcd as well as
// over *mvcc.Store. It must not import net/http, syscall/js, SQLite or a
// websocket library, nor k8s.io/apimachinery: it is compiled to WebAssembly,
// where every megabyte counts.
package kube
