package httpapi

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"time"
)

// A WebSocket's writer sends the messages that are already waiting for
// its client together, in one write to the connection, instead of one
// write(2) per message: a class's watchers each get every event of the
// session, and a write per event per watcher was most of the server's
// work (BENCHMARKS.md, issue 12's load). Each event is still a message of
// its own, as kube-apiserver's watch sends it. A chunked stream's frames
// that are ready together are flushed together likewise (streamChunked).

// maxBatchBytes is how much a stream's writer gathers before it writes
// what it holds, so that a batch stays small beside the socket's buffers
// and a client's memory bound (SendBuffer frames waiting, plus one batch).
const maxBatchBytes = 64 << 10

// gather writes frame, then the frames already waiting in ready, with
// write, until maxBatchBytes are written, none waits, write fails or stop
// is closed (nil: never). It says how many it wrote, and whether the
// stream goes on: false once ready is closed, a write failed or stop is
// closed.
func gather(frame []byte, ready <-chan []byte, stop <-chan struct{}, write func([]byte) error) (sent int, more bool) {
	size := 0
	for {
		select {
		case <-stop:
			return sent, false
		default:
		}
		if write(frame) != nil {
			return sent, false
		}
		sent++
		if size += len(frame); size >= maxBatchBytes {
			return sent, true
		}
		var ok bool
		select {
		case frame, ok = <-ready:
			if !ok {
				return sent, false
			}
		default:
			return sent, true
		}
	}
}

// batchBuffers recycles the buffers of batches: a connection holds one
// only while it gathers and writes a batch, none while idle.
var batchBuffers = sync.Pool{New: func() any { return new([]byte) }}

// batchConn is the connection under a WebSocket. Between hold and flush
// what gorilla/websocket writes to it (the writer's messages, and a pong
// or close the reading goroutine answers meanwhile) is gathered, then
// written at once; otherwise it writes through.
type batchConn struct {
	net.Conn

	mu   sync.Mutex
	held *[]byte // the batch being gathered; nil: writing through
	err  error   // the error of a flush, returned by every later write
}

func (c *batchConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if c.held != nil {
		*c.held = append(*c.held, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// SetWriteDeadline is gorilla's before each of its writes: while a batch
// is gathered it has no write to bound (flush sets the batch's), and a
// flush under way keeps its own.
func (c *batchConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held != nil {
		return nil
	}
	return c.Conn.SetWriteDeadline(t)
}

// hold starts gathering a batch.
func (c *batchConn) hold() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = batchBuffers.Get().(*[]byte)
}

// flush writes the batch, which the client must take by deadline, and
// writes through again.
func (c *batchConn) flush(deadline time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.held
	if b == nil {
		return c.err
	}
	c.held = nil
	defer func() {
		if cap(*b) <= 2*maxBatchBytes {
			*b = (*b)[:0]
			batchBuffers.Put(b)
		}
	}()
	if c.err != nil || len(*b) == 0 {
		return c.err
	}
	if err := c.Conn.SetWriteDeadline(deadline); err != nil {
		c.err = err
		return err
	}
	if _, err := c.Conn.Write(*b); err != nil {
		c.err = err
	}
	return c.err
}

// batchingResponse hands gorilla/websocket's Upgrade a batchConn when it
// hijacks the connection.
type batchingResponse struct {
	http.ResponseWriter
	conn *batchConn
}

func (w *batchingResponse) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.conn = &batchConn{Conn: c}
	// gorilla takes the buffer of rw.Writer for its own and writes to
	// the connection it returns: rw.Writer writes to c no more.
	return w.conn, rw, nil
}

func (w *batchingResponse) Unwrap() http.ResponseWriter { return w.ResponseWriter }
