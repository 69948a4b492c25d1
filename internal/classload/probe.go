package classload

import (
	"bufio"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// What the server process holds: its memory, processor time, goroutines
// and heap as internal/rvplaytest reads them, its counters from /metrics.

// probeClient reads /metrics on connections of its own, closed after each
// request, so that they count in no figure they read.
var probeClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

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

// settledGoroutines waits until the server's goroutines are at most
// want, or have stopped changing (the same count 1 s apart) when want is
// negative, and returns the count; at most for timeout.
func settledGoroutines(srv *Server, want int, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	last := -1
	for {
		g, err := srv.process().Goroutines()
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

// sampler samples the server's resident memory and goroutines while the
// load runs, keeping the peaks.
type sampler struct {
	srv  *Server
	stop chan struct{}
	once sync.Once
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
			p := srv.process()
			r, _, rerr := p.Memory()
			g, gerr := p.Goroutines()
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

// end stops sampling (once) and returns the peaks.
func (s *sampler) end() (peakRSS int64, peakGoroutines int) {
	s.once.Do(func() { close(s.stop) })
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peakRSS, s.peakGoroutines
}

// moreGoroutines describes the stacks that have more goroutines in p now
// than in before.
func moreGoroutines(before map[string]int, p *rvplaytest.Server) []string {
	after, err := p.GoroutineStacks()
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for stack, n := range after {
		if n > before[stack] {
			out = append(out, fmt.Sprintf("%d more: %s", n-before[stack], stack))
		}
	}
	slices.Sort(out)
	return out
}

// ownCPUTime is the processor time this process has taken so far.
func ownCPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
