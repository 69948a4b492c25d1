package etcdstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rvplay/rvplay/engine/sqlite"
	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/server/classroom"
	"github.com/rvplay/rvplay/server/etcdstore"
	"github.com/rvplay/rvplay/server/telemetry"
)

// A renewed join code is on the cluster in clear only under a lease of
// JoinCodeNoticeTTL, only for a session there is, and goes with its
// session; every watcher hears of each one put after it started, in order.
func TestAJoinCodeNoticeLivesOnAShortLease(t *testing.T) {
	cli := client(t, etcdtest.Start(t, etcdtest.Options{}).URL)
	s := etcdstore.NewSessions(cli, "", etcdstore.Options{})
	for _, name := range []string{"a", "b"} {
		if err := s.CreateSession(sqlite.SessionInfo{Name: name, Guarded: true}); err != nil {
			t.Fatal(err)
		}
	}
	watchCtx, stop := context.WithCancel(context.Background())
	defer stop()
	heard := make(chan string, 10)
	s.WatchJoinCodes(watchCtx, func(name, code string) { heard <- name + "=" + code })

	if err := s.AnnounceJoinCode("nope", "AAAA-BBBB"); !errors.Is(err, sqlite.ErrNoSession) {
		t.Fatalf("a notice for no session: %v, want ErrNoSession", err)
	}
	for _, n := range [][2]string{{"a", "CCCC-DDDD"}, {"b", "EEEE-FFFF"}, {"a", "GGGG-HHHH"}} {
		if err := s.AnnounceJoinCode(n[0], n[1]); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := cli.Get(ctx, "/rvplay/joincodes/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 2 || string(resp.Kvs[0].Value) != "GGGG-HHHH" {
		t.Fatalf("notices on the cluster: %v (one per session, the last)", resp.Kvs)
	}
	for _, kv := range resp.Kvs {
		ttl, err := cli.TimeToLive(ctx, clientv3.LeaseID(kv.Lease))
		if err != nil {
			t.Fatal(err)
		}
		if kv.Lease == 0 || ttl.GrantedTTL != int64(etcdstore.JoinCodeNoticeTTL/time.Second) || ttl.TTL <= 0 {
			t.Fatalf("%s: lease %x, granted %d s, left %d s: want its own lease of %v", kv.Key, kv.Lease, ttl.GrantedTTL, ttl.TTL, etcdstore.JoinCodeNoticeTTL)
		}
	}
	for _, want := range []string{"a=CCCC-DDDD", "b=EEEE-FFFF", "a=GGGG-HHHH"} {
		select {
		case got := <-heard:
			if got != want {
				t.Fatalf("heard %q, want %q", got, want)
			}
		case <-time.After(30 * time.Second): // only turns a hang into a failure
			t.Fatalf("not told %q", want)
		}
	}
	if err := s.DeleteSession("a"); err != nil {
		t.Fatal(err)
	}
	if resp, err := cli.Get(ctx, "/rvplay/joincodes/", clientv3.WithPrefix(), clientv3.WithKeysOnly()); err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Key) != "/rvplay/joincodes/b" {
		t.Fatalf("after a's end: %v, %v (its notice goes with it)", resp.Kvs, err)
	}
}

// dashboard is a session channel of a replica's: a teacher's with
// ?roster=1 is a dashboard.
type dashboard struct {
	t    *testing.T
	conn *websocket.Conn
}

type channelMessage struct {
	Type     string `json:"type"`
	JoinCode string `json:"joinCode"`
}

// channelOf dials session class's channel on the server at url with
// token (roster: as a dashboard) and reads its welcome.
func channelOf(t *testing.T, url, token string, roster bool) *dashboard {
	t.Helper()
	path := "/s/class" + classroom.ChannelPath
	if roster {
		path += "?roster=1"
	}
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(url, "http")+path, http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		t.Fatalf("channel: %v (%v)", err, resp)
	}
	t.Cleanup(func() { conn.Close() })
	d := &dashboard{t: t, conn: conn}
	if m := d.next(); m.Type != "welcome" {
		t.Fatalf("first on the channel: %+v", m)
	}
	return d
}

// next is the channel's next message but rosters; the deadline only turns
// a hang into a failure.
func (d *dashboard) next() channelMessage {
	d.t.Helper()
	for {
		d.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, b, err := d.conn.ReadMessage()
		if err != nil {
			d.t.Fatalf("reading the channel: %v", err)
		}
		var m channelMessage
		if err := json.Unmarshal(b, &m); err != nil {
			d.t.Fatalf("not JSON: %q", b)
		}
		if m.Type != "roster" {
			return m
		}
	}
}

func (d *dashboard) wantJoinCode(code string) {
	d.t.Helper()
	if m := d.next(); m.Type != "joincode" || m.JoinCode != code {
		d.t.Fatalf("the dashboard got %+v, want join code %q", m, code)
	}
}

// serve is replica r's HTTP API, as its server has it.
func serve(t *testing.T, r *classroom.Registry) string {
	srv := httptest.NewServer(telemetry.Handler(&classroom.Handler{Registry: r}, nil, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}

// A join code renewed on replica A shows on the teacher's dashboard that
// replica B serves (the projector's, behind a load balancer), as on A's:
// B relays the notice A put on the cluster once the session's record
// holds its hash. A stale or forged notice is not relayed, a student's
// channel on B gets nothing, and the old code admits nobody on either.
func TestANewJoinCodeShowsOnEveryReplicasDashboards(t *testing.T) {
	cli := client(t, etcdtest.Start(t, etcdtest.Options{}).URL)
	sessions := etcdstore.NewSessions(cli, "", etcdstore.Options{})
	a, b := replica(t, sessions), replica(t, etcdstore.NewSessions(cli, "", etcdstore.Options{}))
	following, stop := context.WithCancel(context.Background())
	defer stop()
	a.FollowJoinCodes(following)
	b.FollowJoinCodes(following)
	created, err := a.CreateGuarded("class")
	if err != nil {
		t.Fatal(err)
	}
	ada, err := b.Join(ctx, "class", created.JoinCode, "Ada")
	if err != nil {
		t.Fatal(err)
	}
	onA, onB := serve(t, a), serve(t, b)
	laptop, projector := channelOf(t, onA, created.TeacherToken, true), channelOf(t, onB, created.TeacherToken, true)
	student := channelOf(t, onB, ada.Token, true)

	code, err := a.NewJoinCode(ctx, "class")
	if err != nil {
		t.Fatal(err)
	}
	laptop.wantJoinCode(code)
	projector.wantJoinCode(code)
	for _, r := range []*classroom.Registry{a, b} {
		if _, err := r.Join(ctx, "class", created.JoinCode, "Eve"); err != classroom.ErrWrongCode {
			t.Fatalf("joining with the old code: %v, want ErrWrongCode", err)
		}
		if _, err := r.Join(ctx, "class", code, "Bo"); err != nil {
			t.Fatalf("joining with the new code: %v", err)
		}
	}

	// Notices of the old code and of one never given, then a renewal:
	// the dashboards' next code is the renewal's (the watch tells in the
	// cluster's order, and relays in it).
	for _, stale := range []string{created.JoinCode, "AAAA-BBBB"} {
		if err := sessions.AnnounceJoinCode("class", stale); err != nil {
			t.Fatal(err)
		}
	}
	again, err := a.NewJoinCode(ctx, "class")
	if err != nil {
		t.Fatal(err)
	}
	laptop.wantJoinCode(again)
	projector.wantJoinCode(again)

	// Whatever B relayed to the student's channel would come before the
	// reset B tells every browser of.
	if err := b.Reset(ctx, "class"); err != nil {
		t.Fatal(err)
	}
	if m := student.next(); m.Type != "reset" {
		t.Fatalf("the student's channel on B got %+v before the reset", m)
	}
}
