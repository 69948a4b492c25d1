package stress

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// sample is what the server holds at one moment.
type sample struct {
	// VmRSS and RssAnon from /proc/<pid>/status, in bytes.
	VmRSS, RssAnon int64
	// Goroutines from the profiler (/debug/pprof/goroutine).
	Goroutines int
	// HeapInuse after a collection, from the profiler (only when asked
	// for: forcing a collection changes what is measured).
	HeapInuse int64
	// CPU is the process's user and system time so far.
	CPU time.Duration
}

func readSample(srv *rvplaytest.Server, gc bool) (sample, error) {
	var s sample
	var err error
	if s.VmRSS, s.RssAnon, err = srv.Memory(); err != nil {
		return s, err
	}
	if s.CPU, err = srv.CPU(); err != nil {
		return s, err
	}
	if s.Goroutines, err = srv.Goroutines(); err != nil {
		return s, err
	}
	if gc {
		if s.HeapInuse, err = srv.HeapInuse(); err != nil {
			return s, err
		}
	}
	return s, nil
}

// monitor samples the server's memory every 20 ms and its goroutines
// every 100 ms, keeping the peaks, and ends the server if its memory
// passes killAt: a bound broken that far would take the machine down.
type monitor struct {
	srv  *rvplaytest.Server
	done chan struct{}
	wg   sync.WaitGroup

	mu   sync.Mutex
	peak sample
}

func startMonitor(srv *rvplaytest.Server, base sample, killAt int64) *monitor {
	m := &monitor{srv: srv, done: make(chan struct{}), peak: base}
	m.every(20*time.Millisecond, func() bool {
		vm, anon, err := srv.Memory()
		if err != nil {
			return true
		}
		m.mu.Lock()
		m.peak.VmRSS = max(m.peak.VmRSS, vm)
		m.peak.RssAnon = max(m.peak.RssAnon, anon)
		m.mu.Unlock()
		if anon > killAt {
			fmt.Fprintf(os.Stderr, "stress: the server holds %s of anonymous memory, past %s: killing it\n", mib(anon), mib(killAt))
			srv.Kill()
			return false
		}
		return true
	})
	m.every(100*time.Millisecond, func() bool {
		if n, err := srv.Goroutines(); err == nil {
			m.mu.Lock()
			m.peak.Goroutines = max(m.peak.Goroutines, n)
			m.mu.Unlock()
		}
		return true
	})
	return m
}

// every calls sample every interval until the monitor stops, the server
// exits, or sample returns false.
func (m *monitor) every(interval time.Duration, sample func() bool) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-m.done:
				return
			case <-m.srv.Exited():
				return
			case <-tick.C:
			}
			if !sample() {
				return
			}
		}
	}()
}

// peakSoFar is the peaks up to now.
func (m *monitor) peakSoFar() sample {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak
}

// stop ends the sampling and returns the peaks, with the CPU time used
// until now.
func (m *monitor) stop() sample {
	close(m.done)
	m.wg.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.peak
	if cpu, err := m.srv.CPU(); err == nil {
		p.CPU = cpu
	}
	return p
}
