package etcdgw

import (
	"fmt"
	"math/bits"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// The checks etcd 3.4 makes before a request reaches its store, in etcd's
// order: the gRPC server's message size limit, then v3rpc's static checks
// (key.go), then, for requests that go through raft, the raft entry size
// limit. The semantic checks are the store's own (mvcc.CheckRange,
// CheckPut, CheckDeleteRange, CheckTxn); the store makes them again when
// the request reaches it, but calling them here, between the two size
// limits, gives a request with several faults etcd's error.

const (
	// maxRequestBytes is etcd's --max-request-bytes default (1.5 MiB): the
	// largest raft entry, so the largest write.
	maxRequestBytes = 1536 * 1024
	// maxRecvMsgSize is the gRPC server's receive limit etcd sets:
	// max-request-bytes plus 512 KiB of gRPC overhead.
	maxRecvMsgSize = maxRequestBytes + 512*1024
	// raftEnvelope is what etcd's InternalRaftRequest adds around a write:
	// a RequestHeader (field 100) holding a 64-bit request ID, and the tag and
	// length of the request field.
	raftEnvelope = 2 + 1 + 1 + 10 + 1
)

// errMessageTooLarge is what the gRPC server answers for a request message
// above its receive limit (etcd's gateway turns it into HTTP 429).
func errMessageTooLarge(size int) *mvcc.Error {
	return &mvcc.Error{Code: mvcc.CodeResourceExhausted,
		Message: fmt.Sprintf("grpc: received message larger than max (%d vs. %d)", size, maxRecvMsgSize)}
}

func checkMessageSize(size int) error {
	if size > maxRecvMsgSize {
		return errMessageTooLarge(size)
	}
	return nil
}

// checkRaftSize is etcd's "request is too large" for a write of size bytes.
func checkRaftSize(size int) error {
	if size+raftEnvelope+varintSize(uint64(size)) > maxRequestBytes {
		return mvcc.ErrRequestTooLarge
	}
	return nil
}

// txnIsReadOnly is etcd 3.4's isTxnReadonly: a txn whose branches hold only
// ranges is served without raft (so without the raft size limit).
func txnIsReadOnly(r *mvcc.TxnRequest) bool {
	for _, ops := range [][]mvcc.RequestOp{r.Success, r.Failure} {
		for i := range ops {
			if ops[i].Range == nil {
				return false
			}
		}
	}
	return true
}

// Protobuf encoded sizes of the requests, for the two size limits.

func varintSize(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

func bytesFieldSize(tag int, b []byte) int {
	if len(b) == 0 {
		return 0
	}
	return tag + varintSize(uint64(len(b))) + len(b)
}

func intFieldSize(v int64) int {
	if v == 0 {
		return 0
	}
	return 1 + varintSize(uint64(v))
}

func boolFieldSize(v bool) int {
	if !v {
		return 0
	}
	return 2
}

func messageFieldSize(tag, size int) int { return tag + varintSize(uint64(size)) + size }

func rangeSize(r *mvcc.RangeRequest) int {
	return bytesFieldSize(1, r.Key) + bytesFieldSize(1, r.RangeEnd) + intFieldSize(r.Limit) +
		intFieldSize(r.Revision) + intFieldSize(int64(r.SortOrder)) + intFieldSize(int64(r.SortTarget)) +
		boolFieldSize(r.Serializable) + boolFieldSize(r.KeysOnly) + boolFieldSize(r.CountOnly) +
		intFieldSize(r.MinModRevision) + intFieldSize(r.MaxModRevision) +
		intFieldSize(r.MinCreateRevision) + intFieldSize(r.MaxCreateRevision)
}

func putSize(r *mvcc.PutRequest) int {
	return bytesFieldSize(1, r.Key) + bytesFieldSize(1, r.Value) + intFieldSize(r.Lease) +
		boolFieldSize(r.PrevKv) + boolFieldSize(r.IgnoreValue) + boolFieldSize(r.IgnoreLease)
}

func deleteRangeSize(r *mvcc.DeleteRangeRequest) int {
	return bytesFieldSize(1, r.Key) + bytesFieldSize(1, r.RangeEnd) + boolFieldSize(r.PrevKv)
}

func compareSize(c *mvcc.Compare) int {
	return intFieldSize(int64(c.Result)) + intFieldSize(int64(c.Target)) + bytesFieldSize(1, c.Key) +
		intFieldSize(c.Version) + intFieldSize(c.CreateRevision) + intFieldSize(c.ModRevision) +
		bytesFieldSize(1, c.Value) + intFieldSize(c.Lease) + bytesFieldSize(2, c.RangeEnd)
}

func opSize(op *mvcc.RequestOp) int {
	switch {
	case op.Range != nil:
		return messageFieldSize(1, rangeSize(op.Range))
	case op.Put != nil:
		return messageFieldSize(1, putSize(op.Put))
	case op.DeleteRange != nil:
		return messageFieldSize(1, deleteRangeSize(op.DeleteRange))
	case op.Txn != nil:
		return messageFieldSize(1, txnSize(op.Txn))
	}
	return 0
}

func txnSize(r *mvcc.TxnRequest) int {
	n := 0
	for i := range r.Compare {
		n += messageFieldSize(1, compareSize(&r.Compare[i]))
	}
	for _, ops := range [][]mvcc.RequestOp{r.Success, r.Failure} {
		for i := range ops {
			n += messageFieldSize(1, opSize(&ops[i]))
		}
	}
	return n
}

func compactionSize(r *mvcc.CompactionRequest) int {
	return intFieldSize(r.Revision) + boolFieldSize(r.Physical)
}

// The gRPC server's send limit. etcd sets it to math.MaxInt32, so a range
// of any size is sent; a shared server caps it lower
// (Options.MaxResponseBytes, which differs from etcd only in its value),
// and a response over the cap gets the error
// gRPC gives for a message over its send limit (ResourceExhausted, which
// the gateway answers with HTTP 429). The check runs after the store
// answered and before a byte of JSON is written: a refused answer costs
// its list of pointers into the store, not its encoding.

// etcdMaxSendBytes is etcd's send limit (v3rpc's maxSendBytes).
const etcdMaxSendBytes = 1<<31 - 1

// DefaultMaxResponseBytes is the send limit the server sets by default
// (--max-response-bytes): 32 MiB of protobuf, about 43 MB of JSON.
const DefaultMaxResponseBytes = 32 << 20

func checkResponseSize(size, limit int) error {
	if size > limit {
		return &mvcc.Error{Code: mvcc.CodeResourceExhausted,
			Message: fmt.Sprintf("grpc: trying to send message larger than max (%d vs. %d)", size, limit)}
	}
	return nil
}

// Protobuf encoded sizes of the responses, for the send limit.

func headerSize(h Header) int {
	return intFieldSize(int64(h.ClusterID)) + intFieldSize(int64(h.MemberID)) +
		intFieldSize(h.Revision) + intFieldSize(int64(h.RaftTerm))
}

func kvSize(kv *mvcc.KeyValue) int {
	return bytesFieldSize(1, kv.Key) + intFieldSize(kv.CreateRevision) + intFieldSize(kv.ModRevision) +
		intFieldSize(kv.Version) + bytesFieldSize(1, kv.Value) + intFieldSize(kv.Lease)
}

func kvsSize(kvs []*mvcc.KeyValue) int {
	n := 0
	for _, kv := range kvs {
		n += messageFieldSize(1, kvSize(kv))
	}
	return n
}

// innerHeaderSize is the header of an op's response inside a txn, which
// holds only the revision (appendTxn).
func innerHeaderSize(rev int64) int { return messageFieldSize(1, intFieldSize(rev)) }

func rangeResponseSize(hdr int, r *mvcc.RangeResponse) int {
	return hdr + kvsSize(r.Kvs) + boolFieldSize(r.More) + intFieldSize(r.Count)
}

func putResponseSize(hdr int, r *mvcc.PutResponse) int {
	if r.PrevKv == nil {
		return hdr
	}
	return hdr + messageFieldSize(1, kvSize(r.PrevKv))
}

func deleteRangeResponseSize(hdr int, r *mvcc.DeleteRangeResponse) int {
	return hdr + intFieldSize(r.Deleted) + kvsSize(r.PrevKvs)
}

func txnResponseSize(hdr int, r *mvcc.TxnResponse) int {
	n := hdr + boolFieldSize(r.Succeeded)
	for i := range r.Responses {
		op := &r.Responses[i]
		var inner int
		switch {
		case op.Range != nil:
			inner = rangeResponseSize(innerHeaderSize(op.Range.Header.Revision), op.Range)
		case op.Put != nil:
			inner = putResponseSize(innerHeaderSize(op.Put.Header.Revision), op.Put)
		case op.DeleteRange != nil:
			inner = deleteRangeResponseSize(innerHeaderSize(op.DeleteRange.Header.Revision), op.DeleteRange)
		case op.Txn != nil:
			inner = txnResponseSize(0, op.Txn)
		}
		n += messageFieldSize(1, messageFieldSize(1, inner))
	}
	return n
}
