package classload

import (
	"testing"
	"time"
)

// Delivery is timed from the first arrival of the write's answer or event
// at a client's socket to each watcher's: how long the load tool's own
// goroutines waited for a core to take them counts in the tool's figure
// only.
func TestDeliveryIsTimedAtTheSockets(t *testing.T) {
	at := func(ms int64) time.Time { return time.Unix(0, ms*int64(time.Millisecond)) }
	wr := write{kind: opCreate, name: "a", rv: 7, sent: at(0), answered: at(10), acked: at(500)}
	w := &writer{writes: []write{wr}}
	// The first watcher's event arrived before the answer; the second's
	// 20 ms after it; both goroutines had theirs 1 s later.
	seg := func(arrived int64) *watcher {
		return &watcher{segments: []*segment{{events: []event{{rv: 7, typ: "ADDED", name: "a", arrived: at(arrived).UnixNano(), recv: at(arrived + 1000).UnixNano()}}}}}
	}
	rep := &Report{}
	rep.measureDelivery([]*writer{w}, []*watcher{seg(5), seg(30)}, time.Time{})
	if rep.Delivery.N != 2 || rep.Delivery.P50 != 0 || rep.Delivery.Max != 25*time.Millisecond {
		t.Fatalf("delivery %v, want 0 and 25 ms from the first arrival", rep.Delivery)
	}
	if rep.EarlyDeliveries != 1 {
		t.Fatalf("%d deliveries before the answer, want 1", rep.EarlyDeliveries)
	}
	if rep.InTool.Max != 530*time.Millisecond {
		t.Fatalf("in the tool %v, want 530 ms at most (the goroutines' waits)", rep.InTool)
	}
}
