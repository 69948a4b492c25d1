package stress

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// full is the scale (RVPLAY_STRESS=full, `task bench`); otherwise
// every attack runs small enough for `task test`.
var full = os.Getenv("RVPLAY_STRESS") == "full"

// scaled is small in `task test` and big at the scale.
func scaled[T any](small, big T) T {
	if full {
		return big
	}
	return small
}

func TestMain(m *testing.M) {
	code := rvplaytest.RunTests(m)
	printReport()
	os.Exit(code)
}

// Bounds are what an attack may make the server hold beyond what it held
// when the attack began.
type Bounds struct {
	// RssAnon bounds the peak of the process's anonymous resident memory
	// (what it allocated; VmRSS also counts the SQLite file its
	// connections map). startAttack adds Live's share to it.
	RssAnon int64
	// Live is what the attack may make the server hold live at its peak.
	// Go's collector lets the heap grow to (1 + GOGC/100) times what is
	// live before it collects, so the bound on RssAnon grants Live that
	// many times, with GOGC read from the server under attack
	// (go_gc_gogc_percent on its /metrics): the server's own setting,
	// whatever its default (server/memlimit.go) or the environment make it.
	Live int64
	// Goroutines bounds the peak number of goroutines.
	Goroutines int
}

// attack is one attack's run: a fresh server with the open sessions "calm"
// (the well-behaved client's) and "attack", sampled from the moment the
// attack begins to its end.
type attack struct {
	t      *testing.T
	name   string
	bounds Bounds
	srv    *rvplaytest.Server
	// Attack is the attacked session's base URL, Calm the well-behaved
	// client's.
	Attack, Calm string

	mon   *monitor
	calm  *calmClient
	base  sample
	began time.Time
	notes []string
}

// startAttack starts a server for one attack, with flags added to its
// command line; the attack prepares what it needs, then calls begin.
func startAttack(t *testing.T, name string, b Bounds, flags ...string) *attack {
	t.Helper()
	args := append([]string{"--session", "attack", "--debug-addr", "127.0.0.1:0"}, flags...)
	srv := rvplaytest.Start(t, "calm", args...)
	if srv.DebugURL == "" {
		t.Fatalf("the server printed no profiler address:\n%s", srv.Log())
	}
	b.RssAnon += int64(float64(b.Live) * heapGrowth(t, srv.URL))
	return &attack{t: t, name: name, bounds: b, srv: srv, Attack: srv.URL + "/s/attack", Calm: srv.SessionURL}
}

// heapGrowth is how many times what is live the server's collector lets
// its heap reach: 1 + GOGC/100, from the gauge the Prometheus client
// exports from runtime/metrics' /gc/gogc:percent.
func heapGrowth(t *testing.T, server string) float64 {
	t.Helper()
	resp, err := http.Get(server + "/metrics")
	if err != nil {
		t.Fatalf("the server's metrics: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("the server's metrics: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go_gc_gogc_percent "); ok {
			gogc, err := strconv.ParseFloat(v, 64)
			if err != nil || gogc <= 0 {
				t.Fatalf("go_gc_gogc_percent %q: want a positive percentage (the attacks bound a collected heap)", v)
			}
			return 1 + gogc/100
		}
	}
	t.Fatalf("the server's /metrics has no go_gc_gogc_percent")
	return 0
}

// begin starts the well-behaved client and, once it has been answered
// (its session is loaded, its connection open), takes the baseline and
// starts sampling the server.
func (a *attack) begin() {
	a.t.Helper()
	a.startControllers(calmTimeout)
	a.calm = startCalm(a.Calm)
	select {
	case <-a.calm.answered:
	case <-time.After(calmTimeout):
		a.t.Fatalf("the well-behaved client got no answer in %v", calmTimeout)
	}
	a.base = a.probe(true)
	a.mon = startMonitor(a.srv, a.base, a.killAt())
	a.began = time.Now()
}

// startControllers makes the first Kubernetes request of the attack's and
// the well-behaved client's sessions, which starts their controllers and
// kubelets (kube-controller-manager's informers and workers: a fixed cost
// of a session in use, not of the attack), and waits until the server's
// goroutine profile shows both sessions' controller managers past their
// informers' sync and every reflector watching, so that the baseline
// counts them.
func (a *attack) startControllers(d time.Duration) {
	a.t.Helper()
	sessions := []string{a.Attack, a.Calm}
	for _, s := range sessions {
		resp, err := http.Get(s + "/api/v1/namespaces/default")
		if err != nil {
			a.t.Fatalf("a session's first Kubernetes request: %v", err)
		}
		resp.Body.Close()
	}
	deadline := time.Now().Add(d)
	for {
		var managers, syncing, reflectors, watching int
		for _, g := range strings.Split(a.goroutines(2), "\n\n") {
			switch {
			case strings.Contains(g, "WaitForCacheSync("):
				syncing++
			case strings.Contains(g, "controllers.(*ControllerManager).Run("):
				managers++
			}
			if strings.Contains(g, "engine/client.(*Reflector).Run(") {
				reflectors++
				if strings.Contains(g, "engine/client.(*Reflector).handleWatch(") {
					watching++
				}
			}
		}
		if managers == len(sessions) && syncing == 0 && watching == reflectors {
			return
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("the sessions' controllers are not all watching after %v: %d managers past their sync, %d syncing, %d of %d reflectors watching", d, managers, syncing, watching, reflectors)
		}
		time.Sleep(50 * time.Millisecond) // polling the profile, as settle does
	}
}

// goroutines is the server's goroutine profile, at pprof's debug level.
func (a *attack) goroutines(debug int) string {
	a.t.Helper()
	resp, err := http.Get(fmt.Sprintf("%s/debug/pprof/goroutine?debug=%d", a.srv.DebugURL, debug))
	if err != nil {
		a.t.Fatalf("the server's goroutine profile: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatalf("the server's goroutine profile: %v", err)
	}
	return string(b)
}

// killAt is the resident memory at which the monitor ends the server
// rather than let a broken bound take the machine with it.
func (a *attack) killAt() int64 {
	return max(a.base.RssAnon+4*a.bounds.RssAnon, 2<<30)
}

// probe samples the server now; with gc, also its live heap after a
// collection.
func (a *attack) probe(gc bool) sample {
	a.t.Helper()
	s, err := readSample(a.srv, gc)
	if err != nil {
		a.t.Fatalf("sampling the server: %v", err)
	}
	return s
}

// cpu is the server's CPU time since the attack began.
func (a *attack) cpu() time.Duration {
	a.t.Helper()
	cpu, err := a.srv.CPU()
	if err != nil {
		a.t.Fatal(err)
	}
	return cpu - a.base.CPU
}

// note adds a figure to the attack's line in the report.
func (a *attack) note(format string, args ...any) {
	a.notes = append(a.notes, fmt.Sprintf(format, args...))
	a.t.Logf(format, args...)
}

// end stops the well-behaved client and the sampling, and checks the
// bounds: the server stayed up and under them, answered the well-behaved
// client every time, and kept every write it acknowledged.
func (a *attack) end() {
	t := a.t
	t.Helper()
	took := time.Since(a.began)
	calm := a.calm.stop()
	peak := a.mon.stop()
	select {
	case <-a.srv.Exited():
		t.Fatalf("the server died during the attack: %v (peak RssAnon %s)", a.srv.ExitErr(), mib(peak.RssAnon))
	default:
	}
	r := row{
		Attack: a.name, Took: took, Base: a.base, Peak: peak, Bounds: a.bounds,
		CPU: peak.CPU - a.base.CPU, Calm: calm, Notes: strings.Join(a.notes, "; "),
	}
	t.Logf("%s", r.line())
	if d := peak.RssAnon - a.base.RssAnon; d > a.bounds.RssAnon {
		t.Errorf("RssAnon grew by %s (%s -> %s), bound %s", mib(d), mib(a.base.RssAnon), mib(peak.RssAnon), mib(a.bounds.RssAnon))
	}
	if d := peak.Goroutines - a.base.Goroutines; d > a.bounds.Goroutines {
		t.Errorf("goroutines grew by %d (%d -> %d), bound %d", d, a.base.Goroutines, peak.Goroutines, a.bounds.Goroutines)
	}
	if len(calm.failures) > 0 {
		t.Errorf("the well-behaved client was not answered %d times of %d, first: %s", len(calm.failures), calm.requests, calm.failures[0])
	}
	if calm.requests == 0 {
		t.Errorf("the well-behaved client sent no request")
	}
	if lost := a.calm.lost(); len(lost) > 0 {
		t.Errorf("%d acknowledged writes of the well-behaved client are not readable, first: %s", len(lost), lost[0])
	}
	r.Failed = t.Failed()
	report.add(r)
}

// settle waits (polling, up to d) until the server's goroutines are back
// within slack of the baseline: what an attack opened was released.
func (a *attack) settle(d time.Duration, slack int) {
	a.t.Helper()
	// Connections kept alive for the next request hold a goroutine each
	// in the server until its idle timeout.
	attacker.CloseIdleConnections()
	deadline := time.Now().Add(d)
	for {
		s := a.probe(false)
		if s.Goroutines <= a.base.Goroutines+slack {
			return
		}
		if time.Now().After(deadline) {
			a.t.Errorf("goroutines still %d, %v after the attack (baseline %d)", s.Goroutines, d, a.base.Goroutines)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// row is one attack's line in the report.
type row struct {
	Attack     string
	Took       time.Duration
	Base, Peak sample
	Bounds     Bounds
	CPU        time.Duration
	Calm       calmFigures
	Notes      string
	Failed     bool
}

func (r row) line() string {
	return fmt.Sprintf("%s: RssAnon %s -> %s (bound +%s), VmRSS peak %s, goroutines %d -> %d (bound +%d), server CPU %v in %v; well-behaved client: %s",
		r.Attack, mib(r.Base.RssAnon), mib(r.Peak.RssAnon), mib(r.Bounds.RssAnon), mib(r.Peak.VmRSS),
		r.Base.Goroutines, r.Peak.Goroutines, r.Bounds.Goroutines, r.CPU.Round(10*time.Millisecond), r.Took.Round(100*time.Millisecond), r.Calm)
}

// report collects the attacks' rows for the table TestMain prints.
var report reportRows

type reportRows struct {
	mu   sync.Mutex
	rows []row
}

func (rp *reportRows) add(r row) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	rp.rows = append(rp.rows, r)
}

func printReport() {
	report.mu.Lock()
	defer report.mu.Unlock()
	if len(report.rows) == 0 {
		return
	}
	slices.SortFunc(report.rows, func(a, b row) int { return cmp.Compare(a.Attack, b.Attack) })
	scale := "small (go test)"
	if full {
		scale = "full (RVPLAY_STRESS=full)"
	}
	fmt.Printf("\nissue 10 attacks, %s scale, against the server binary:\n\n", scale)
	fmt.Println("| attack | RssAnon before → peak (bound) | VmRSS peak | goroutines before → peak (bound) | server CPU | well-behaved client p50 / p99 / max (requests, refused) | figures |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, r := range report.rows {
		name := r.Attack
		if r.Failed {
			name += " **FAILED**"
		}
		fmt.Printf("| %s | %s → %s (+%s) | %s | %d → %d (+%d) | %v | %s | %s |\n", name,
			mib(r.Base.RssAnon), mib(r.Peak.RssAnon), mib(r.Bounds.RssAnon), mib(r.Peak.VmRSS),
			r.Base.Goroutines, r.Peak.Goroutines, r.Bounds.Goroutines, r.CPU.Round(10*time.Millisecond), r.Calm.table(), r.Notes)
	}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// repeatFor runs fn from workers goroutines, over and over, for d, with
// the worker's number and a number that counts the calls, and returns how
// many calls there were and the errors they returned (at most one per
// worker: a worker stops at its first).
func repeatFor(d time.Duration, workers int, fn func(worker, n int) error) (int, []error) {
	var (
		mu   sync.Mutex
		next int
		errs []error
		wg   sync.WaitGroup
	)
	deadline := time.Now().Add(d)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				mu.Lock()
				n := next
				next++
				mu.Unlock()
				if err := fn(w, n); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return next, errs
}
