package proctest

import (
	"net"
	"testing"
)

// FreePorts returns n distinct TCP ports that were free on 127.0.0.1 a
// moment ago, for a server that must be told its port on its command line
// (etcd's client and peer URLs, kube-apiserver's --secure-port). Each port
// is held until all n are picked, so that no two are the same; another
// process may still take one before the server binds it.
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// FreePort is one free port for the test (see FreePorts); it ends the
// test if none can be had.
func FreePort(tb testing.TB) int {
	tb.Helper()
	ports, err := FreePorts(1)
	if err != nil {
		tb.Fatal(err)
	}
	return ports[0]
}
