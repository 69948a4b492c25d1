// Package kubeapi serves the Kubernetes REST API of a playground session
// as an api.Handler: discovery (/version, /api, /apis, …, legacy and
// aggregated as the Accept header asks: aggregated.go), the OpenAPI
// documents kubectl validates with, and every verb on the resources of
// package kube (/api/v1/…, /apis/apps/v1/…), with kube-apiserver's query
// parameters, content types, Status errors and watch streams, and its
// request deadlines (deadline.go).
//
// It is the transport of package kube: it reads the wire formats (JSON,
// YAML, protobuf) and the query, and answers in kube-apiserver's; what a
// request body may hold and every rule of a verb are kube's.
//
// It is transport-neutral: it must not import net/http, syscall/js, SQLite
// or a websocket library, because the WebAssembly build links it.
package kubeapi
