// Package schemadiff is a test module of its own (so the product module
// does not depend on k8s.io/api or client-go): it checks rvplay's
// hand-written type schemas (package schema) against the real Go types of
// k8s.io/api (field names, patch strategies and merge keys, which fields
// Go always writes) and against the structured-merge-diff schema that
// client-go ships for server-side apply (list types and keys, atomic
// structs and maps, scalar kinds).
package schemadiff
