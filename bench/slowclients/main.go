// Command slowclients replays issue 10's slow-client attacks against a
// running server and reports what the server holds meanwhile: its resident
// memory (from /proc, so the server must run on this machine) and, when
// the server serves Go's profiler (--debug-addr), its live heap.
//
//	go run ./bench/slowclients -target http://127.0.0.1:8080/s/demo -pid $PID \
//	    -debug http://127.0.0.1:6060 -attack upload -conns 300
//
// Attacks:
//
//	upload: each connection declares a body of -size bytes, sends all of
//	        it but the last byte, and waits (defect 4).
//	read:   each connection asks for a range of the whole keyspace (filled
//	        first with -fill bytes of values) and never reads the answer
//	        (defect 5).
//
// It samples every second for -hold, then hangs up.
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	target := flag.String("target", "http://127.0.0.1:8080/s/demo", "a session's base URL")
	pid := flag.Int("pid", 0, "the server's process id, for its resident memory")
	debug := flag.String("debug", "", "the server's --debug-addr URL, for its live heap")
	attack := flag.String("attack", "upload", "upload or read")
	conns := flag.Int("conns", 300, "connections")
	size := flag.Int("size", 3<<20, "declared body size (upload)")
	fill := flag.Int("fill", 48<<20, "bytes of values to put before the reads (read)")
	hold := flag.Duration("hold", 30*time.Second, "how long the connections are held")
	flag.Parse()

	u, err := url.Parse(*target)
	if err != nil {
		log.Fatal(err)
	}
	sample := func(label string) {
		fmt.Printf("%-12s rss %4d MB  heap %4s MB\n", label, rss(*pid)>>20, heap(*debug))
	}
	if *attack == "read" {
		putValues(*target, *fill)
	}
	sample("before")
	start := time.Now()
	var mu sync.Mutex
	answers := map[string]int{} // status of the answers that came before the last byte
	var wg sync.WaitGroup
	var open []net.Conn
	payload := bytes.Repeat([]byte("x"), *size-1)
	for range *conns {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			log.Fatal(err)
		}
		open = append(open, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch *attack {
			case "upload":
				head := fmt.Sprintf("POST %s/v3/kv/put HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", u.Path, u.Host, *size)
				c.Write([]byte(head))
				c.Write(payload)
				// An answer before the last byte is a refusal.
				if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
					mu.Lock()
					answers[fmt.Sprintf("%d at t+%ds", resp.StatusCode, int(time.Since(start).Seconds()))]++
					mu.Unlock()
				}
			case "read":
				body := `{"key":"AA==","range_end":"AA=="}`
				fmt.Fprintf(c, "POST %s/v3/kv/range HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n%s", u.Path, u.Host, len(body), body)
				// Never read: the answer waits in the server.
			}
		}()
	}
	for time.Since(start) < *hold {
		time.Sleep(time.Second)
		sample(fmt.Sprintf("t+%ds", int(time.Since(start).Seconds())))
	}
	mu.Lock()
	fmt.Printf("answers before the last byte: %v\n", answers)
	mu.Unlock()
	for _, c := range open {
		c.Close()
	}
	wg.Wait()
	time.Sleep(2 * time.Second)
	sample("after")
}

// putValues fills the session with n bytes of 1 MiB values.
func putValues(target string, n int) {
	value := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("v"), 1<<20))
	for i := 0; i*(1<<20) < n; i++ {
		key := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "slow/%04d", i))
		resp, err := http.Post(target+"/v3/kv/put", "application/json",
			strings.NewReader(`{"key":"`+key+`","value":"`+value+`"}`))
		if err != nil {
			log.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			log.Fatalf("put: %d %s", resp.StatusCode, b)
		}
	}
}

// rss is a process's resident memory in bytes, 0 if unknown.
func rss(pid int) int64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// heap is the server's heap in use after a collection, in MB, from its
// profiler.
func heap(debug string) string {
	if debug == "" {
		return "-"
	}
	resp, err := http.Get(debug + "/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return "?"
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "# HeapInuse = "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return strconv.FormatInt(n>>20, 10)
		}
	}
	return "?"
}
