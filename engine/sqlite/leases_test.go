//go:build !js

package sqlite

import (
	"reflect"
	"testing"

	"github.com/rvplay/rvplay/engine/mvcc"
)

func leasesOf(t *testing.T, b mvcc.Backend) []mvcc.LeaseRecord {
	t.Helper()
	got, err := b.(mvcc.LeaseBackend).LoadLeases()
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A session's leases outlive the process; a reset starts without them,
// and they are never another session's.
func TestLeasesPersistPerSessionAndAResetDropsThem(t *testing.T) {
	db, path := openTemp(t)
	a, b := session(t, db, "a"), session(t, db, "b")
	la := a.(mvcc.LeaseBackend)
	for _, l := range []mvcc.LeaseRecord{{ID: 7, TTL: 60}, {ID: 3, TTL: 10}, {ID: 9, TTL: 5}} {
		if err := la.SaveLease(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := la.DeleteLease(9); err != nil {
		t.Fatal(err)
	}
	if got := leasesOf(t, b); len(got) != 0 {
		t.Fatalf("session b sees %v", got)
	}
	a.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	a = session(t, db2, "a")
	want := []mvcc.LeaseRecord{{ID: 3, TTL: 10}, {ID: 7, TTL: 60}}
	if got := leasesOf(t, a); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a restart: %v, want %v", got, want)
	}
	a.Close()
	if err := db2.ResetSession("a"); err != nil {
		t.Fatal(err)
	}
	if got := leasesOf(t, session(t, db2, "a")); len(got) != 0 {
		t.Fatalf("after a reset: %v", got)
	}
}
