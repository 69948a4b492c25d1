package api

import "context"

// Role is what a principal may do in a session. Open sessions (created with
// --session on the command line, and every offline lab) treat everyone as a
// teacher; a guarded session knows its teacher by the token its creation
// returned and its students by the tokens they got when they joined.
type Role int

const (
	// RoleAnonymous is a request without credentials: refused (401) on a
	// guarded session.
	RoleAnonymous Role = iota
	// RoleStudent may read everything and write through the Kubernetes API
	// and under etcd keys outside /registry/.
	RoleStudent
	// RoleTeacher may do everything, the session's operations included
	// (compaction, reset, settings, fault injection, ending the session).
	RoleTeacher
)

func (r Role) String() string {
	switch r {
	case RoleStudent:
		return "student"
	case RoleTeacher:
		return "teacher"
	}
	return "anonymous"
}

// Principal is who a request comes from: the transport authenticates it
// (a bearer token or a cookie on the server; the learner herself offline)
// and attaches it to the request's context, so that the session can record
// each person's exchanges and the protocols can refuse what a role may not
// do, in their own error format.
type Principal struct {
	// ID is stable for the life of the session and safe to show (never a
	// token): "teacher", or the student's id given at join.
	ID string
	// Name is the display name given at join.
	Name string
	Role Role
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal ctx carries. A context without one is
// a request from a place that needs no authentication (an open session, the
// offline lab, an in-process client): it is treated as the teacher.
func PrincipalFrom(ctx context.Context) Principal {
	switch p := ctx.Value(principalKey{}).(type) {
	case Principal:
		return p
	case *Principal: // a PrincipalContext's
		return *p
	}
	return Principal{ID: "teacher", Role: RoleTeacher}
}

// PrincipalContext is a context carrying a principal, as WithPrincipal's
// does, for a transport that makes it a field of its own per-request state
// (the classroom's, on every request): it then costs no allocation of its
// own, where WithPrincipal takes two. It answers a pointer to its
// principal, which an interface holds without boxing a copy of it; the
// principal is never changed once Set. Its zero value is not usable: Set
// it.
type PrincipalContext struct {
	context.Context
	principal Principal
}

// Set makes c the context parent with p.
func (c *PrincipalContext) Set(parent context.Context, p Principal) {
	c.Context, c.principal = parent, p
}

// Value answers the principal, and asks the parent context for any other
// key.
func (c *PrincipalContext) Value(key any) any {
	if key == (principalKey{}) {
		return &c.principal
	}
	return c.Context.Value(key)
}
