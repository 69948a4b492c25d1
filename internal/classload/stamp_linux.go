package classload

import (
	"context"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The load tool shares the machine's cores with the server: a watcher's
// goroutine may wait for a core long after the server sent it an event,
// and a writer's long after its answer came. Delivery is timed where the
// tool's own waits do not count: when the bytes reached the client's
// socket, as the kernel stamps them (SO_TIMESTAMPNS).

// stampedConn is a client's TCP connection that notes when what it reads
// arrived: the kernel's receive time of the last segment each read took.
// What one read takes arrived at or before that time, so an event is
// never timed as delivered earlier than it was.
type stampedConn struct {
	net.Conn // not *net.TCPConn: its WriteTo would read past Read
	raw      syscall.RawConn
	oob      []byte
	last     atomic.Int64 // Unix nanoseconds; 0 before the first read
}

// dialStamped connects as net.Dialer does, with receive stamps on.
func dialStamped(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		c.Close()
		return nil, err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil {
		serr = err
	}
	if serr != nil {
		c.Close()
		return nil, os.NewSyscallError("setsockopt SO_TIMESTAMPNS", serr)
	}
	return &stampedConn{Conn: tc, raw: raw, oob: make([]byte, syscall.CmsgSpace(int(unsafe.Sizeof(syscall.Timespec{}))))}, nil
}

func (c *stampedConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n, oobn int
	var rerr error
	err := c.raw.Read(func(fd uintptr) bool {
		for {
			n, oobn, _, _, rerr = syscall.Recvmsg(int(fd), p, c.oob, 0)
			if rerr != syscall.EINTR {
				return rerr != syscall.EAGAIN
			}
		}
	})
	if err == nil && rerr != nil {
		err = os.NewSyscallError("recvmsg", rerr)
	}
	if err != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	if n == 0 {
		return 0, io.EOF
	}
	c.last.Store(kernelStamp(c.oob[:oobn]))
	return n, nil
}

// unstampedReads counts the reads the kernel gave no stamp, timed when
// they returned instead: the kernel turns stamping on a little after the
// first socket asks for it.
var unstampedReads atomic.Int64

// kernelStamp is the receive time in a read's control messages, or now.
func kernelStamp(oob []byte) int64 {
	if msgs, err := syscall.ParseSocketControlMessage(oob); err == nil {
		for _, m := range msgs {
			if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(syscall.Timespec{})) {
				return (*syscall.Timespec)(unsafe.Pointer(&m.Data[0])).Nano()
			}
		}
	}
	unstampedReads.Add(1)
	return time.Now().UnixNano()
}

// receivedAt is when the last data read from c arrived (Unix
// nanoseconds), or now for a connection without stamps.
func receivedAt(c net.Conn) int64 {
	if s, ok := c.(*stampedConn); ok {
		if t := s.last.Load(); t != 0 {
			return t
		}
	}
	return time.Now().UnixNano()
}
