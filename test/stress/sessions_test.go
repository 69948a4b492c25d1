package stress

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// idAlphabet is what an unguessable session id is drawn from (RFC 4648's
// base32 in lower case), idLength how many of them: 80 bits.
const (
	idAlphabet = "abcdefghijklmnopqrstuvwxyz234567"
	idLength   = 16
)

// createdSession is POST /sessions' answer.
type createdSession struct {
	ID           string `json:"id"`
	TeacherToken string `json:"teacherToken"`
}

// Attack 8: creating sessions in a loop. Issue 10's four clients created
// 16,746 sessions in 20 s, each holding a goroutine forever, none of them
// deletable, their names squattable. Now a session is loaded only while
// used (an idle one holds no goroutine), the server holds at most
// --max-sessions, a session without a name gets an unguessable id, and
// its teacher may delete it.
func TestAttack08SessionsInALoop(t *testing.T) {
	maxSessions := scaled(200, 1000) // the default in full
	const clients = 4
	a := startAttack(t, "08 sessions in a loop", Bounds{RssAnon: 64 << 20, Goroutines: 2*clients + 32},
		fmt.Sprint("--max-sessions=", maxSessions))
	a.begin()

	var mu sync.Mutex
	var created []createdSession
	answers := map[int]int{}
	clientAt := make([]*http.Client, clients)
	for c := range clientAt {
		clientAt[c] = clientFrom(fmt.Sprint("127.0.0.", 3+c), 30*time.Second)
	}
	_, errs := repeatFor(scaled(4*time.Second, 20*time.Second), clients, func(c, _ int) error {
		status, b, err := post(clientAt[c], a.srv.URL+"/sessions", "")
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		answers[status]++
		switch status {
		case http.StatusCreated:
			var s createdSession
			if err := json.Unmarshal(b, &s); err != nil {
				return err
			}
			created = append(created, s)
		case http.StatusForbidden, http.StatusTooManyRequests:
		default:
			return fmt.Errorf("POST /sessions: %d %s", status, b)
		}
		return nil
	})
	for _, err := range errs {
		t.Error(err)
	}
	// At most --max-sessions (the two open ones count), and the cap was
	// reached.
	if n := len(created) + 2; n > maxSessions || answers[http.StatusForbidden] == 0 {
		t.Errorf("%d sessions held with --max-sessions=%d, answers %v", n, maxSessions, answers)
	}
	ids := map[string]bool{}
	for _, s := range created {
		if len(s.ID) != idLength || strings.Trim(s.ID, idAlphabet) != "" || ids[s.ID] || s.TeacherToken == "" {
			t.Fatalf("session id %q (token %t): want %d unguessable characters, each id once", s.ID, s.TeacherToken != "", idLength)
		}
		ids[s.ID] = true
	}

	// Idle, they hold no goroutine and little memory.
	for _, c := range clientAt {
		c.CloseIdleConnections()
	}
	a.settle(10*time.Second, 8)
	perSession := (a.probe(true).HeapInuse - a.base.HeapInuse) / int64(max(len(created), 1))
	if perSession > 64<<10 {
		t.Errorf("%d KiB of heap per idle session, want at most 64 KiB", perSession>>10)
	}

	// Their teachers end them, which makes room again.
	var next int
	_, errs = repeatFor(time.Minute, clients, func(c, _ int) error {
		mu.Lock()
		if next == len(created) {
			mu.Unlock()
			return errDone
		}
		s := created[next]
		next++
		mu.Unlock()
		req, _ := http.NewRequest(http.MethodDelete, a.srv.URL+"/s/"+s.ID, nil)
		req.Header.Set("Authorization", "Bearer "+s.TeacherToken)
		resp, err := clientAt[c].Do(req)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("DELETE /s/%s: %d %s", s.ID, resp.StatusCode, b)
		}
		return nil
	})
	for _, err := range errs {
		if err != errDone {
			t.Error(err)
		}
	}
	if next < len(created) {
		t.Errorf("%d of %d sessions deleted in a minute", next, len(created))
	}
	if status, err := get(attacker, a.srv.URL+"/s/"+created[0].ID+"/api/v1/namespaces"); err != nil || status != 404 {
		t.Errorf("a deleted session answers %d (%v), want 404", status, err)
	}
	if status, b, err := post(attacker, a.srv.URL+"/sessions", ""); err != nil || status != http.StatusCreated {
		t.Errorf("POST /sessions after the deletions: %d %s %v", status, b, err)
	}
	a.note("%d clients for %v: answers %v; %d B of heap per idle session; all deleted by their teachers",
		clients, scaled(4*time.Second, 20*time.Second), answers, perSession)
	a.end()
}

// errDone ends a repeatFor worker that has nothing left to do.
var errDone = errors.New("done")
