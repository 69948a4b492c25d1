//go:build js && wasm

package main

import (
	"encoding/base64"
	"syscall/js"

	"github.com/rvplay/rvplay/engine/api/kubeapi"
)

// jsDecodeStored shows an etcd value (base64, as the gateway sends it)
// that a kube-apiserver stored in protobuf as JSON, for the etcd
// view: {json} when it is one, {error} when it has the envelope but does
// not decode, null when it is not protobuf. The decoding is the engine's
// (kubeapi.StoredProtobufJSON), so the view needs no protobuf code of its
// own; it is quick, so the call is synchronous.
func jsDecodeStored(_ js.Value, args []js.Value) any {
	if len(args) != 1 || args[0].Type() != js.TypeString {
		return nil
	}
	value, err := base64.StdEncoding.DecodeString(args[0].String())
	if err != nil || !kubeapi.IsStoredProtobuf(value) {
		return nil
	}
	out, err := kubeapi.StoredProtobufJSON(value)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	return map[string]any{"json": string(out)}
}
