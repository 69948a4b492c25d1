//go:build !js

package sqlite

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rvplay/rvplay/engine/mvcc"
)

const crashChildEnv = "RVPLAY_SQLITE_CRASH_CHILD"

// TestAcknowledgedCommitsSurviveSIGKILL runs writers in a child process,
// which reports every Commit that returned, kills it with SIGKILL in the
// middle of its writes, and reopens the file: every acknowledged revision
// must be there, and each session's revisions must be gap-free (a commit is
// all or nothing).
func TestAcknowledgedCommitsSurviveSIGKILL(t *testing.T) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path)
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	const sessions, acksBeforeKill = 4, 400
	path := filepath.Join(t.TempDir(), "crash.db")
	acked := map[string]int64{}
	n := 0
	killChildAfter(t, "TestAcknowledgedCommitsSurviveSIGKILL", crashChildEnv, path, func(line string) bool {
		var s string
		var main int64
		if _, err := fmt.Sscanf(line, "%s %d", &s, &main); err != nil {
			t.Fatalf("child said %q", line)
		}
		acked[s] = max(acked[s], main)
		n++
		return n < acksBeforeKill
	})
	if len(acked) == 0 {
		t.Fatal("the child acknowledged nothing")
	}

	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var integrity string
	if err := db.rdb.QueryRow("PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("integrity_check after SIGKILL: %q, %v", integrity, err)
	}
	for s := range sessions {
		name := fmt.Sprint("s", s)
		got, _ := load(t, session(t, db, name))
		for i, r := range got {
			if want := int64(i + 2); r.Rev.Main != want || string(r.KV.Value) != fmt.Sprint(name, "@", want) {
				t.Fatalf("%s: record %d is %v %q: revisions must be 2, 3, 4... without gaps", name, i, r.Rev, r.KV.Value)
			}
		}
		var last int64 = 1
		if len(got) > 0 {
			last = got[len(got)-1].Rev.Main
		}
		if last < acked[name] {
			t.Errorf("%s: acknowledged revision %d, found only up to %d after SIGKILL", name, acked[name], last)
		}
		t.Logf("%s: acknowledged up to %d, found up to %d", name, acked[name], last)
	}
}

// crashChild commits to several sessions concurrently and prints each
// acknowledged commit, until it is killed (or its parent went away).
func crashChild(path string) {
	db, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	report := lineReporter()
	var wg sync.WaitGroup
	for s := range 4 {
		name := fmt.Sprint("s", s)
		b, err := db.Session(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for main := int64(2); main < 1_000_000; main++ {
				rec := mvcc.Record{Rev: mvcc.Revision{Main: main}, KV: mvcc.KeyValue{
					Key: []byte("k"), Value: fmt.Appendf(nil, "%s@%d", name, main), CreateRevision: 2, ModRevision: main, Version: main - 1,
				}}
				if err := b.Commit([]mvcc.Record{rec}); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				report(fmt.Sprint(name, " ", main))
			}
		}()
	}
	wg.Wait()
	os.Exit(0)
}

const storeCrashChildEnv = "RVPLAY_SQLITE_STORE_CRASH_CHILD"

// TestAcknowledgedStoreWritesSurviveSIGKILL is the same proof one level
// up, through the Store's group commit: eight writers put concurrently on
// one session (their writes applied in memory in revision order, then
// committed together), the child reports each acknowledged put with its
// revision, and is killed in the middle of its writes. Reopened, the store
// holds every acknowledged revision with the value that was written, and
// nothing past the last revision it holds.
func TestAcknowledgedStoreWritesSurviveSIGKILL(t *testing.T) {
	if path := os.Getenv(storeCrashChildEnv); path != "" {
		storeCrashChild(path)
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	const acksBeforeKill = 600
	path := filepath.Join(t.TempDir(), "crash.db")
	type ack struct {
		key, value string
		rev        int64
	}
	var acks []ack
	perCommit := map[int]int{} // revisions in one backend Commit -> how many such commits
	killChildAfter(t, "TestAcknowledgedStoreWritesSurviveSIGKILL", storeCrashChildEnv, path, func(line string) bool {
		var a ack
		var n int
		if _, err := fmt.Sscanf(line, "commit %d", &n); err == nil {
			perCommit[n]++
			return true
		}
		if _, err := fmt.Sscanf(line, "%s %s %d", &a.key, &a.value, &a.rev); err != nil {
			t.Fatalf("child said %q", line)
		}
		acks = append(acks, a)
		return len(acks) < acksBeforeKill
	})
	if len(acks) == 0 {
		t.Fatal("the child acknowledged nothing")
	}
	t.Logf("revisions per backend commit -> commits, before the kill: %v", perCommit)

	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := mvcc.Open(session(t, db, "crash"), mvcc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var newest int64
	for _, a := range acks {
		newest = max(newest, a.rev)
		resp, err := s.Range(t.Context(), &mvcc.RangeRequest{Key: []byte(a.key), Revision: a.rev})
		if err != nil {
			t.Fatalf("%s at %d: %v", a.key, a.rev, err)
		}
		if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != a.value || resp.Kvs[0].ModRevision != a.rev {
			t.Fatalf("acknowledged %s=%s at revision %d; after SIGKILL the store has %v", a.key, a.value, a.rev, resp.Kvs)
		}
	}
	if s.Rev() < newest {
		t.Fatalf("the store is at revision %d after SIGKILL, below the acknowledged %d", s.Rev(), newest)
	}
	t.Logf("%d acknowledged puts up to revision %d; the store reopened at %d", len(acks), newest, s.Rev())
}

// storeCommitCounter tells the parent how many revisions each of the
// Store's commits carried.
type storeCommitCounter struct {
	mvcc.Backend
	report func(string)
}

func (c storeCommitCounter) Commit(records []mvcc.Record) error {
	revs := 0
	for i := range records {
		if i == 0 || records[i].Rev.Main != records[i-1].Rev.Main {
			revs++
		}
	}
	err := c.Backend.Commit(records)
	if err == nil {
		c.report(fmt.Sprint("commit ", revs))
	}
	return err
}

// storeCrashChild puts from eight goroutines on one store and prints each
// acknowledged put, until it is killed (or its parent went away).
func storeCrashChild(path string) {
	db, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	report := lineReporter()
	b, err := db.Session("crash")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	s, err := mvcc.Open(storeCommitCounter{b, report}, mvcc.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				key, value := fmt.Sprint("k", (g*7+i)%50), fmt.Sprint("g", g, "-", i)
				resp, err := s.Put(context.Background(), &mvcc.PutRequest{Key: []byte(key), Value: []byte(value)})
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				report(fmt.Sprint(key, " ", value, " ", resp.Header.Revision))
			}
		})
	}
	wg.Wait()
}

// killChildAfter runs the test named test again in a child process, with
// env set to path, hands each line the child prints to line until line
// returns false or the child stops printing, and then kills the child
// with SIGKILL.
func killChildAfter(t *testing.T, test, env, path string, line func(string) bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill() // SIGKILL (also when line fails the test)
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if !line(lines.Text()) {
			return
		}
	}
}

// lineReporter is a child's way to tell its parent what happened: each
// line is written out before the call returns, and the child exits once
// the parent is gone.
func lineReporter() func(string) {
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	return func(line string) {
		mu.Lock()
		fmt.Fprintln(w, line)
		err := w.Flush()
		mu.Unlock()
		if err != nil { // the parent is gone
			os.Exit(0)
		}
	}
}
