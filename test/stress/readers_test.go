package stress

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Attack 5: clients that never read large range responses. Issue 10's five
// stalled readers of a 48 MB range kept 2.3 GB in the server for as long
// as they stayed. Now an answer larger than --max-response-bytes (32 MiB,
// counted as etcd's gRPC server counts it) is refused before it is
// encoded, and a client must take each MiB of an answer within
// --write-timeout or be disconnected, its answer freed.
func TestAttack05StalledReaders(t *testing.T) {
	const values = 40 // MiB of values: a whole range is past the 32 MiB limit
	const within = 20 // a range of 20 of them is within it
	over := scaled(10, 50)
	under := scaled(3, 5)                                 // issue 10's five
	writeTimeout := scaled(3*time.Second, 10*time.Second) // the default in full
	a := startAttack(t, "05 stalled readers", Bounds{
		// An answer being encoded holds its values, its JSON (4/3 of them,
		// base64) and the buffers that grew by doubling to hold it: two
		// and a half times its JSON live.
		Live:       int64(under) * 5 * (within << 20) * 4 / 3 / 2,
		RssAnon:    64 << 20,
		Goroutines: 2*(over+under) + 32,
	}, fmt.Sprint("--write-timeout=", writeTimeout))
	value := repeatBytes('v', 1<<20)
	for i := range values {
		mustPost(t, attacker, a.Attack+"/v3/kv/put", putRequest(fmt.Sprintf("big/%02d", i), value))
	}
	a.begin()

	ask := func(body string) net.Conn {
		c := dialSmallWindow(t, a.srv.URL)
		fmt.Fprintf(c, "POST /s/attack/v3/kv/range HTTP/1.1\r\nHost: rvplay\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		return c
	}
	whole := fmt.Sprintf(`{"key":%q,"range_end":%q}`, b64("big/"), b64(prefixEnd("big/")))
	limited := fmt.Sprintf(`{"key":%q,"range_end":%q,"limit":"%d"}`, b64("big/"), b64(prefixEnd("big/")), within)

	// Past the limit: refused before encoding, whether read or not.
	var conns []net.Conn
	for range over {
		conns = append(conns, ask(whole))
	}
	resp, b, err := answer(conns[0], 30*time.Second)
	if err != nil || resp.StatusCode != 429 || !strings.Contains(decodeEtcdError(b).Error, "grpc: trying to send message larger than max") {
		t.Errorf("a range past --max-response-bytes: %v %v %.200s, want 429 ResourceExhausted", resp, err, b)
	}
	overPeak := a.mon.peakSoFar().RssAnon - a.base.RssAnon
	// Within it, never read: held until the write timeout.
	held := make([]net.Conn, under)
	for i := range held {
		held[i] = ask(limited)
	}
	for _, c := range conns {
		c.Close()
	}
	// Each held connection gets the beginning of its answer (one byte of
	// it is read, to know the server is writing) and is dropped at the
	// write timeout: its handler ends, and what can be read ends before
	// the answer does.
	for i, c := range held {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != nil {
			t.Fatalf("stalled reader %d: %v", i, err)
		}
	}
	start := time.Now()
	// Dropped means no handler of the server is still writing an answer
	// (a count of goroutines cannot tell one held answer from noise, and a
	// reader that read before its answer was dropped would keep it alive).
	a.waitNoneWriting(writeTimeout + 15*time.Second)
	a.settle(writeTimeout+15*time.Second, 4)
	dropped := time.Since(start)
	for i, c := range held {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		n, err := io.Copy(io.Discard, c)
		c.Close()
		if err != nil && !isReset(err) {
			t.Errorf("stalled reader %d: %v after %d bytes", i, err, n)
		}
		if n > within<<20 {
			t.Errorf("stalled reader %d could take its whole answer (%d bytes) after stalling %v: not dropped at the write timeout %v",
				i, n, dropped.Round(time.Second), writeTimeout)
		}
	}
	a.note("%d ranges of %d MiB refused (RssAnon +%s), %d of %d MiB held unread: dropped after %v (write timeout %v)",
		over, values, mib(overPeak), under, within, dropped.Round(100*time.Millisecond), writeTimeout)
	a.end()
	if heap := a.probe(true).HeapInuse; heap > a.base.HeapInuse+16<<20 {
		t.Errorf("after the stalled readers the server's heap is %s, %s before", mib(heap), mib(a.base.HeapInuse))
	}
}

// waitNoneWriting waits until no goroutine of the server is writing a
// complete answer (httpapi's writeComplete), as the server's goroutine
// profile shows them, or fails the test after d.
func (a *attack) waitNoneWriting(d time.Duration) {
	a.t.Helper()
	deadline := time.Now().Add(d)
	for {
		if !strings.Contains(a.goroutines(1), "writeComplete") {
			return
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("the server still writes an answer to a client that stopped reading %v ago", d)
		}
		time.Sleep(100 * time.Millisecond) // polling the profile, as settle does
	}
}

// dialSmallWindow connects with a receive buffer fixed at 128 KiB, as a
// client that stops reading is seen over a network: without it, loopback's
// autotuning (tcp_rmem up to 32 MiB on some machines) lets the kernel take
// a whole 28 MB answer off the server, which then has nothing left to drop.
func dialSmallWindow(t *testing.T, base string) net.Conn {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 128<<10)
		}); err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// isReset says whether err is the peer resetting the connection (the
// server closing it with unread data, or before the client read all).
func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe"))
}
