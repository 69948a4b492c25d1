// Package etcdgw serves etcd's v3 JSON gateway (the grpc-gateway that etcd
// 3.4 mounts at /v3/...) over an mvcc.KV (an mvcc.Store, or on the server
// a session's prefix of an etcd cluster), transport-neutrally: it takes an
// api.Request and answers an api.Response, so the same code runs behind
// net/http on the server and behind JavaScript calls in WebAssembly.
//
// The wire format is the one a real etcd 3.4 sends, checked with curl
// against Debian's etcd-server 3.4.23 on this machine:
//
//   - requests are decoded as golang/protobuf's jsonpb does (both the proto
//     field name and its lowerCamel JSON name are accepted, unknown fields are
//     ignored, 64-bit integers may be numbers or strings, bytes are standard
//     base64, enums are names or numbers, null means "not set", and only the
//     first JSON value of the body is read); decoding errors carry the very
//     messages encoding/json produces;
//   - responses are encoded as jsonpb with OrigName: proto field names
//     (snake_case, except StatusResponse whose proto fields are camelCase),
//     zero values omitted, 64-bit integers as strings, enums as names;
//   - errors are {"error":msg,"message":msg,"code":grpcCode} with the HTTP
//     status grpc-gateway v1 derives from the gRPC code;
//   - /v3/watch answers a stream of {"result":WatchResponse} lines.
//
// Known, deliberate differences from etcd 3.4 are listed beside the code
// that makes them (search for "differs from etcd").
//
// It must not import net/http, syscall/js, SQLite or a websocket library.
package etcdgw
