package api

import (
	"context"
	"testing"
)

type otherKey struct{}

// A principal reaches PrincipalFrom the same way whether the context was
// made by WithPrincipal or is a transport's own PrincipalContext, and the
// context's other values stay readable through it.
func TestPrincipalFromReadsEitherFormOfThePrincipalsContext(t *testing.T) {
	student := Principal{ID: "s-1", Name: "Ada", Role: RoleStudent}
	parent := context.WithValue(context.Background(), otherKey{}, "kept")
	var own PrincipalContext
	own.Set(parent, student)
	for name, ctx := range map[string]context.Context{
		"WithPrincipal":    WithPrincipal(parent, student),
		"PrincipalContext": &own,
	} {
		if got := PrincipalFrom(ctx); got != student {
			t.Errorf("%s: PrincipalFrom = %+v, want %+v", name, got, student)
		}
		if got := ctx.Value(otherKey{}); got != "kept" {
			t.Errorf("%s: the parent's value = %v, want kept", name, got)
		}
	}
	if got := PrincipalFrom(parent); got.Role != RoleTeacher || got.ID != "teacher" {
		t.Errorf("without a principal: %+v, want the teacher", got)
	}
	// The classroom sets one on every request: neither setting nor
	// reading it allocates.
	if n := testing.AllocsPerRun(100, func() {
		own.Set(parent, student)
		PrincipalFrom(&own)
	}); n != 0 {
		t.Errorf("a PrincipalContext: %v allocations, want none", n)
	}
}
