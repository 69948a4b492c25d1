package classroom

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/server/httpapi"
)

// testLessons is a catalog of one lesson with settings and an object,
// the shape of the real ones' set-up.
func testLessons(t testing.TB) *lesson.Catalog {
	t.Helper()
	c, err := lesson.Load(fstest.MapFS{"01-races/lesson.json": {Data: []byte(`{"slug":"races",
	  "setup":{"settings":{"bookmarkInterval":"2s"},"objects":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo"}}]},
	  "steps":[{"id":"one"},{"id":"two"},{"id":"three"}]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// channel is one browser's session channel in a test.
type channel struct {
	t    testing.TB
	conn *websocket.Conn
}

func (e *env) channel(session, token string) *channel {
	e.t.Helper()
	c, resp, err := e.dialChannel(session+"/rvplay/v1/channel?roster=1", token, nil)
	if err != nil {
		e.t.Fatalf("channel of %s: %v (%v)", session, err, resp)
	}
	return c
}

func (e *env) dialChannel(session, token string, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (*channel, *http.Response, error) {
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	d := websocket.Dialer{NetDialContext: dial}
	if !strings.Contains(session, "/") {
		session += ChannelPath
	}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(e.srv.URL, "http")+"/s/"+session, h)
	if err != nil {
		return nil, resp, err
	}
	c := &channel{t: e.t, conn: conn}
	e.t.Cleanup(func() { conn.Close() })
	return c, resp, nil
}

// message is any message of the channel, decoded.
type message struct {
	Type     string   `json:"type"`
	You      Person   `json:"you"`
	Push     *Push    `json:"push"`
	ID       int64    `json:"id"`
	Lesson   string   `json:"lesson"`
	Step     int      `json:"step"`
	People   []Person `json:"people"`
	Message  string   `json:"message"`
	JoinCode string   `json:"joinCode"`
}

func (c *channel) read() message {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, b, err := c.conn.ReadMessage()
	if err != nil {
		c.t.Fatalf("reading the channel: %v", err)
	}
	var m message
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("a message that is not JSON: %q", b)
	}
	return m
}

// until reads messages until one satisfies ok.
func (c *channel) until(what string, ok func(message) bool) message {
	c.t.Helper()
	for range 100 {
		if m := c.read(); ok(m) {
			return m
		}
	}
	c.t.Fatalf("no %s in 100 messages", what)
	return message{}
}

func (c *channel) send(v string) {
	c.t.Helper()
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(v)); err != nil {
		c.t.Fatal(err)
	}
}

func personOf(people []Person, id string) (Person, bool) {
	for _, p := range people {
		if p.ID == id {
			return p, true
		}
	}
	return Person{}, false
}

// A browser's channel opens with who it serves and the class's last push;
// a teacher's then follows the roster: every student who joined, who is
// connected, and the lesson and step each reported.
func TestTheChannelShowsTheTeacherWhoIsConnectedAndWhere(t *testing.T) {
	e := newEnv(t, Options{})
	class := e.create("class")
	ada, bob := e.join(class, "Ada"), e.join(class, "Bob")

	teacher := e.channel("class", class.TeacherToken)
	if m := teacher.read(); m.Type != "welcome" || m.You.Role != "teacher" || m.Push != nil {
		t.Fatalf("the teacher's welcome: %+v", m)
	}
	student := e.channel("class", ada.Token)
	if m := student.read(); m.Type != "welcome" || m.You.ID != ada.ID || m.You.Name != "Ada" || m.You.Role != "student" {
		t.Fatalf("a student's welcome: %+v", m)
	}
	student.send(`{"type":"presence","lesson":"races","step":2}`)
	r := teacher.until("a roster with Ada at races/2", func(m message) bool {
		p, _ := personOf(m.People, ada.ID)
		return m.Type == "roster" && p.Lesson == "races" && p.Step == 2
	})
	if p, _ := personOf(r.People, ada.ID); p.Connections != 1 || p.Name != "Ada" {
		t.Fatalf("Ada: %+v", p)
	}
	if p, ok := personOf(r.People, bob.ID); !ok || p.Connections != 0 || !p.Seen.IsZero() {
		t.Fatalf("Bob, who joined but never connected: %+v (listed %v)", p, ok)
	}
	if r.People[0].ID != ada.ID || r.People[1].ID != bob.ID {
		t.Fatalf("students in the order they joined: %+v", r.People)
	}

	// Ada's browser leaves: she stays on the roster, disconnected, where
	// she was.
	student.conn.Close()
	teacher.until("a roster with Ada disconnected", func(m message) bool {
		p, _ := personOf(m.People, ada.ID)
		return m.Type == "roster" && p.Connections == 0 && p.Lesson == "races" && p.Step == 2
	})
}

// Pushing the class to a step is the teacher's; every student's browser
// gets it at once, later browsers in their welcome; the lesson's set-up
// runs once, as the teacher.
func TestAPushMovesEveryStudentsBrowserAndSetsTheLessonUpOnce(t *testing.T) {
	e := newEnv(t, Options{Session: sessionWithLessons(t)})
	class := e.create("class")
	var students []*channel
	for _, name := range []string{"Ada", "Bob", "Cy"} {
		c := e.channel("class", e.join(class, name).Token)
		c.read() // welcome
		students = append(students, c)
	}
	teacher := e.channel("class", class.TeacherToken)
	teacher.read()

	a := e.do("POST", "/s/class"+PushPath, cred{bearer: class.TeacherToken}, `{"lesson":"races","step":1}`)
	must(t, "the first push", a, 200, `"kind":"Push"`, `"lesson":"races","step":1`, `"by":"teacher"`, `"delivered":3`,
		`"setup":{"lesson":"races","settings":`, `"objects":[{"resource":"configmaps","namespace":"default","name":"demo","status":201}]`)
	var first PushResult
	json.Unmarshal([]byte(a.body), &first)
	for _, s := range students {
		// The set-up changed the bookmark interval: the labs read it again.
		if m := s.read(); m.Type != "settings" {
			t.Fatalf("a student's first message after the set-up: %+v", m)
		}
		if m := s.read(); m.Type != "push" || m.Lesson != "races" || m.Step != 1 || m.ID != first.ID {
			t.Fatalf("a student's push: %+v", m)
		}
	}
	a = e.do("POST", "/s/class"+PushPath, cred{bearer: class.TeacherToken}, `{"lesson":"races","step":2}`)
	must(t, "the second push into the lesson", a, 200, `"step":2`, `"delivered":3`)
	if strings.Contains(a.body, `"setup"`) {
		t.Fatalf("the set-up ran again: %s", a.body)
	}
	var second PushResult
	json.Unmarshal([]byte(a.body), &second)
	if second.ID <= first.ID {
		t.Fatalf("push ids %d then %d", first.ID, second.ID)
	}
	for _, s := range students {
		if m := s.read(); m.Type != "push" || m.Step != 2 {
			t.Fatalf("a student's second push: %+v", m)
		}
	}
	// A browser that connects later is welcomed with the last push; GET
	// answers it too, to a student as well.
	late := e.channel("class", e.join(class, "Dee").Token)
	if m := late.read(); m.Type != "welcome" || m.Push == nil || m.Push.ID != second.ID || m.Push.Step != 2 {
		t.Fatalf("a late browser's welcome: %+v", m)
	}
	must(t, "GET push", e.do("GET", "/s/class"+PushPath, cred{bearer: e.join(class, "Eve").Token}, ""), 200,
		`"push":{"id":`, `"lesson":"races","step":2`)

	// The teacher's reset tells every browser; the next push sets the
	// lesson up again in the fresh store.
	must(t, "reset", e.do("POST", "/s/class/rvplay/v1/reset", cred{bearer: class.TeacherToken}, ""), 200)
	for _, s := range students {
		if m := s.read(); m.Type != "reset" {
			t.Fatalf("after the reset: %+v", m)
		}
	}
	must(t, "a push after the reset", e.do("POST", "/s/class"+PushPath, cred{bearer: class.TeacherToken}, `{"lesson":"races","step":1}`),
		200, `"setup":{`, `"status":201`)

	// The end of the session ends every channel, with a word.
	must(t, "end", e.do("DELETE", "/s/class", cred{bearer: class.TeacherToken}, ""), 200)
	for _, s := range students {
		s.until("the end", func(m message) bool { return m.Type == "ended" })
		s.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, _, err := s.conn.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
			t.Fatalf("after the end: %v", err)
		}
	}
}

// A change of the session's settings, however the teacher makes it, is
// announced to every browser of the class, students' too, who may not
// change them: their labs show the settings in effect. A request that
// changes nothing, or is refused, announces nothing.
func TestEveryBrowserLearnsThatTheSettingsChanged(t *testing.T) {
	e := newEnv(t, Options{Session: sessionWithLessons(t)})
	class := e.create("class")
	ada := e.join(class, "Ada")
	teacherCred, adaCred := cred{bearer: class.TeacherToken}, cred{bearer: ada.Token}
	student := e.channel("class", ada.Token)
	student.read() // welcome
	teacher := e.channel("class", class.TeacherToken)
	teacher.read()
	settingsOrPush := func(m message) bool { return m.Type == "settings" || m.Type == "push" }

	must(t, "the teacher's PUT", e.do("PUT", "/s/class/rvplay/v1/settings", teacherCred, `{"compactionInterval":"10s"}`), 200)
	if m := student.read(); m.Type != "settings" {
		t.Fatalf("the student's browser after the PUT: %+v", m)
	}
	if m := teacher.until("the announcement", settingsOrPush); m.Type != "settings" {
		t.Fatalf("the teacher's browser after the PUT: %+v", m)
	}
	must(t, "the student reads them", e.do("GET", "/s/class/rvplay/v1/settings", adaCred, ""), 200, `"compactionInterval":"10s"`)

	// Nothing changes: the same value again, a value out of bounds, the
	// student's own attempt. The push that follows is the next message.
	must(t, "the same value", e.do("PATCH", "/s/class/rvplay/v1/settings", teacherCred, `{"compactionInterval":"10s"}`), 200)
	must(t, "out of bounds", e.do("PUT", "/s/class/rvplay/v1/settings", teacherCred, `{"compactionInterval":"1ms"}`), 422)
	must(t, "the student's PUT", e.do("PUT", "/s/class/rvplay/v1/settings", adaCred, `{"compactionInterval":"20s"}`), 403)
	must(t, "a push", e.do("POST", "/s/class"+PushPath, teacherCred, `{"lesson":"races","step":1}`), 200, `"setup":{`)
	// The push's set-up sets the bookmark interval: announced, before the push.
	if m := student.read(); m.Type != "settings" {
		t.Fatalf("after the set-up: %+v", m)
	}
	if m := student.read(); m.Type != "push" {
		t.Fatalf("after the unchanged, refused and forbidden changes: %+v", m)
	}

	// An open session announces its changes too (everyone is its teacher).
	e.reg.CreateOpen("demo")
	lab := e.channel("demo", "")
	lab.read()
	must(t, "an open session's PATCH", e.do("PATCH", "/s/demo/rvplay/v1/settings", cred{}, `{"watchCacheDelay":"2s"}`), 200)
	if m := lab.until("the announcement", settingsOrPush); m.Type != "settings" {
		t.Fatalf("an open session's lab: %+v", m)
	}
}

func sessionWithLessons(t testing.TB) (o session.Options) {
	o.Lessons = testLessons(t)
	return o
}

// What a push must name, and who may push: the teacher of the session
// alone.
func TestPushRefusals(t *testing.T) {
	e := newEnv(t, Options{Session: sessionWithLessons(t)})
	class := e.create("class")
	other := e.create("other")
	ada := e.join(class, "Ada")
	push := `{"lesson":"races","step":1}`
	for _, c := range []struct {
		what  string
		cred  cred
		body  string
		want  int
		parts []string
	}{
		{"no token", cred{}, push, 401, []string{kube401}},
		{"another session's teacher", cred{bearer: other.TeacherToken}, push, 401, []string{kube401}},
		{"a student", cred{bearer: ada.Token}, push, 403, []string{`forbidden: User \"` + ada.ID + `\" cannot post path \"/rvplay/v1/push\"`}},
		{"a student's cookie", cred{cookie: ada.Token}, push, 403, []string{`"reason":"Forbidden"`}},
		{"an unknown lesson", cred{bearer: class.TeacherToken}, `{"lesson":"nope","step":1}`, 404, []string{`lessons.rvplay \"nope\" not found`}},
		{"a step the lesson does not have", cred{bearer: class.TeacherToken}, `{"lesson":"races","step":4}`, 422,
			[]string{`Push.rvplay \"races\" is invalid: step: Invalid value: \"4\": lesson \"races\" has steps 1 to 3 (0: its introduction)`}},
		{"no lesson", cred{bearer: class.TeacherToken}, `{"step":1}`, 400, []string{"lesson: Required value"}},
		{"a negative step", cred{bearer: class.TeacherToken}, `{"lesson":"races","step":-1}`, 400, []string{"step: Invalid value"}},
		{"not JSON", cred{bearer: class.TeacherToken}, `{"lesson":`, 400, []string{"invalid JSON"}},
		{"the teacher", cred{bearer: class.TeacherToken}, push, 200, []string{`"kind":"Push"`}},
	} {
		must(t, c.what, e.do("POST", "/s/class"+PushPath, c.cred, c.body), c.want, c.parts...)
	}
	must(t, "a method push does not take", e.do("PUT", "/s/class"+PushPath, cred{bearer: class.TeacherToken}, push), 405)
}

// The channel is the session's: it needs the session's credentials, a
// WebSocket, and a page of the server's own origin.
func TestChannelRefusals(t *testing.T) {
	e := newEnv(t, Options{})
	e.create("class")
	other := e.create("other")
	for _, token := range []string{"", other.TeacherToken} {
		_, resp, err := e.dialChannel("class", token, nil)
		if err == nil || resp == nil || resp.StatusCode != 401 {
			t.Fatalf("a channel with token %q: %v %v", token, err, resp)
		}
	}
	must(t, "a plain GET", e.do("GET", "/s/other"+ChannelPath, cred{bearer: other.TeacherToken}, ""), 400,
		"the session channel is a WebSocket")
	h := http.Header{"Authorization": {"Bearer " + other.TeacherToken}, "Origin": {"https://elsewhere.example"}}
	_, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(e.srv.URL, "http")+"/s/other"+ChannelPath, h)
	if err == nil || resp == nil || resp.StatusCode != 403 {
		t.Fatalf("a channel from another site's page: %v %v", err, resp)
	}
}

// A browser's bad messages get an error message back, and its channel goes
// on; one that sends more than its rate is disconnected.
func TestAChannelAnswersBadMessagesAndClosesAFloodingBrowser(t *testing.T) {
	e := newEnv(t, Options{})
	class := e.create("class")
	c := e.channel("class", e.join(class, "Ada").Token)
	c.read()
	c.send(`{"type":"chat","text":"hi"}`)
	if m := c.read(); m.Type != "error" || !strings.Contains(m.Message, `type: Unsupported value: "chat"`) {
		t.Fatalf("a message of another type: %+v", m)
	}
	c.send(`{"type":"presence","lesson":"../x","step":1}`)
	if m := c.read(); m.Type != "error" || !strings.Contains(m.Message, "lesson: Invalid value") {
		t.Fatalf("a bad lesson: %+v", m)
	}
	// However slowly a loaded machine reads them, these come faster than 20 a
	// second.
	for range channelBurst + 200 {
		if err := c.conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"presence"}`)); err != nil {
			break
		}
	}
	c.until("the flood's error", func(m message) bool { return m.Type == "error" && strings.Contains(m.Message, "20 messages a second") })
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := c.conn.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Fatalf("after the flood: %v", err)
	}
}

// A message over the channel's read limit closes that browser's
// connection (1009, gorilla/websocket's "message too big"); the others
// carry on.
func TestAMessageOverTheReadLimitClosesOnlyThatConnection(t *testing.T) {
	e := newEnv(t, Options{Session: sessionWithLessons(t)})
	class := e.create("class")
	big, small := e.channel("class", e.join(class, "Ada").Token), e.channel("class", e.join(class, "Bob").Token)
	big.read()
	small.read()
	big.send(`{"type":"presence","lesson":"` + strings.Repeat("a", channelReadLimit) + `"}`)
	big.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := big.conn.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
		t.Fatalf("the browser that sent too much: %v", err)
	}
	// The server lets go of it once its writer has finished.
	cls, _ := e.reg.class("class")
	deadline := time.Now().Add(10 * time.Second)
	for cls.connections() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections left", cls.connections())
		}
		runtime.Gosched()
	}
	must(t, "push", e.do("POST", "/s/class"+PushPath, cred{bearer: class.TeacherToken}, `{"lesson":"races","step":1}`), 200, `"delivered":1`)
	small.until("the push", func(m message) bool { return m.Type == "push" })
}

// A browser that reads nothing holds up neither the teacher's pushes nor
// the other browsers: the messages it leaves unread pile up to its queue's
// bound, and then its connection is closed.
func TestASlowChannelReaderHoldsUpNobody(t *testing.T) {
	e := newEnv(t, Options{HTTP: httpapi.Options{WriteTimeout: time.Second}})
	class := e.create("class")
	// The slow browser's socket takes little and it never reads.
	tiny := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			c.(*net.TCPConn).SetReadBuffer(4 << 10)
		}
		return c, err
	}
	slow, _, err := e.dialChannel("class", e.join(class, "Slow").Token, tiny)
	if err != nil {
		t.Fatal(err)
	}
	const readers = 3
	type tally struct {
		mu sync.Mutex
		n  int
		ch chan struct{}
	}
	counts := make([]*tally, readers)
	for i := range readers {
		c := e.channel("class", e.join(class, "Fast").Token)
		c.read()
		counts[i] = &tally{ch: make(chan struct{}, 1)}
		go func(c *channel, t *tally) {
			for {
				if _, _, err := c.conn.ReadMessage(); err != nil {
					return
				}
				t.mu.Lock()
				t.n++
				t.mu.Unlock()
				select {
				case t.ch <- struct{}{}:
				default:
				}
			}
		}(c, counts[i])
	}
	cls, _ := e.reg.class("class")
	if cls.connections() != readers+1 {
		t.Fatalf("%d connections", cls.connections())
	}
	msg := []byte(`{"type":"push","filler":"` + strings.Repeat("x", 64<<10) + `"}`)
	sent := 0
	for cls.connections() == readers+1 {
		if sent == 100000 {
			t.Fatal("the slow browser was never disconnected")
		}
		if n := cls.broadcast(msg, nil); n < readers {
			t.Fatalf("broadcast %d reached %d browsers", sent, n)
		}
		sent++
		// The fast browsers keep up (their own queues never fill).
		for _, c := range counts {
			for {
				c.mu.Lock()
				n := c.n
				c.mu.Unlock()
				if n >= sent-channelQueue/2 {
					break
				}
				<-c.ch
			}
		}
	}
	for _, c := range counts {
		for {
			c.mu.Lock()
			n := c.n
			c.mu.Unlock()
			if n == sent {
				break
			}
			<-c.ch
		}
	}
	t.Logf("the slow browser was disconnected after %d messages of 64 KiB", sent)
	slow.conn.Close()
}

// A class of 200 on one session: each browser's channel is welcomed, the
// teacher's roster lists them all connected, and a push reaches every one.
func TestAClassOf200OnOneChannel(t *testing.T) {
	e := newEnv(t, Options{Session: sessionWithLessons(t)})
	class := e.create("class")
	const n = 200
	students := make([]*channel, n)
	for i := range n {
		students[i] = e.channel("class", e.join(class, "s"+strconv.Itoa(i)).Token)
	}
	for _, s := range students {
		if m := s.read(); m.Type != "welcome" {
			t.Fatalf("welcome: %+v", m)
		}
	}
	teacher := e.channel("class", class.TeacherToken)
	teacher.until("a roster of 200 connected", func(m message) bool {
		connected := 0
		for _, p := range m.People {
			if p.Role == "student" && p.Connections == 1 {
				connected++
			}
		}
		return m.Type == "roster" && connected == n
	})
	must(t, "push", e.do("POST", "/s/class"+PushPath, cred{bearer: class.TeacherToken}, `{"lesson":"races","step":2}`), 200, `"delivered":200`)
	for _, s := range students {
		// (after the set-up's change of the settings)
		if m := s.until("the push", func(m message) bool { return m.Type == "push" }); m.Step != 2 {
			t.Fatalf("push: %+v", m)
		}
	}
}

// notDashboards are the channels of session "class" that get none of the
// dashboard's messages: the teacher's lab (no ?roster=1) and a student who
// asks for the roster (Nosy, who joins).
func notDashboards(e *env, class Created) (lab, nosy *channel) {
	e.t.Helper()
	lab, _, err := e.dialChannel("class", class.TeacherToken, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	nosy, _, err = e.dialChannel("class/rvplay/v1/channel?roster=1", e.join(class, "Nosy").Token, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return lab, nosy
}

// The roster is the dashboard's (a teacher's channel with ?roster=1): a
// teacher's lab, and a student who asks, get none.
func TestOnlyTheDashboardFollowsTheRoster(t *testing.T) {
	e := newEnv(t, Options{})
	class := e.create("class")
	ada := e.join(class, "Ada")
	lab, nosy := notDashboards(e, class)
	dashboard := e.channel("class", class.TeacherToken)
	for _, c := range []*channel{lab, nosy, dashboard} {
		c.read() // welcome
	}
	student := e.channel("class", ada.Token)
	student.read()
	student.send(`{"type":"presence","lesson":"races","step":1}`)
	dashboard.until("Ada's presence", func(m message) bool { p, _ := personOf(m.People, ada.ID); return p.Step == 1 })
	must(t, "reset", e.do("POST", "/s/class/rvplay/v1/reset", cred{bearer: class.TeacherToken}, ""), 200)
	for _, c := range []*channel{lab, nosy} {
		if m := c.read(); m.Type != "reset" {
			t.Fatalf("before the reset: %+v", m)
		}
	}
}

// A new join code goes to the teacher's dashboards at once (the one on the
// projector was showing the code that admits nobody any more), and to no
// other browser: a teacher's lab, a student's, a student asking for the
// roster.
func TestANewJoinCodeReachesTheTeachersDashboardsOnly(t *testing.T) {
	e := newEnv(t, Options{})
	class := e.create("class")
	lab, nosy := notDashboards(e, class)
	projector, laptop := e.channel("class", class.TeacherToken), e.channel("class", class.TeacherToken)
	student := e.channel("class", e.join(class, "Ada").Token)
	for _, c := range []*channel{lab, nosy, projector, laptop, student} {
		c.read() // welcome
	}
	a := e.do("POST", "/s/class"+JoinCodePath, cred{bearer: class.TeacherToken}, "")
	must(t, "a new join code", a, 201)
	var renewed NewJoinCode
	if err := json.Unmarshal([]byte(a.body), &renewed); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*channel{projector, laptop} {
		if m := d.until("the new join code", func(m message) bool { return m.Type == "joincode" }); m.JoinCode != renewed.JoinCode {
			t.Fatalf("a dashboard got %q, want %q", m.JoinCode, renewed.JoinCode)
		}
	}
	must(t, "reset", e.do("POST", "/s/class/rvplay/v1/reset", cred{bearer: class.TeacherToken}, ""), 200)
	for _, c := range []*channel{lab, nosy, student} {
		if m := c.until("the reset", func(m message) bool { return m.Type != "roster" }); m.Type != "reset" || m.JoinCode != "" {
			t.Fatalf("before the reset: %+v", m)
		}
	}
}
