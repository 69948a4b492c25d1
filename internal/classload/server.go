package classload

import (
	"net/url"
	"sync"

	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// Server is the server binary running on a SQLite file, which the load
// may kill and start again on the same file and address.
type Server struct {
	bin, db string
	flags   []string

	mu   sync.Mutex
	proc *rvplaytest.Server
}

// StartServer starts bin on a free loopback port over the SQLite file db,
// with its profiler (what the load reads of the process) and flags added
// to its command line. The caller must Stop it.
func StartServer(bin, db string, flags ...string) (*Server, error) {
	// No --session: the load's session is a guarded one it creates.
	flags = append([]string{"--debug-addr", "127.0.0.1:0"}, flags...)
	p, err := rvplaytest.StartBinary(bin, db, "", flags...)
	if err != nil {
		return nil, err
	}
	return &Server{bin: bin, db: db, flags: flags, proc: p}, nil
}

func (s *Server) process() *rvplaytest.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

// URL is the server's address, e.g. http://127.0.0.1:40123.
func (s *Server) URL() string { return s.process().URL }

// DebugURL is its profiler's address.
func (s *Server) DebugURL() string { return s.process().DebugURL }

// Log is what the server running now wrote.
func (s *Server) Log() string { return s.process().Log() }

// Kill ends the server at once (SIGKILL) and waits for it.
func (s *Server) Kill() { s.process().Kill() }

// Stop ends the server gracefully (SIGTERM).
func (s *Server) Stop() error { return s.process().Stop() }

// Restart starts the server again on the same file and address, after
// Kill or Stop: its clients find it where they left it.
func (s *Server) Restart() error {
	u, err := url.Parse(s.URL())
	if err != nil {
		return err
	}
	p, err := rvplaytest.StartBinary(s.bin, s.db, "", append(append([]string(nil), s.flags...), "--addr", u.Host)...)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	return nil
}
