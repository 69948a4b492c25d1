package classload

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// What the server process holds, read from outside it: its resident
// memory from /proc (the server runs on this machine), its goroutines and
// counters from /metrics, its live heap from the profiler (--debug-addr).

// probeClient reads /metrics and the profiler on connections of its own,
// closed after each request, so that they count in no figure they read.
var probeClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// rss is a process's resident memory (VmRSS) in bytes.
func rss(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no VmRSS", pid)
}

// metrics reads the server's /metrics and sums each metric's series over
// their labels.
func metrics(base string) (map[string]float64, error) {
	resp, err := probeClient.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: %d", resp.StatusCode)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		name := line[:i]
		if j := strings.IndexByte(name, '{'); j >= 0 {
			name = name[:j]
		}
		out[name] += v
	}
	return out, sc.Err()
}

// goroutines is the server's go_goroutines.
func goroutines(base string) (int, error) {
	m, err := metrics(base)
	if err != nil {
		return 0, err
	}
	g, ok := m["go_goroutines"]
	if !ok {
		return 0, fmt.Errorf("/metrics has no go_goroutines")
	}
	return int(g), nil
}

// settledGoroutines waits until the server's goroutines are at most
// want, or have stopped changing (the same count 1 s apart) when want is
// negative, and returns the count; at most for timeout.
func settledGoroutines(base string, want int, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	last := -1
	for {
		g, err := goroutines(base)
		if err != nil {
			return 0, err
		}
		if (want >= 0 && g <= want) || (want < 0 && g == last) || time.Now().After(deadline) {
			return g, nil
		}
		last = g
		time.Sleep(time.Second)
	}
}

// heapInuse is the server's heap in use after a collection, from its
// profiler.
func heapInuse(debugURL string) (int64, error) {
	if debugURL == "" {
		return 0, fmt.Errorf("the server serves no profiler (--debug-addr)")
	}
	resp, err := probeClient.Get(debugURL + "/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "# HeapInuse = "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("the heap profile has no HeapInuse")
}

// sampler samples the server's resident memory and goroutines while the
// load runs, keeping the peaks.
type sampler struct {
	srv  *Server
	stop chan struct{}
	done chan struct{}

	mu             sync.Mutex
	peakRSS        int64
	peakGoroutines int
	samples        int
}

func startSampler(srv *Server, every time.Duration) *sampler {
	s := &sampler{srv: srv, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			// A server being restarted answers neither: that sample is
			// skipped.
			r, rerr := rss(srv.Pid())
			g, gerr := goroutines(srv.URL())
			s.mu.Lock()
			if rerr == nil {
				s.peakRSS = max(s.peakRSS, r)
			}
			if gerr == nil {
				s.peakGoroutines = max(s.peakGoroutines, g)
			}
			s.samples++
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// end stops sampling and returns the peaks.
func (s *sampler) end() (peakRSS int64, peakGoroutines int) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peakRSS, s.peakGoroutines
}

// goroutineStacks counts the server's goroutines by the functions of
// their stacks, from its profiler; nil without one.
func goroutineStacks(debugURL string) map[string]int {
	if debugURL == "" {
		return nil
	}
	resp, err := probeClient.Get(debugURL + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	count, stack := 0, []string(nil)
	flush := func() {
		if count > 0 {
			out[strings.Join(stack, " < ")] += count
		}
		count, stack = 0, nil
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			flush()
		case strings.Contains(line, " @ 0x"):
			count, _ = strconv.Atoi(line[:strings.IndexByte(line, ' ')])
		case strings.HasPrefix(line, "#\t"):
			// "#\t0x935c48\tdatabase/sql.(*DB).connectionOpener+0x88\tsql.go:1261"
			if f := strings.Split(line, "\t"); len(f) >= 3 {
				fn, _, _ := strings.Cut(f[2], "+")
				stack = append(stack, fn)
			}
		}
	}
	flush()
	return out
}

// moreGoroutines describes the stacks that have more goroutines in after
// than in before.
func moreGoroutines(before, after map[string]int) []string {
	var out []string
	for stack, n := range after {
		if n > before[stack] {
			out = append(out, fmt.Sprintf("%d more: %s", n-before[stack], stack))
		}
	}
	slices.Sort(out)
	return out
}

// cpuTime is a process's user and system time so far, from
// /proc/<pid>/stat.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command (field 2) may hold spaces; fields 3 on follow its ')'.
	// utime and stime are fields 14 and 15, in USER_HZ (100 on Linux).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * (time.Second / 100), nil
}

// ownCPUTime is this process's user and system time so far.
func ownCPUTime() time.Duration {
	t, _ := cpuTime(os.Getpid())
	return t
}
