package ratelimit

import (
	"strconv"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time            { return c.t }
func (c *clock) advance(d time.Duration)   { c.t = c.t.Add(d) }
func newClock() *clock                     { return &clock{time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)} }
func limiter(c *clock, o Options) *Limiter { o.Now = c.now; return New(o) }

func TestAClientMayBurstThenKeepsToItsRate(t *testing.T) {
	c := newClock()
	l := limiter(c, Options{Rate: 10, Burst: 5})
	for i := range 5 {
		if _, ok := l.Allow("ada"); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	wait, ok := l.Allow("ada")
	if ok || wait != 100*time.Millisecond {
		t.Fatalf("sixth request: ok=%v wait=%v, want refused for 100ms", ok, wait)
	}
	c.advance(100 * time.Millisecond)
	if _, ok := l.Allow("ada"); !ok {
		t.Fatal("refused after waiting as told")
	}
	if _, ok := l.Allow("ada"); ok {
		t.Fatal("a refused request must not have taken a token, nor may this one find one")
	}
}

func TestClientsHaveBucketsOfTheirOwn(t *testing.T) {
	c := newClock()
	l := limiter(c, Options{Rate: 1, Burst: 1})
	if _, ok := l.Allow("class-1/ada"); !ok {
		t.Fatal("ada refused")
	}
	if _, ok := l.Allow("class-1/ada"); ok {
		t.Fatal("ada's second request allowed")
	}
	// Grace, behind the same NAT address but with a token of her own.
	if _, ok := l.Allow("class-1/grace"); !ok {
		t.Fatal("grace shares ada's bucket")
	}
}

func TestNoRateMeansNoLimit(t *testing.T) {
	l := New(Options{})
	for range 1000 {
		if _, ok := l.Allow("x"); !ok {
			t.Fatal("refused without a rate")
		}
	}
	if l.Clients() != 0 {
		t.Fatal("buckets kept without a rate")
	}
}

func TestFullBucketsAreForgotten(t *testing.T) {
	c := newClock()
	l := limiter(c, Options{Rate: 10, Burst: 10})
	for i := range minSweep {
		l.Allow(strconv.Itoa(i))
	}
	c.advance(time.Second) // every bucket has refilled
	l.Allow("newcomer")
	if n := l.Clients(); n != 1 {
		t.Fatalf("%d buckets held after they all refilled, want 1", n)
	}
}

func TestClientsBeyondTheCapShareABucket(t *testing.T) {
	c := newClock()
	l := limiter(c, Options{Rate: 1, Burst: 1, MaxClients: 3})
	for _, k := range []string{"a", "b", "c"} {
		l.Allow(k)
	}
	if _, ok := l.Allow("d"); !ok {
		t.Fatal("the first client beyond the cap refused")
	}
	if _, ok := l.Allow("e"); ok {
		t.Fatal("a second client beyond the cap has a bucket of its own")
	}
	if n := l.Clients(); n != 4 {
		t.Fatalf("%d buckets, want 3 and the shared one", n)
	}
	c.advance(time.Second) // a, b, c and the shared bucket refill
	if _, ok := l.Allow("f"); !ok {
		t.Fatal("refused after the buckets refilled and were swept")
	}
	if n := l.Clients(); n != 1 {
		t.Fatalf("%d buckets after the sweep, want 1", n)
	}
}

// Allow runs on every request to a session.
func BenchmarkAllow(b *testing.B) {
	b.Run("one client", func(b *testing.B) {
		l := New(Options{Rate: 1e9, Burst: 1 << 30})
		for b.Loop() {
			l.Allow("class-1/ada-x3k9q")
		}
	})
	b.Run("200 clients in parallel", func(b *testing.B) {
		l := New(Options{Rate: 1e9, Burst: 1 << 30})
		keys := make([]string, 200)
		for i := range keys {
			keys[i] = "class-1/student-" + strconv.Itoa(i)
		}
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				l.Allow(keys[i%len(keys)])
				i++
			}
		})
	})
}
