package stress

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
)

// noSpace is etcd's answer to a write beyond its quota.
const noSpace = "etcdserver: mvcc: database space exceeded"

// Attack 3: filling a session past its quota and the server past its
// memory budget. Issue 10 wrote 628 MB in 20 s and found 665 MB of live
// heap: every current value stays in RAM. Now a session holds at most
// --quota-backend-bytes of records (a put beyond raises etcd's NOSPACE
// alarm) and --max-keys-per-session keys, and the key indexes of all
// loaded sessions at most --memory-budget together; the refused writes get
// etcd's error (kube's quota wording on Kubernetes paths), reads and
// deletes go on, and a full session is recovered as a full etcd is.
func TestAttack03QuotaAndMemoryBudget(t *testing.T) {
	quota := scaled[int64](16<<20, 64<<20) // the default in full
	budget := scaled[int64](64<<20, 512<<20)
	maxKeys := scaled(2000, 100000) // the default in full
	sessions := int(budget/quota) + 1
	flags := []string{
		fmt.Sprint("--quota-backend-bytes=", quota),
		fmt.Sprint("--memory-budget=", budget),
		fmt.Sprint("--max-keys-per-session=", maxKeys),
		"--session", "keys",
	}
	for i := range sessions {
		flags = append(flags, "--session", fmt.Sprint("fill-", i))
	}
	a := startAttack(t, "03 quota and memory budget", Bounds{
		// The indexes hold up to the budget, live; SQLite's caches and the
		// bodies being decoded come on top, about as much again.
		Live:       budget,
		RssAnon:    budget + 64<<20,
		Goroutines: 64,
	}, flags...)
	a.begin()
	session := func(name string) string { return a.srv.URL + "/s/" + name }

	// The key cap: small puts until one is refused.
	keys := fillKeys(t, session("keys"), maxKeys)
	if keys != maxKeys {
		t.Errorf("%d keys stored before the first refusal, want the cap %d", keys, maxKeys)
	}

	// One session to its quota: NOSPACE is raised there.
	first := fillSession(t, session("fill-0"), "fill-0")
	if !strings.Contains(first.refusal, noSpace) {
		t.Fatalf("filling fill-0: refused with %q, want %q", first.refusal, noSpace)
	}
	if alarms := alarmList(t, session("fill-0")); alarms != "NOSPACE" {
		t.Errorf("fill-0's alarms after its quota: %q, want NOSPACE", alarms)
	}
	// Kubernetes paths say it in kube's words.
	status, b, err := post(attacker, session("fill-0")+"/api/v1/namespaces/default/configmaps",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"over"},"data":{"a":"1"}}`)
	if st := decodeStatus(b); err != nil || status != http.StatusForbidden || st.Kind != "Status" || !strings.Contains(st.Message, "exceeded quota") {
		t.Errorf("a ConfigMap create in the full session: %d %s %v, want 403 Forbidden, exceeded quota", status, b, err)
	}

	// The others at once, until the server's budget refuses them.
	fills := make([]fillResult, sessions)
	fills[0] = first
	var wg sync.WaitGroup
	for i := 1; i < sessions; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fills[i] = fillSession(t, session(fmt.Sprint("fill-", i)), fmt.Sprint("fill-", i))
		}()
	}
	wg.Wait()
	var stored int64
	for i, f := range fills {
		stored += f.bytes
		if i > 0 && !strings.Contains(f.refusal, noSpace) {
			t.Errorf("fill-%d: refused with %q, want %q", i, f.refusal, noSpace)
		}
	}
	if stored > budget {
		t.Errorf("the sessions' values add up to %s, past the memory budget %s", mib(stored), mib(budget))
	}
	// A session refused by the budget has no alarm: the budget is the
	// server's, not the session's.
	refusedByBudget := 0
	for i := 1; i < sessions; i++ {
		if alarmList(t, session(fmt.Sprint("fill-", i))) == "" {
			refusedByBudget++
		}
	}
	if refusedByBudget == 0 {
		t.Errorf("no session was refused by the memory budget before its quota: %v", fills)
	}
	before := dbSize(a.srv.DBPath)

	// Every write the attacker was acknowledged is there.
	for i, f := range fills {
		checkAcked(t, session(fmt.Sprint("fill-", i)), "fill/", f.acked)
	}

	// fill-0 is recovered as a full etcd is, which gives room back to the
	// budget too.
	base := session("fill-0")
	mustPost(t, attacker, base+"/v3/kv/deleterange", fmt.Sprintf(`{"key":%q,"range_end":%q}`, b64("fill/"), b64(prefixEnd("fill/"))))
	mustPost(t, attacker, base+"/v3/kv/compaction", fmt.Sprintf(`{"revision":"%d","physical":true}`, revision(t, base)))
	mustPost(t, attacker, base+"/v3/maintenance/defragment", `{}`)
	mustPost(t, attacker, base+"/v3/maintenance/alarm", `{"action":"DEACTIVATE","memberID":"`+memberID(t, base)+`","alarm":"NOSPACE"}`)
	mustPost(t, attacker, base+"/v3/kv/put", putRequest("after", "recovered"))
	mustPost(t, attacker, a.Calm+"/v3/kv/put", putRequest("calm-after", "the budget has room again"))
	a.note("%d keys (the cap); %d sessions filled %s of values against a %s budget and %s quotas, %d refused by the budget; database file %s, %s after fill-0's compaction",
		keys, sessions, mib(stored), mib(budget), mib(quota), refusedByBudget, mib(before), mib(dbSize(a.srv.DBPath)))
	a.end()
}

// fillKeys puts keys of one byte in txns of 128 until one is refused, and
// returns how many the session holds.
func fillKeys(t *testing.T, base string, limit int) int {
	t.Helper()
	n := 0
	for {
		pairs := make([][2]string, 0, 128)
		for j := range 128 {
			pairs = append(pairs, [2]string{fmt.Sprintf("k/%07d", n+j), "v"})
		}
		status, b, err := post(attacker, base+"/v3/kv/txn", putsTxn(pairs))
		if err != nil {
			t.Fatal(err)
		}
		if status != 200 {
			if e := decodeEtcdError(b); e.Error != noSpace {
				t.Fatalf("a txn past the key cap: %d %s", status, b)
			}
			break
		}
		n += len(pairs)
		if n > 2*limit {
			t.Fatalf("%d keys stored, the cap is %d", n, limit)
		}
	}
	// The last txn did not fit whole: the rest of the room is taken one
	// key at a time.
	for {
		status, b, err := post(attacker, base+"/v3/kv/put", putRequest(fmt.Sprintf("k/%07d", n), "v"))
		if err != nil {
			t.Fatal(err)
		}
		if status != 200 {
			if e := decodeEtcdError(b); e.Error != noSpace {
				t.Fatalf("a put past the key cap: %d %s", status, b)
			}
			return n
		}
		n++
	}
}

// fillResult is what one session took before it refused.
type fillResult struct {
	bytes   int64
	acked   map[string]string
	refusal string
}

func (f fillResult) String() string { return fmt.Sprintf("{%s, refused %q}", mib(f.bytes), f.refusal) }

// fillSession puts values of 32 KiB, 16 to a txn, until a txn is refused.
func fillSession(t *testing.T, base, name string) fillResult {
	const value, perTxn = 32 << 10, 16
	f := fillResult{acked: map[string]string{}}
	for i := 0; ; i++ {
		pairs := make([][2]string, perTxn)
		for j := range pairs {
			k := fmt.Sprintf("fill/%06d", i*perTxn+j)
			pairs[j] = [2]string{k, k + " of " + name + repeatBytes('x', value-len(k)-len(name)-4)}
		}
		status, b, err := post(attacker, base+"/v3/kv/txn", putsTxn(pairs))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return f
		}
		if status != 200 {
			f.refusal = decodeEtcdError(b).Error
			if f.refusal == "" {
				f.refusal = fmt.Sprintf("%d %s", status, b)
			}
			return f
		}
		for _, p := range pairs {
			f.acked[p[0]] = p[1]
			f.bytes += int64(len(p[1]))
		}
	}
}

// checkAcked reads every key with prefix and compares it with the writes
// that were acknowledged.
func checkAcked(t *testing.T, base, prefix string, acked map[string]string) {
	t.Helper()
	got, err := readAll(attacker, base, prefix)
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for k, v := range acked {
		if got[k] != v {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%s: %d of %d acknowledged writes are not readable", base, lost, len(acked))
	}
}

func alarmList(t *testing.T, base string) string {
	t.Helper()
	var r struct {
		Alarms []struct {
			Alarm string `json:"alarm"`
		} `json:"alarms"`
	}
	if err := json.Unmarshal(mustPost(t, attacker, base+"/v3/maintenance/alarm", `{"action":"GET"}`), &r); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range r.Alarms {
		names = append(names, a.Alarm)
	}
	return strings.Join(names, ",")
}

// revision is the session's current revision.
func revision(t *testing.T, base string) int64 {
	t.Helper()
	var r struct {
		Header struct {
			Revision int64 `json:"revision,string"`
		} `json:"header"`
	}
	if err := json.Unmarshal(mustPost(t, attacker, base+"/v3/kv/range", `{"key":"AA==","count_only":true}`), &r); err != nil {
		t.Fatal(err)
	}
	return r.Header.Revision
}

// memberID is the session's member id, which the alarm names.
func memberID(t *testing.T, base string) string {
	t.Helper()
	var r struct {
		Header struct {
			MemberID string `json:"member_id"`
		} `json:"header"`
	}
	if err := json.Unmarshal(mustPost(t, attacker, base+"/v3/maintenance/status", `{}`), &r); err != nil {
		t.Fatal(err)
	}
	return r.Header.MemberID
}

// dbSize is the size of the SQLite file with its write-ahead log.
func dbSize(path string) int64 {
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}
