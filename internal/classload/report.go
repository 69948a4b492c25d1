package classload

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// Report is what one run measured and found.
type Report struct {
	Config Config

	// Writes sent, acknowledged, without an answer (the crash), not sent
	// for want of a server to connect to (the crash), and the 429s
	// waited out (every client's, watches included).
	Writes, Acked, Uncertain, Unreachable, RateLimited int
	// UncertainMade is how many writes without an answer the history
	// has: the server made them before it died.
	UncertainMade int
	// WriteLatency is how long an acknowledged write took.
	WriteLatency Quantiles

	// Events the watchers received, and the delivery of the acknowledged
	// creates and updates among them (measureDelivery): at the clients'
	// sockets, from the first arrival of the write's answer or event to
	// the event's arrival at each watcher (EarlyDeliveries: how many
	// arrived before the answer); as the load tool's goroutines saw it,
	// from the writer having its answer to the watcher having the event
	// (one before counts 0), the tool's waits for a core included; and
	// from the write's sending to the event's arrival. In a run with a
	// crash, the writes acknowledged before it that reached a watcher
	// only after it are left out.
	Events          int
	Delivery        Quantiles
	InTool          Quantiles
	FromSend        Quantiles
	EarlyDeliveries int
	// UnstampedReads is how many reads of the clients the kernel did not
	// stamp: their arrival is when the read returned.
	UnstampedReads int

	// How the watchers' streams ended before the end of the run: closed
	// by the server (a slow watcher's, or a timeout's), broken (the
	// crash), expired (a 410, then a list); and the server's own count
	// of watchers it closed for being slow (rvplay_watchers_closed_slow_total,
	// of the process that ran last).
	ClosedByServer, Broken, Expired int
	SlowClosedMetric                int

	// The server's resident memory and goroutines before the watchers
	// connected, at their peak during the load, and after every client
	// left (for goroutines, once back at Before or after a wait of 30 s).
	RSSBefore, RSSPeak, RSSAfter                      int64
	GoroutinesBefore, GoroutinesPeak, GoroutinesAfter int

	// Elapsed is how long the writers wrote; ServerCPU and ToolCPU how
	// much processor time the server and the load itself took meanwhile
	// (on a machine shared with others, what the server got decides its
	// latencies).
	Elapsed, ServerCPU, ToolCPU time.Duration

	// The crash, if the run had one.
	Crash *CrashReport

	// Problems is every broken promise the checks found: lost, repeated
	// or reordered events, a list other than the state at its
	// resourceVersion, an acknowledged write missing from the history, a
	// watcher that never caught up, goroutines left behind.
	Problems []string
}

// CrashReport is what a SIGKILL under load did.
type CrashReport struct {
	// Revision is the session's revision once the server was back (every
	// write made before the crash is at or before it).
	Revision int64
	// Restart is how long the server took from SIGKILL to listening again
	// (its start reads the database back); Recovery is how long from
	// SIGKILL until every watcher had resumed (or listed again) and
	// caught up with Revision, the sleepers' wait included.
	Restart, Recovery time.Duration
	// Resumed watchers watched on from their last resourceVersion;
	// Relisted ones got a 410 (the teacher compacted at CompactedAt) and
	// listed again.
	Resumed, Relisted int
	CompactedAt       int64
	// Lost is how many acknowledged writes the history lacked.
	Lost int

	cpuAtKill time.Duration
}

// Quantiles are a distribution's figures.
type Quantiles struct {
	N             int
	P50, P99, Max time.Duration
}

func quantiles(d []time.Duration) Quantiles {
	if len(d) == 0 {
		return Quantiles{}
	}
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[int(q*float64(len(d)-1))] }
	return Quantiles{N: len(d), P50: at(.5), P99: at(.99), Max: d[len(d)-1]}
}

func (q Quantiles) String() string {
	return fmt.Sprintf("p50 %s, p99 %s, max %s (n=%d)", ms(q.P50), ms(q.P99), ms(q.Max), q.N)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// Print writes the report for a person.
func (r *Report) Print(out io.Writer) {
	c := r.Config
	fmt.Fprintf(out, "class of %d watchers, %d of them writing %.0f/s each for %s\n", c.Students, c.Writers, c.WriteRate, c.Duration)
	fmt.Fprintf(out, "  writes: %d sent (%.0f/s), %d acknowledged, %d without an answer (%d of them made), %d found no server; %d 429s waited out; write latency %s\n",
		r.Writes, float64(r.Writes)/r.Elapsed.Seconds(), r.Acked, r.Uncertain, r.UncertainMade, r.Unreachable, r.RateLimited, r.WriteLatency)
	fmt.Fprintf(out, "  events received: %d; delivery at the sockets, from the write's first answer or event %s (%d before its answer); in the load tool, from the acknowledgement %s; from the sending %s\n",
		r.Events, r.Delivery, r.EarlyDeliveries, r.InTool, r.FromSend)
	if r.UnstampedReads > 0 {
		fmt.Fprintf(out, "  %d reads without the kernel's stamp, timed when they returned\n", r.UnstampedReads)
	}
	fmt.Fprintf(out, "  streams ended by the server: %d closed (%d for being slow by its metric), %d broken, %d expired\n",
		r.ClosedByServer, r.SlowClosedMetric, r.Broken, r.Expired)
	fmt.Fprintf(out, "  CPU over the %s of writes: server %.1f s (%.0f%% of a core, %.1f µs per event received), the load itself %.1f s\n",
		r.Elapsed.Round(time.Millisecond), r.ServerCPU.Seconds(), 100*r.ServerCPU.Seconds()/r.Elapsed.Seconds(),
		float64(r.ServerCPU.Microseconds())/float64(max(1, r.Events)), r.ToolCPU.Seconds())
	fmt.Fprintf(out, "  server RSS: %s before, %s peak, %s after; goroutines: %d before, %d peak, %d after\n",
		mib(r.RSSBefore), mib(r.RSSPeak), mib(r.RSSAfter), r.GoroutinesBefore, r.GoroutinesPeak, r.GoroutinesAfter)
	if cr := r.Crash; cr != nil {
		fmt.Fprintf(out, "  crash: back at revision %d; listening again %s after SIGKILL, every watcher back and caught up %s after it; %d resumed, %d listed again after a 410 (compacted at %d); %d acknowledged writes lost\n",
			cr.Revision, ms(cr.Restart), ms(cr.Recovery), cr.Resumed, cr.Relisted, cr.CompactedAt, cr.Lost)
	}
	if len(r.Problems) == 0 {
		fmt.Fprintln(out, "  no problem found")
		return
	}
	fmt.Fprintf(out, "  %d problems:\n", len(r.Problems))
	for i, p := range r.Problems {
		if i == 20 {
			fmt.Fprintf(out, "    … and %d more\n", len(r.Problems)-i)
			break
		}
		fmt.Fprintf(out, "    %s\n", p)
	}
}
