package classroom

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/time/rate"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/server/httpapi"
)

// ChannelPath is a session's channel: one WebSocket per connected browser
// (GET, upgraded). A browser reports on it where its learner is (their
// lesson and step); a student's browser gets the teacher's pushes on it,
// and a teacher's the class's roster, live.
//
// Messages are JSON objects, one per WebSocket text message, told apart by
// "type". From the browser:
//
//	{"type":"presence","lesson":"<slug>","step":<n>}   where the learner is ("" and 0: the lesson list)
//
// From the server:
//
//	{"type":"welcome","you":{...},"push":{...}|null}  first: who the channel serves, and the class's last push
//	{"type":"push","id":…,"lesson":…,"step":…,…}      the teacher moved the class (students only)
//	{"type":"roster","people":[…]}                    who is connected and where (a teacher's channel with ?roster=1: the dashboard; coalesced)
//	{"type":"settings"}                               the session's settings changed: read them again (GET /rvplay/v1/settings)
//	{"type":"joincode","joinCode":"…"}                the teacher asked for a new join code (the dashboards only: they show it)
//	{"type":"reset"} / {"type":"ended"}               the teacher reset or ended the session
//	{"type":"error","message":"…"}                    a message the server could not take
const ChannelPath = "/rvplay/v1/channel"

// The channel's bounds: a class of 200 on one session, and nothing one
// browser does holds up another.
const (
	// channelReadLimit bounds one message from a browser: a presence
	// report is a few dozen bytes. A larger message closes that
	// connection (gorilla/websocket's read limit: close code 1009).
	channelReadLimit = 4 << 10
	// channelQueue is how many messages (pushes, notices) may wait for one
	// connection; a browser that leaves more unread is disconnected (it
	// reconnects and is welcomed with the class's state). The roster is
	// not queued: a teacher's connection takes the newest one when it is
	// ready for it.
	channelQueue = 64
	// rosterInterval is the least time between two rosters sent to one
	// teacher's connection: a class's reports at the start of a lesson
	// make one roster, not 200.
	rosterInterval = 250 * time.Millisecond
	// channelRate and channelBurst bound the messages a browser sends (a
	// presence report on each step change is far below); beyond them its
	// connection is closed.
	channelRate  = 20
	channelBurst = 40
	// channelSendBuffer is how many frames the transport holds for a slow
	// browser before the channel's own queue fills.
	channelSendBuffer = 16
)

// Why a connection's stream ended.
var (
	errChannelSlow   = errors.New("the browser did not keep up with its channel")
	errChannelFast   = errors.New("the browser sent more than 20 messages a second on its channel")
	errChannelEnded  = errors.New("the session ended")
	errChannelClosed = errors.New("closed")
)

// Person is one person of a class as the roster shows them: who, whether
// a browser of theirs is connected, and the lesson and step it reported
// last (kept after they disconnect).
type Person struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	Role string `json:"role"`
	// Connections counts their connected browsers (tabs).
	Connections int    `json:"connections"`
	Lesson      string `json:"lesson,omitempty"`
	Step        int    `json:"step"`
	// Seen is when a browser of theirs last connected or reported; zero
	// for a student who never opened the lab.
	Seen time.Time `json:"seen,omitzero"`
	// Since is when they came to the lesson and step they are on: the
	// dashboard says how long a student has been on a step, as a teacher
	// looks for who is stuck.
	Since time.Time `json:"since,omitzero"`
}

// class is what the server keeps of a session's class beside its store:
// the channel's connections, where each person is, the teacher's last
// push and the lessons set up for the class. It lives as long as the
// session is known (not only while it is loaded): a few hundred bytes per
// person.
type class struct {
	name string
	// students lists the session's students (the registry's record).
	students func() []api.Principal
	now      func() time.Time

	mu       sync.Mutex
	conns    map[*channelConn]struct{}
	presence map[string]*Person // by principal ID
	push     *Push
	ended    bool
	// toldJoinCode is the hash of the join code last told the dashboards.
	toldJoinCode []byte
	// version changes with every change a roster shows.
	version atomic.Uint64

	// history is each person's recent lesson changes (findings.go).
	history map[string][]lessonChange

	// setup remembers which lessons the teacher's pushes have set up in
	// the store now loaded (push.go); tally which findings of its record
	// are stored (findings.go).
	setup setupOnce
	tally perLoad[tally]
	// settings is the settings' JSON stored for the store now loaded
	// (settings.go).
	settings perLoad[string]
}

func newClass(name string, students func() []api.Principal, now func() time.Time) *class {
	return &class{name: name, students: students, now: now, conns: map[*channelConn]struct{}{},
		presence: map[string]*Person{}, history: map[string][]lessonChange{}}
}

// welcome is a connection's first message.
type welcome struct {
	Type string `json:"type"`
	You  Person `json:"you"`
	Push *Push  `json:"push"`
}

// connect adds a browser of p to the class and returns its stream, or nil
// when the session has ended.
func (c *class) connect(p api.Principal, roster bool) *channelConn {
	conn := &channelConn{class: c, p: p, teacher: p.Role == api.RoleTeacher, wake: make(chan struct{}, 1),
		roster:  roster && p.Role == api.RoleTeacher,
		limiter: rate.NewLimiter(channelRate, channelBurst)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return nil
	}
	c.conns[conn] = struct{}{}
	who := c.personLocked(p)
	who.Connections++
	who.Seen = c.now()
	c.version.Add(1)
	conn.enqueueLocked(mustJSON(welcome{Type: "welcome", You: *who, Push: c.push}))
	c.wakeTeachersLocked()
	return conn
}

func (c *class) personLocked(p api.Principal) *Person {
	who := c.presence[p.ID]
	if who == nil {
		who = &Person{ID: p.ID, Name: p.Name, Role: p.Role.String()}
		c.presence[p.ID] = who
	}
	return who
}

// leave removes conn (its stream closed).
func (c *class) leave(conn *channelConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(conn)
}

func (c *class) removeLocked(conn *channelConn) {
	if _, ok := c.conns[conn]; !ok {
		return
	}
	delete(c.conns, conn)
	if who := c.presence[conn.p.ID]; who != nil {
		who.Connections--
	}
	c.version.Add(1)
	c.wakeTeachersLocked()
}

// report records where conn's learner is.
func (c *class) report(conn *channelConn, lesson string, step int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.conns[conn]; !ok {
		return
	}
	who := c.personLocked(conn.p)
	who.Seen = c.now()
	if who.Lesson == lesson && who.Step == step {
		return
	}
	who.Lesson, who.Step, who.Since = lesson, step, who.Seen
	c.noteLessonLocked(who.ID, lesson, who.Seen)
	c.version.Add(1)
	c.wakeTeachersLocked()
}

func (c *class) wakeTeachersLocked() {
	for conn := range c.conns {
		if conn.roster {
			conn.signal()
		}
	}
}

// broadcast queues msg for every connection that want selects. It never
// waits for a browser: one whose queue is full is disconnected. It returns
// how many connections took msg.
func (c *class) broadcast(msg []byte, want func(*channelConn) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.broadcastLocked(msg, want)
}

func (c *class) broadcastLocked(msg []byte, want func(*channelConn) bool) int {
	n := 0
	for conn := range c.conns {
		if want != nil && !want(conn) {
			continue
		}
		if conn.enqueue(msg) {
			n++
		} else {
			c.removeLocked(conn)
		}
	}
	return n
}

// roster is every person of the class: the students who joined (connected
// or not), and the teachers who are connected, students first in the
// order they joined.
func (c *class) roster() []Person {
	students := c.students()
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Person, 0, len(students)+1)
	listed := make(map[string]bool, len(students))
	for _, p := range students {
		listed[p.ID] = true
		if who := c.presence[p.ID]; who != nil {
			out = append(out, *who)
		} else {
			out = append(out, Person{ID: p.ID, Name: p.Name, Role: p.Role.String()})
		}
	}
	var others []Person
	for id, who := range c.presence {
		if !listed[id] && who.Connections > 0 {
			others = append(others, *who)
		}
	}
	sort.Slice(others, func(i, j int) bool { return others[i].ID < others[j].ID })
	return append(out, others...)
}

// reset tells every browser of the class that the teacher reset the
// session (the store starts again at revision 1).
func (c *class) reset() {
	c.setup.forget()
	c.tally.forget()
	c.broadcast([]byte(`{"type":"reset"}`), nil)
}

// settingsChanged tells every browser of the class that the session's
// settings changed (a teacher's lab or dashboard, a lesson's set-up): a
// lab shows them, and a student's cannot know otherwise. The message
// carries no values: each lab reads them with its own credentials, as it
// does at start.
func (c *class) settingsChanged() { c.broadcast([]byte(`{"type":"settings"}`), nil) }

// joinCodeRenewed tells the teacher's dashboards (a teacher's channel with
// ?roster=1) the session's new join code: the one on the projector shows
// it, where the code it showed admits nobody any more. Nobody else gets
// it: it is a credential, for the class to read off the teacher's screen.
// A code told already is not told again: on a cluster the server that
// renewed it hears of it once more from storage (shared.go).
func (c *class) joinCodeRenewed(code string) {
	hash := hashJoinCode(c.name, code)
	c.mu.Lock()
	defer c.mu.Unlock()
	if sameHash(hash, c.toldJoinCode) {
		return
	}
	c.toldJoinCode = hash
	c.broadcastLocked(mustJSON(joinCodeMessage{Type: "joincode", JoinCode: code}), func(conn *channelConn) bool { return conn.roster })
}

type joinCodeMessage struct {
	Type     string `json:"type"`
	JoinCode string `json:"joinCode"`
}

// end closes every connection after telling it the session ended.
func (c *class) end() { c.close([]byte(`{"type":"ended"}`)) }

// close closes every connection, after sending it last (if not nil), and
// takes no more. The server's shutdown closes them without a word: their
// browsers connect again to the server's next start.
func (c *class) close(last []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
	for conn := range c.conns {
		if last != nil {
			conn.enqueue(last)
		}
		conn.finish(errChannelEnded)
		delete(c.conns, conn)
	}
}

// connections counts the open connections (for tests and the dashboard).
func (c *class) connections() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.conns)
}

// channelConn is one browser's channel: an api.Stream the transport pumps
// into the WebSocket (its frames are this connection's queue, and for a
// teacher the newest roster) and an api.Receiver of the browser's reports.
type channelConn struct {
	class   *class
	p       api.Principal
	teacher bool
	// roster: a teacher's dashboard, which follows the roster (a
	// teacher's lab does not ask for it).
	roster  bool
	wake    chan struct{} // one pending wake-up is enough
	limiter *rate.Limiter

	mu         sync.Mutex
	queue      [][]byte
	done       error // set: the stream ends once queue is empty
	rosterSent uint64
	rosterAt   time.Time
}

func (s *channelConn) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// enqueue adds msg to the connection's queue; false (and the connection
// ends) when the browser has left channelQueue messages unread.
func (s *channelConn) enqueue(msg []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enqueueLocked(msg)
}

func (s *channelConn) enqueueLocked(msg []byte) bool {
	if s.done != nil {
		return false
	}
	if len(s.queue) >= channelQueue {
		s.queue = nil
		s.done = errChannelSlow
		s.signal()
		return false
	}
	s.queue = append(s.queue, msg)
	s.signal()
	return true
}

// finish ends the stream once what is queued has been sent.
func (s *channelConn) finish(why error) {
	s.mu.Lock()
	if s.done == nil {
		s.done = why
	}
	s.mu.Unlock()
	s.signal()
}

// Next returns the connection's next message: what is queued, else (for a
// teacher's dashboard) a roster newer than the last one sent, at most one
// each rosterInterval, else it waits.
func (s *channelConn) Next(ctx context.Context) ([]byte, error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			msg := s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return msg, nil
		}
		if s.done != nil {
			err := s.done
			s.mu.Unlock()
			return nil, err
		}
		var due <-chan time.Time
		if s.roster {
			if v := s.class.version.Load(); v != s.rosterSent {
				wait := rosterInterval - time.Since(s.rosterAt)
				if wait <= 0 {
					s.rosterSent, s.rosterAt = v, time.Now()
					s.mu.Unlock()
					return mustJSON(rosterMessage{Type: "roster", People: s.class.roster()}), nil
				}
				if timer == nil {
					timer = time.NewTimer(wait)
				} else {
					timer.Reset(wait)
				}
				due = timer.C
			}
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-due:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

type rosterMessage struct {
	Type   string   `json:"type"`
	People []Person `json:"people"`
}

// Receive takes one message from the browser. A message it cannot read
// gets an error message back; a browser that sends too fast is
// disconnected.
func (s *channelConn) Receive(msg []byte) error {
	if !s.limiter.Allow() {
		s.enqueue(mustJSON(channelError{Type: "error", Message: errChannelFast.Error()}))
		s.finish(errChannelFast)
		return errChannelFast
	}
	m, err := decodeChannelMessage(msg)
	if err != nil {
		s.enqueue(mustJSON(channelError{Type: "error", Message: err.Error()}))
		return err
	}
	s.class.report(s, m.Lesson, m.Step)
	return nil
}

// Close removes the connection from its class.
func (s *channelConn) Close() {
	s.finish(errChannelClosed)
	s.class.leave(s)
}

type channelError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only this package's own types, which always encode
	}
	return b
}

// serveChannel upgrades a request for the session's channel. The
// transport is the sessions' (httpapi: origin check, one writer goroutine,
// ping/pong with deadlines) with the channel's own read limit and send
// buffer; a browser whose buffer stays full is closed, as a slow watcher
// is.
func (h *Handler) serveChannel(w http.ResponseWriter, r *http.Request, info Session, p api.Principal) {
	if !websocket.IsWebSocketUpgrade(r) {
		writeStatus(w, kube.NewBadRequest("the session channel is a WebSocket: GET "+ChannelPath+" with Upgrade: websocket"))
		return
	}
	c, ok := h.Registry.class(info.Name)
	if !ok {
		writeResponse(w, sessionNotFound(info.Name))
		return
	}
	opts := h.Registry.opts.HTTP
	opts.ReadLimit = channelReadLimit
	opts.SendBuffer = channelSendBuffer
	opts.WebSocketStyle = func(string) httpapi.WebSocketStyle { return httpapi.WebSocketStyle{CloseSlow: true} }
	opts.WebSocketMethod = nil
	opts.Observe = nil // its frames are not watch events
	opts.WatchLimiter = nil
	httpapi.Handler(api.HandlerFunc(func(context.Context, *api.Request) *api.Response {
		conn := c.connect(p, r.URL.Query().Get("roster") == "1")
		if conn == nil {
			return sessionNotFound(info.Name)
		}
		return &api.Response{Status: http.StatusOK, Stream: conn}
	}), opts).ServeHTTP(w, r)
}
