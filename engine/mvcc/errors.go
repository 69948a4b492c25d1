package mvcc

// Code is a gRPC status code. The store speaks in etcd's gRPC errors because
// every client-visible error of etcd is one, and the gateway derives its HTTP
// status and JSON body from the code. The numbers are grpc/codes' values;
// this package does not import grpc.
type Code int32

const (
	CodeOK                 Code = 0
	CodeCanceled           Code = 1
	CodeUnknown            Code = 2
	CodeInvalidArgument    Code = 3
	CodeDeadlineExceeded   Code = 4
	CodeNotFound           Code = 5
	CodeAlreadyExists      Code = 6
	CodePermissionDenied   Code = 7
	CodeResourceExhausted  Code = 8
	CodeFailedPrecondition Code = 9
	CodeAborted            Code = 10
	CodeOutOfRange         Code = 11
	CodeUnimplemented      Code = 12
	CodeInternal           Code = 13
	CodeUnavailable        Code = 14
	CodeDataLoss           Code = 15
	CodeUnauthenticated    Code = 16
)

// Error is an etcd server error: a gRPC code and etcd's exact message.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return e.Message }

// The errors etcd's v3 API returns, with etcd's texts (rpctypes).
var (
	ErrCompacted       = &Error{CodeOutOfRange, "etcdserver: mvcc: required revision has been compacted"}
	ErrFutureRev       = &Error{CodeOutOfRange, "etcdserver: mvcc: required revision is a future revision"}
	ErrEmptyKey        = &Error{CodeInvalidArgument, "etcdserver: key is not provided"}
	ErrTooManyOps      = &Error{CodeInvalidArgument, "etcdserver: too many operations in txn request"}
	ErrDuplicateKey    = &Error{CodeInvalidArgument, "etcdserver: duplicate key given in txn request"}
	ErrKeyNotFound     = &Error{CodeInvalidArgument, "etcdserver: key not found"}
	ErrValueProvided   = &Error{CodeInvalidArgument, "etcdserver: value is provided"}
	ErrLeaseProvided   = &Error{CodeInvalidArgument, "etcdserver: lease is provided"}
	ErrLeaseNotFound   = &Error{CodeNotFound, "etcdserver: requested lease not found"}
	ErrRequestTooLarge = &Error{CodeInvalidArgument, "etcdserver: request is too large"}
	ErrInvalidSortOpt  = &Error{CodeInvalidArgument, "etcdserver: invalid sort option"}
	ErrStopped         = &Error{CodeUnavailable, "etcdserver: server stopped"}
	// ErrNoSpace is etcd's answer to a write beyond its storage quota, or
	// to any write while the NOSPACE alarm is raised.
	ErrNoSpace = &Error{CodeResourceExhausted, "etcdserver: mvcc: database space exceeded"}
	// ErrCorrupt is etcd's answer to a write while the CORRUPT alarm is
	// raised.
	ErrCorrupt = &Error{CodeDataLoss, "etcdserver: corrupt cluster"}
	// ErrTooManyRequests is etcd's answer when it sheds load; rvplay gives
	// it to a watcher beyond a session's, a stream's or a client's cap.
	ErrTooManyRequests = &Error{CodeResourceExhausted, "etcdserver: too many requests"}
	// ErrInvalidAuthToken is etcd's answer to a request whose token it does
	// not know; rvplay gives it to a request on a guarded session without
	// a valid token.
	ErrInvalidAuthToken = &Error{CodeUnauthenticated, "etcdserver: invalid auth token"}
	// ErrPermissionDenied is etcd's answer to a request its user's roles do
	// not permit: in a guarded session, a student's write under /registry/
	// or compaction.
	ErrPermissionDenied = &Error{CodePermissionDenied, "etcdserver: permission denied"}
)

// Reasons a watch is refused at creation (etcd sends them as cancel_reason).
const (
	ReasonEmptyWatchRange = "mvcc: watcher range is empty"
)

// DefaultMaxTxnOps is etcd's --max-txn-ops default: the most ops a list of
// a txn may hold (Options.MaxTxnOps).
const DefaultMaxTxnOps = 128
