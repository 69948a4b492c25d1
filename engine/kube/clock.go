package kube

import (
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// The registry keeps time by the store's clock (mvcc.Clock): one clock per
// session, so a fake one moves leases, timestamps, bookmarks and timeouts
// together.
type (
	Clock     = mvcc.Clock
	Timer     = mvcc.Timer
	RealClock = mvcc.RealClock
	FakeClock = mvcc.FakeClock
)

// NewFakeClock returns a FakeClock reading t.
func NewFakeClock(t time.Time) *FakeClock { return mvcc.NewFakeClock(t) }
