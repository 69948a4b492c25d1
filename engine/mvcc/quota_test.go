package mvcc

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
)

func openMemory(t *testing.T, b Backend, opts Options) *Store {
	t.Helper()
	s, err := Open(b, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func quotaOf(err error) (Quota, bool) {
	var qe *QuotaError
	if errors.As(err, &qe) && errors.Is(err, ErrNoSpace) {
		return qe.Quota, true
	}
	return 0, false
}

// The memory budget is the server's: every store draws from it, a store
// that closes gives its share back, and a write beyond it is refused
// without touching the store.
func TestMemoryBudgetIsSharedByEveryStore(t *testing.T) {
	ctx := context.Background()
	budget := NewMemoryBudget(64 << 10)
	a := openMemory(t, NewMemoryBackend(), Options{Memory: budget})
	bBackend := NewMemoryBackend()
	b := openMemory(t, bBackend, Options{Memory: budget})
	var err error
	for i := 0; err == nil; i++ {
		_, err = a.Put(ctx, &PutRequest{Key: []byte(fmt.Sprintf("a%05d", i)), Value: make([]byte, 100)})
		if i > 10000 {
			t.Fatal("the budget never refused a put")
		}
	}
	if q, ok := quotaOf(err); !ok || q != QuotaMemory {
		t.Fatalf("a's refusal: %v", err)
	}
	if a.Alarms() != nil {
		t.Fatalf("the budget raised an alarm: %v", a.Alarms())
	}
	rev := b.Rev()
	if _, err := b.Put(ctx, &PutRequest{Key: []byte("b"), Value: make([]byte, 100)}); err == nil {
		t.Fatal("b wrote beyond the budget a filled")
	} else if q, _ := quotaOf(err); q != QuotaMemory {
		t.Fatalf("b's refusal: %v", err)
	}
	if b.Rev() != rev || b.Usage().IndexMemory != 0 {
		t.Fatalf("a refused write left rev %d (was %d), usage %+v", b.Rev(), rev, b.Usage())
	}
	// Overwriting with a smaller value, or deleting, frees room.
	if _, err := a.DeleteRange(ctx, &DeleteRangeRequest{Key: []byte("a00000")}); err != nil {
		t.Fatal(err)
	}
	if budget.Used() != a.Usage().IndexMemory {
		t.Fatalf("budget holds %d, a's index %d", budget.Used(), a.Usage().IndexMemory)
	}
	a.Close()
	if budget.Used() != 0 {
		t.Fatalf("a closed, budget still holds %d", budget.Used())
	}
	if _, err := b.Put(ctx, &PutRequest{Key: []byte("b"), Value: make([]byte, 100)}); err != nil {
		t.Fatalf("b after a closed: %v", err)
	}
	// A store whose index does not fit is not opened.
	b.Close()
	small := NewMemoryBudget(100)
	if _, err := Open(bBackend, Options{Memory: small}); err == nil {
		t.Fatal("opened a store bigger than the budget")
	} else if q, _ := quotaOf(err); q != QuotaMemory {
		t.Fatalf("open: %v", err)
	}
	if small.Used() != 0 {
		t.Fatalf("a refused open holds %d", small.Used())
	}
}

// The budget's estimate of the index memory must follow what the heap
// really grows by, or the budget bounds nothing: within a quarter either
// way, for keys and values of the sizes kube objects have, and for
// history.
func TestIndexMemoryEstimateFollowsTheHeap(t *testing.T) {
	if testing.Short() || runtime.GOOS == "js" {
		t.Skip("allocates 100 MB")
	}
	ctx := context.Background()
	heap := func() int64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	for _, c := range []struct {
		keys, value, revs int
	}{{50000, 10, 1}, {20000, 1000, 1}, {20000, 100, 8}} {
		keys := make([][]byte, c.keys)
		for i := range keys {
			keys[i] = []byte(fmt.Sprintf("/registry/configmaps/default/k%08d", i))
		}
		value := make([]byte, c.value)
		s, err := Open(discardBackend{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		before := heap()
		for r := 0; r < c.revs; r++ {
			for _, k := range keys {
				if _, err := s.Put(ctx, &PutRequest{Key: k, Value: value}); err != nil {
					t.Fatal(err)
				}
			}
		}
		grown := heap() - before
		est := s.Usage().IndexMemory
		runtime.KeepAlive(keys)
		s.Close()
		ratio := float64(est) / float64(grown)
		t.Logf("%d keys, %d-byte values, %d revisions: heap +%d, estimate %d (%.2f)", c.keys, c.value, c.revs, grown, est, ratio)
		if ratio < 0.75 || ratio > 1.33 {
			t.Errorf("%d keys, %d-byte values, %d revisions: estimate %d is %.2f of the heap's growth %d", c.keys, c.value, c.revs, est, ratio, grown)
		}
	}
}

// discardBackend keeps nothing, so that a test sees the index's memory
// alone. Only the methods a store of puts calls are there.
type discardBackend struct{ Backend }

func (discardBackend) Load(func(Record) error) (Meta, error) {
	return Meta{CompactRevision: -1, FinishedCompactRevision: -1}, nil
}
func (discardBackend) Commit([]Record) error { return nil }
func (discardBackend) Close() error          { return nil }
