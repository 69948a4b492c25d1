//go:build !linux

package classload

import (
	"context"
	"net"
	"sync/atomic"
	"time"
)

// Elsewhere than on Linux the kernel's receive stamps are not read:
// delivery is timed when the load tool takes what arrived.

func dialStamped(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func receivedAt(net.Conn) int64 { return time.Now().UnixNano() }

// unstampedReads is 0: no read is counted.
var unstampedReads atomic.Int64
