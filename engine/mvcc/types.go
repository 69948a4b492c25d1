package mvcc

// The request and response types mirror etcd's etcdserverpb / mvccpb messages
// field for field, so that the JSON gateway is a mechanical translation and a
// reader who knows etcd's API recognises every name. Only the header fields
// that have meaning in a single-member store are carried; the gateway fills
// cluster_id, member_id and raft_term.

// KeyValue is mvccpb.KeyValue: one version of one key.
type KeyValue struct {
	Key []byte
	// CreateRevision is the revision of the put that began the key's current
	// generation (the first put after the key did not exist).
	CreateRevision int64
	// ModRevision is the revision of the last write to the key. Kubernetes
	// calls it resourceVersion.
	ModRevision int64
	// Version counts the puts in the current generation: 1 on creation.
	Version int64
	Value   []byte
	Lease   int64
}

// Clone returns a deep copy, so that callers may keep or change it without
// touching the store's own copy.
func (kv *KeyValue) Clone() *KeyValue {
	if kv == nil {
		return nil
	}
	c := *kv
	c.Key = append([]byte(nil), kv.Key...)
	if kv.Value != nil {
		c.Value = append([]byte(nil), kv.Value...)
	}
	return &c
}

// ResponseHeader carries the store revision at the time the response was
// made, which for reads is the current revision even when an older revision
// was read (etcd's rule).
type ResponseHeader struct {
	Revision int64
}

// SortOrder is RangeRequest.SortOrder.
type SortOrder int32

const (
	SortNone SortOrder = iota
	SortAscend
	SortDescend
)

// SortTarget is RangeRequest.SortTarget.
type SortTarget int32

const (
	SortByKey SortTarget = iota
	SortByVersion
	SortByCreate
	SortByMod
	SortByValue
)

// RangeRequest is etcdserverpb.RangeRequest.
type RangeRequest struct {
	Key []byte
	// RangeEnd: empty means the single key Key; "\x00" means every key >= Key;
	// otherwise the half-open interval [Key, RangeEnd).
	RangeEnd          []byte
	Limit             int64
	Revision          int64
	SortOrder         SortOrder
	SortTarget        SortTarget
	Serializable      bool
	KeysOnly          bool
	CountOnly         bool
	MinModRevision    int64
	MaxModRevision    int64
	MinCreateRevision int64
	MaxCreateRevision int64
}

// RangeResponse is etcdserverpb.RangeResponse.
type RangeResponse struct {
	Header ResponseHeader
	// Kvs and the KeyValues in it may be shared with the store and with
	// other responses: read them, never modify them.
	Kvs []*KeyValue
	// More is true when Limit cut the result short.
	More bool
	// Count is the number of keys in the range at the read revision, before
	// Limit and the min/max filters.
	Count int64
}

// PutRequest is etcdserverpb.PutRequest.
type PutRequest struct {
	Key         []byte
	Value       []byte
	Lease       int64
	PrevKv      bool
	IgnoreValue bool
	IgnoreLease bool
}

// PutResponse is etcdserverpb.PutResponse.
type PutResponse struct {
	Header ResponseHeader
	PrevKv *KeyValue
}

// DeleteRangeRequest is etcdserverpb.DeleteRangeRequest.
type DeleteRangeRequest struct {
	Key      []byte
	RangeEnd []byte
	PrevKv   bool
}

// DeleteRangeResponse is etcdserverpb.DeleteRangeResponse.
type DeleteRangeResponse struct {
	Header  ResponseHeader
	Deleted int64
	PrevKvs []*KeyValue
}

// CompareResult is Compare.Result.
type CompareResult int32

const (
	CompareEqual CompareResult = iota
	CompareGreater
	CompareLess
	CompareNotEqual
)

// CompareTarget is Compare.Target.
type CompareTarget int32

const (
	CompareVersion CompareTarget = iota
	CompareCreate
	CompareMod
	CompareValue
	CompareLease
)

// Compare is etcdserverpb.Compare. Exactly one of the target fields is
// meaningful, chosen by Target.
type Compare struct {
	Result CompareResult
	Target CompareTarget
	Key    []byte
	// RangeEnd makes the compare apply to every key in [Key, RangeEnd).
	RangeEnd       []byte
	Version        int64
	CreateRevision int64
	ModRevision    int64
	Value          []byte
	Lease          int64
}

// RequestOp is etcdserverpb.RequestOp: exactly one field is set.
type RequestOp struct {
	Range       *RangeRequest
	Put         *PutRequest
	DeleteRange *DeleteRangeRequest
	Txn         *TxnRequest
}

// ResponseOp is etcdserverpb.ResponseOp: exactly one field is set.
type ResponseOp struct {
	Range       *RangeResponse
	Put         *PutResponse
	DeleteRange *DeleteRangeResponse
	Txn         *TxnResponse
}

// TxnRequest is etcdserverpb.TxnRequest.
type TxnRequest struct {
	Compare []Compare
	Success []RequestOp
	Failure []RequestOp
}

// TxnResponse is etcdserverpb.TxnResponse.
type TxnResponse struct {
	Header    ResponseHeader
	Succeeded bool
	Responses []ResponseOp
}

// CompactionRequest is etcdserverpb.CompactionRequest.
type CompactionRequest struct {
	Revision int64
	// Physical makes Compact return only after the superseded revisions
	// have been removed from the backend.
	Physical bool
}

// CompactionResponse is etcdserverpb.CompactionResponse.
type CompactionResponse struct {
	Header ResponseHeader
}

// EventType is mvccpb.Event_EventType.
type EventType int32

const (
	EventPut EventType = iota
	EventDelete
)

func (t EventType) String() string {
	if t == EventDelete {
		return "DELETE"
	}
	return "PUT"
}

// Event is mvccpb.Event. A DELETE carries a KeyValue with only Key and
// ModRevision (the revision of the delete) set.
type Event struct {
	Type   EventType
	Kv     *KeyValue
	PrevKv *KeyValue
}

// IsCreate reports whether the event is the put that began a generation.
func (e *Event) IsCreate() bool {
	return e.Type == EventPut && e.Kv.CreateRevision == e.Kv.ModRevision
}

// WatchFilter is WatchCreateRequest.FilterType.
type WatchFilter int32

const (
	FilterNoPut WatchFilter = iota
	FilterNoDelete
)

// WatchRequest is etcdserverpb.WatchCreateRequest without the stream-level
// fields (watch_id, fragment), which belong to the gateway's watch stream.
type WatchRequest struct {
	Key      []byte
	RangeEnd []byte
	// StartRevision is inclusive; 0 means "after the current revision".
	StartRevision int64
	Filters       []WatchFilter
	PrevKv        bool
}

// WatchResponse is one delivery to a watcher: either the events of one or
// more whole revisions, a progress notification (no events), or the final
// message of a watcher whose start revision was compacted away.
type WatchResponse struct {
	Header ResponseHeader
	Events []*Event
	// CompactRevision is set (and the watcher is finished) when the events
	// the watcher needs were compacted.
	CompactRevision int64
	// ProgressNotify marks a response that carries no events and only tells
	// the watcher that every event up to Header.Revision was delivered.
	ProgressNotify bool
}
