package stress

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
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

// debugClient reads the profiler; it is no client of the sessions.
var debugClient = &http.Client{Timeout: 30 * time.Second}

func readSample(srv *rvplaytest.Server, gc bool) (sample, error) {
	var s sample
	var err error
	if s.VmRSS, s.RssAnon, err = procMemory(srv.Pid()); err != nil {
		return s, err
	}
	if s.CPU, err = procCPU(srv.Pid()); err != nil {
		return s, err
	}
	if s.Goroutines, err = goroutines(srv.DebugURL); err != nil {
		return s, err
	}
	if gc {
		if s.HeapInuse, err = heapInuse(srv.DebugURL); err != nil {
			return s, err
		}
	}
	return s, nil
}

func procMemory(pid int) (vmRSS, rssAnon int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			vmRSS = kb << 10
		case "RssAnon:":
			rssAnon = kb << 10
		}
	}
	return vmRSS, rssAnon, nil
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; what follows its closing
	// parenthesis is fields 3 onward: utime and stime are fields 14, 15.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat: %q", pid, s)
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

func goroutines(debugURL string) (int, error) {
	line, err := profileLine(debugURL+"/debug/pprof/goroutine?debug=1", "goroutine profile: total ")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(line)
}

func heapInuse(debugURL string) (int64, error) {
	line, err := profileLine(debugURL+"/debug/pprof/heap?gc=1&debug=1", "# HeapInuse = ")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(line, 10, 64)
}

// profileLine is what follows prefix on the first line of a text profile
// that starts with it.
func profileLine(url, prefix string) (string, error) {
	resp, err := debugClient.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("%s: no line %q", url, prefix)
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
	m.wg.Add(2)
	go func() {
		defer m.wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-m.done:
				return
			case <-srv.Exited():
				return
			case <-tick.C:
			}
			vm, anon, err := procMemory(srv.Pid())
			if err != nil {
				continue
			}
			m.mu.Lock()
			m.peak.VmRSS = max(m.peak.VmRSS, vm)
			m.peak.RssAnon = max(m.peak.RssAnon, anon)
			m.mu.Unlock()
			if anon > killAt {
				fmt.Fprintf(os.Stderr, "stress: the server holds %s of anonymous memory, past %s: killing it\n", mib(anon), mib(killAt))
				srv.Kill()
				return
			}
		}
	}()
	go func() {
		defer m.wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-m.done:
				return
			case <-srv.Exited():
				return
			case <-tick.C:
			}
			if n, err := goroutines(srv.DebugURL); err == nil {
				m.mu.Lock()
				m.peak.Goroutines = max(m.peak.Goroutines, n)
				m.mu.Unlock()
			}
		}
	}()
	return m
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
	if cpu, err := procCPU(m.srv.Pid()); err == nil {
		p.CPU = cpu
	}
	return p
}
