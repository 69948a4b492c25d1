package etcdgrpc

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/peer"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/etcdgw"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
)

// EmulatedVersion is the etcd version this server reports in its Status:
// its watch and lease behaviour is etcd 3.6's, and kube-apiserver reads the
// version to decide which features (watch progress requests among them)
// it may use.
const EmulatedVersion = "3.6.16"

// Sessions is what the server needs of the server's sessions (package
// classroom's registry).
type Sessions interface {
	// Lookup says whether session name exists and whether it is guarded.
	Lookup(name string) (guarded, ok bool)
	// Authenticate returns who holds password in session name: on an
	// open session everyone is its teacher.
	Authenticate(name, password string) (api.Principal, bool)
	// Acquire returns session name loaded, and a release to call when the
	// call (or stream) using it ends. Its errors are the store's errors
	// (*mvcc.Error) or ErrSessionGone.
	Acquire(ctx context.Context, name string) (*session.Session, func(), error)
}

// ErrSessionGone is what Sessions.Acquire returns for a session that no
// longer exists (a guarded session its teacher ended): its tokens are
// forgotten, and the client is told its token is invalid.
var ErrSessionGone = fmt.Errorf("etcdgrpc: the session no longer exists")

// Options configure a Server.
type Options struct {
	Sessions Sessions
	// DefaultSession is the open session a client without credentials
	// reaches; empty: such a client gets etcd's "user name is empty".
	DefaultSession string
	// ClientURL is the URL clients reach this server at, which MemberList
	// reports as the one member's client URL.
	ClientURL string
	// TokenTTL is how long an authentication token lasts unused (zero:
	// DefaultTokenTTL); MaxTokens how many are held (zero:
	// DefaultMaxTokens).
	TokenTTL  time.Duration
	MaxTokens int
	// WatchLimiter gives the limiter of a client's watchers, shared with
	// the HTTP transport (a client: a person of a guarded session, else an
	// address). Nil: no per-client cap.
	WatchLimiter func(client string) api.Limiter
	// Admit, if set, is the per-client rate limit: it says whether client
	// may make a call now. A refused call gets etcd's "too many requests".
	// anonymousLoopback tells a call from this machine without a token.
	Admit func(client string, anonymousLoopback bool) bool
	// MaxResponseBytes caps an answer (the gateway's send limit, which the
	// server's gRPC send limit repeats). Zero: etcd's, 2 GiB.
	MaxResponseBytes int
	// Now is the time source of tokens and of lease expiry reports. Nil:
	// time.Now.
	Now func() time.Time
	// Logger takes failed calls. Nil: slog.Default().
	Logger *slog.Logger
}

// Server serves etcd's v3 gRPC API over the sessions.
type Server struct {
	opts   Options
	tokens *tokens
	grpc   *grpc.Server
}

// etcd's gRPC server limits: max-request-bytes (1.5 MiB) plus 512 KiB of
// gRPC overhead for what it receives; what it sends, its answer cap.
const (
	maxRequestBytes = 1536 * 1024
	maxRecvMsgSize  = maxRequestBytes + 512*1024
	etcdMaxSend     = 1<<31 - 1
)

// New returns a Server; grpcOpts are added to the gRPC server's own (its
// transport credentials, for one).
func New(opts Options, grpcOpts ...grpc.ServerOption) *Server {
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = DefaultTokenTTL
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = DefaultMaxTokens
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = etcdMaxSend
	}
	s := &Server{opts: opts, tokens: newTokens(opts.TokenTTL, opts.MaxTokens, opts.Now)}
	gopts := append([]grpc.ServerOption{
		grpc.ForceServerCodec(codec{}),
		grpc.MaxRecvMsgSize(maxRecvMsgSize),
		grpc.MaxSendMsgSize(opts.MaxResponseBytes),
		grpc.ChainUnaryInterceptor(s.unaryInterceptor),
		grpc.ChainStreamInterceptor(s.streamInterceptor),
	}, grpcOpts...)
	s.grpc = grpc.NewServer(gopts...)
	pb.RegisterKVServer(s.grpc, kvServer{s})
	pb.RegisterWatchServer(s.grpc, watchServer{s})
	pb.RegisterLeaseServer(s.grpc, leaseServer{s})
	pb.RegisterMaintenanceServer(s.grpc, &maintenanceServer{s: s})
	pb.RegisterClusterServer(s.grpc, &clusterServer{s: s})
	pb.RegisterAuthServer(s.grpc, &authServer{s: s})
	return s
}

// Serve serves calls arriving on ln until Stop.
func (s *Server) Serve(ln net.Listener) error { return s.grpc.Serve(ln) }

// Stop closes the listeners and every call and stream at once: a client
// sees etcd's member going away.
func (s *Server) Stop() { s.grpc.Stop() }

// GracefulStop stops taking calls and waits for those in flight; streams
// (watches) must be ended by the sessions closing.
func (s *Server) GracefulStop() { s.grpc.GracefulStop() }

// call is a session entered for one call or stream.
type call struct {
	ctx     context.Context // carries the principal
	id      identity
	sess    *session.Session
	gw      *etcdgw.Gateway
	release func()
}

// enter resolves who makes the call of ctx and acquires their session.
func (s *Server) enter(ctx context.Context) (*call, error) {
	id, err := s.identify(ctx)
	if err != nil {
		return nil, err
	}
	return s.enterAs(ctx, id)
}

func (s *Server) enterAs(ctx context.Context, id identity) (*call, error) {
	sess, release, err := s.opts.Sessions.Acquire(ctx, id.session)
	if err != nil {
		if err == ErrSessionGone {
			s.tokens.forget(id.session)
			return nil, errInvalidAuthToken
		}
		return nil, err
	}
	return &call{ctx: api.WithPrincipal(ctx, id.principal), id: id, sess: sess, gw: sess.Gateway, release: release}, nil
}

type callKey struct{}

// entered is the session the interceptor entered for a call.
func entered(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// Calls that reach no session, or choose it themselves.
var sessionless = map[string]bool{
	"/etcdserverpb.Auth/Authenticate": true,
}

// unaryInterceptor enters the caller's session for the call, holds the
// caller to its rate, and turns a panic into etcd's answer to an internal
// error rather than a dropped connection.
func (s *Server) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error("etcd gRPC call panicked", "method", info.FullMethod, "panic", p)
			resp, err = nil, toStatus(&mvcc.Error{Code: mvcc.CodeInternal, Message: fmt.Sprint("etcdgrpc: internal error: ", p)})
		}
	}()
	if sessionless[info.FullMethod] {
		return handler(ctx, req)
	}
	c, err := s.enter(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	defer c.release()
	if err := s.admit(ctx, c.id); err != nil {
		return nil, toStatus(err)
	}
	return handler(context.WithValue(c.ctx, callKey{}, c), req)
}

// streamInterceptor enters the caller's session for the stream's life.
func (s *Server) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error("etcd gRPC stream panicked", "method", info.FullMethod, "panic", p)
			err = toStatus(&mvcc.Error{Code: mvcc.CodeInternal, Message: fmt.Sprint("etcdgrpc: internal error: ", p)})
		}
	}()
	c, err := s.enter(ss.Context())
	if err != nil {
		return toStatus(err)
	}
	defer c.release()
	if err := s.admit(ss.Context(), c.id); err != nil {
		return toStatus(err)
	}
	return handler(srv, &enteredStream{ServerStream: ss, ctx: context.WithValue(c.ctx, callKey{}, c)})
}

// enteredStream is a stream whose context carries its call.
type enteredStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (e *enteredStream) Context() context.Context { return e.ctx }

// clientOf is whom per-client limits count a call of id against.
func clientOf(ctx context.Context, id identity) string {
	if id.client != "" {
		return id.client
	}
	return peerHost(ctx)
}

func (s *Server) admit(ctx context.Context, id identity) error {
	if s.opts.Admit == nil {
		return nil
	}
	client, anonymousLoopback := id.client, false
	if client == "" {
		client = peerHost(ctx)
		ip := net.ParseIP(client)
		anonymousLoopback = ip != nil && ip.IsLoopback()
	}
	if !s.opts.Admit(client, anonymousLoopback) {
		return mvcc.ErrTooManyRequests
	}
	return nil
}

// peerHost is the address a call comes from, without the port.
func peerHost(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(p.Addr.String())
	if err != nil {
		return p.Addr.String()
	}
	return host
}

// codec encodes etcd's messages with their own generated code, as etcd's
// server does (gogo/protobuf's Marshal and Unmarshal methods), sparing the
// reflection of the generic protobuf codec.
type codec struct{}

type gogoMessage interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

func (codec) Marshal(v any) ([]byte, error) {
	m, ok := v.(gogoMessage)
	if !ok {
		return nil, fmt.Errorf("etcdgrpc: cannot encode %T", v)
	}
	return m.Marshal()
}

func (codec) Unmarshal(data []byte, v any) error {
	m, ok := v.(gogoMessage)
	if !ok {
		return fmt.Errorf("etcdgrpc: cannot decode %T", v)
	}
	return m.Unmarshal(data)
}

func (codec) Name() string { return "proto" }

var _ encoding.Codec = codec{}
