package classload

import (
	"context"
	"net"
	"testing"
	"time"
)

// A stamped connection times what it reads by its arrival at the socket,
// not by when the reader got to it.
func TestAReadIsStampedWithItsArrival(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := dialStamped(context.Background(), "tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv := <-accepted
	if srv == nil {
		t.Fatal("no connection accepted")
	}
	defer srv.Close()
	// The kernel stamps reads a little after the first socket asks: a
	// read it did not stamp is tried again.
	buf := make([]byte, 16)
	for try := 0; ; try++ {
		unstamped := unstampedReads.Load()
		before := time.Now().UnixNano()
		if _, err := srv.Write([]byte("event")); err != nil {
			t.Fatal(err)
		}
		// On loopback the bytes are in the client's socket once the
		// write returns: whatever the reader does meanwhile, they
		// arrived by now.
		written := time.Now().UnixNano()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, err := c.Read(buf); err != nil || string(buf[:n]) != "event" {
			t.Fatalf("read %q, %v", buf[:n], err)
		}
		if unstampedReads.Load() != unstamped {
			if try == 1000 {
				t.Fatal("the kernel stamped none of 1,000 reads")
			}
			continue
		}
		if at := receivedAt(c); at < before || at > written {
			t.Fatalf("stamped %d ns after the write began, which took %d ns", at-before, written-before)
		}
		return
	}
}
