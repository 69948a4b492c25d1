package etcdgrpc

import (
	"context"
	"crypto/rand"
	"strconv"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/metadata"

	"github.com/rvplay/rvplay/engine/api"
)

// DefaultTokenTTL is how long a token stays valid unused: etcd's
// --auth-token-ttl default for its simple tokens.
const DefaultTokenTTL = 300 * time.Second

// DefaultMaxTokens bounds the tokens held at once. Past it, Authenticate
// first forgets the tokens that lapsed, then the one unused longest.
const DefaultMaxTokens = 100000

// identity is who a request comes from and which session it reaches.
type identity struct {
	session   string
	principal api.Principal
	// client is whom per-client limits count the request against when it
	// is a person of a guarded session ("<session>/<id>"); empty: the
	// address the call comes from.
	client string
}

type tokenEntry struct {
	identity
	lastUsed time.Time
}

// tokens are the tokens Authenticate handed out, as etcd's simple token
// provider keeps them: random, held in memory only (a restart makes every
// client authenticate again, as etcd's restart does), and forgotten after
// ttl unused.
type tokens struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu    sync.Mutex
	m     map[string]*tokenEntry
	index uint64 // etcd's simple tokens end in ".<auth index>"
}

func newTokens(ttl time.Duration, max int, now func() time.Time) *tokens {
	return &tokens{ttl: ttl, max: max, now: now, m: map[string]*tokenEntry{}}
}

const tokenAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// issue hands out a new token for id.
func (t *tokens) issue(id identity) string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	for i := range b {
		b[i] = tokenAlphabet[int(b[i])%len(tokenAlphabet)]
	}
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.index++
	tok := string(b[:]) + "." + strconv.FormatUint(t.index, 10)
	if len(t.m) >= t.max {
		t.evictLocked(now)
	}
	t.m[tok] = &tokenEntry{identity: id, lastUsed: now}
	return tok
}

// evictLocked forgets the lapsed tokens, and if none had, the one unused
// longest (the caller holds mu).
func (t *tokens) evictLocked(now time.Time) {
	var oldest string
	var oldestAt time.Time
	for tok, e := range t.m {
		if now.Sub(e.lastUsed) >= t.ttl {
			delete(t.m, tok)
			continue
		}
		if oldest == "" || e.lastUsed.Before(oldestAt) {
			oldest, oldestAt = tok, e.lastUsed
		}
	}
	if len(t.m) >= t.max && oldest != "" {
		delete(t.m, oldest)
	}
}

// lookup returns whom tok names and renews its lease on life.
func (t *tokens) lookup(tok string) (identity, bool) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.m[tok]
	if e == nil {
		return identity{}, false
	}
	if now.Sub(e.lastUsed) >= t.ttl {
		delete(t.m, tok)
		return identity{}, false
	}
	e.lastUsed = now
	return e.identity, true
}

// forget drops every token of session name (it ended).
func (t *tokens) forget(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for tok, e := range t.m {
		if e.session == name {
			delete(t.m, tok)
		}
	}
}

// identify finds who sends the request of ctx: the holder of the token
// in its metadata, or, without one, the teacher of the default session.
func (s *Server) identify(ctx context.Context) (identity, error) {
	// The token alone: FromIncomingContext would copy every header of
	// every request (8% of the server's CPU on single-key ranges).
	if ts := metadata.ValueFromIncomingContext(ctx, rpctypes.TokenFieldNameGRPC); len(ts) > 0 {
		id, ok := s.tokens.lookup(ts[0])
		if !ok {
			return identity{}, errInvalidAuthToken
		}
		return id, nil
	}
	if s.opts.DefaultSession == "" {
		return identity{}, errUserEmpty
	}
	return identity{session: s.opts.DefaultSession, principal: teacher}, nil
}

// teacher is who a client without credentials is in the default session,
// an open one: everyone there may do everything.
var teacher = api.Principal{ID: "teacher", Name: "teacher", Role: api.RoleTeacher}

// authServer is etcd's Auth service as far as choosing a session needs:
// Authenticate and AuthStatus. Managing users and roles is the
// classroom's (joining a session makes a student); those calls are
// refused.
type authServer struct {
	pb.UnimplementedAuthServer
	s *Server
}

// Authenticate takes the user name as a session's name and the password
// as one of its tokens.
func (a *authServer) Authenticate(ctx context.Context, r *pb.AuthenticateRequest) (*pb.AuthenticateResponse, error) {
	s := a.s
	if r.Name == "" {
		return nil, toStatus(errUserEmpty)
	}
	guarded, ok := s.opts.Sessions.Lookup(r.Name)
	if !ok {
		return nil, toStatus(errAuthFailed)
	}
	p, ok := s.opts.Sessions.Authenticate(r.Name, r.Password)
	if !ok {
		return nil, toStatus(errAuthFailed)
	}
	id := identity{session: r.Name, principal: p}
	if guarded {
		id.client = r.Name + "/" + p.ID
	}
	tok := s.tokens.issue(id)
	c, err := s.enterAs(ctx, id)
	if err != nil {
		return nil, toStatus(err)
	}
	defer c.release()
	return &pb.AuthenticateResponse{Header: header(c.gw.Header(c.gw.Store().Rev())), Token: tok}, nil
}

// AuthStatus says that authentication is on: a guarded session needs it.
func (a *authServer) AuthStatus(ctx context.Context, r *pb.AuthStatusRequest) (*pb.AuthStatusResponse, error) {
	c, err := a.s.enter(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	defer c.release()
	return &pb.AuthStatusResponse{Header: header(c.gw.Header(c.gw.Store().Rev())), Enabled: true}, nil
}
