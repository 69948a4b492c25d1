package rvplaytest

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// What a server process holds, read from outside it as an operator would:
// its memory and processor time from /proc/<pid> (the server runs on this
// machine), its goroutines and live heap from its profiler (a server
// started with --debug-addr).

// Memory is the process's resident memory, from /proc/<pid>/status: all
// of it (VmRSS) and its anonymous part (RssAnon: heap and stacks, without
// the pages of the binary it maps), in bytes.
func (s *Server) Memory() (vmRSS, rssAnon int64, err error) { return ProcessMemory(s.Pid()) }

// ProcessMemory is Memory for process pid (any program on this machine: a
// reference server too).
func ProcessMemory(pid int) (vmRSS, rssAnon int64, err error) {
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

// CPU is the processor time the process has taken so far, user and
// system, from /proc/<pid>/stat.
func (s *Server) CPU() (time.Duration, error) { return ProcessCPU(s.Pid()) }

// ProcessCPU is the processor time process pid (any program on this
// machine: a reference server too) has taken so far, user and system,
// from /proc/<pid>/stat.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; what follows its closing
	// parenthesis is fields 3 onward: utime and stime are fields 14, 15.
	st := string(b)
	f := strings.Fields(st[strings.LastIndexByte(st, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat: %q", pid, st)
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// debugClient reads the profiler on connections of its own, closed after
// each request: it is no client of the sessions.
var debugClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// Goroutines is how many goroutines the process runs, from its profiler.
func (s *Server) Goroutines() (int, error) {
	line, err := s.profileLine("/debug/pprof/goroutine?debug=1", "goroutine profile: total ")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(line)
}

// HeapInuse is the process's heap in use after a collection (which it
// forces), from its profiler.
func (s *Server) HeapInuse() (int64, error) {
	line, err := s.profileLine("/debug/pprof/heap?gc=1&debug=1", "# HeapInuse = ")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(line, 10, 64)
}

// profileLine is what follows prefix on the first line of a text profile
// that starts with it.
func (s *Server) profileLine(path, prefix string) (string, error) {
	var out string
	err := s.readProfile(path, func(line string) bool {
		v, ok := strings.CutPrefix(line, prefix)
		out = strings.TrimSpace(v)
		return !ok
	})
	if err == nil && out == "" {
		err = fmt.Errorf("%s: no line %q", path, prefix)
	}
	return out, err
}

// GoroutineStacks counts the process's goroutines by the functions of
// their stacks ("database/sql.(*DB).connectionOpener"; callers after " <
// "), from its profiler: what a goroutine left behind is.
func (s *Server) GoroutineStacks() (map[string]int, error) {
	out := map[string]int{}
	count, stack := 0, []string(nil)
	flush := func() {
		if count > 0 {
			out[strings.Join(stack, " < ")] += count
		}
		count, stack = 0, nil
	}
	err := s.readProfile("/debug/pprof/goroutine?debug=1", func(line string) bool {
		switch {
		case line == "":
			flush()
		case strings.Contains(line, " @ 0x"):
			count, _ = strconv.Atoi(line[:strings.IndexByte(line, ' ')])
		case strings.HasPrefix(line, "#\t"):
			// "#\t0x935c48\tdatabase/sql.(*DB).connectionOpener+0x88\t…/sql.go:1261"
			if f := strings.Split(line, "\t"); len(f) >= 3 {
				fn, _, _ := strings.Cut(f[2], "+")
				stack = append(stack, fn)
			}
		}
		return true
	})
	flush()
	return out, err
}

// readProfile passes each line of the text profile at path to line until
// it returns false.
func (s *Server) readProfile(path string, line func(string) bool) error {
	if s.DebugURL == "" {
		return fmt.Errorf("the server serves no profiler (start it with --debug-addr)")
	}
	resp, err := debugClient.Get(s.DebugURL + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", path, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if !line(sc.Text()) {
			return nil
		}
	}
	return sc.Err()
}
