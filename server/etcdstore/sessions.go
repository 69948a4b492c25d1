package etcdstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/sqlite"
)

// DefaultRoot is where Sessions keeps everything on a cluster.
const DefaultRoot = "/rvplay/"

// Sessions keeps a server's sessions on an etcd cluster, for every replica
// that runs on it: each session's keys (a Store under Root+"kv/<name>/",
// its leases' marks under Root+"leases/<name>/") and the classroom's
// records about it, each under a key of its own so that two replicas
// writing at once never overwrite each other's:
//
//	<root>sessions/<name>                 its access (JSON)
//	<root>used/<name>                     when it was last used
//	<root>students/<name>/<id>            a student (JSON)
//	<root>progress/<name>/<who>/<lesson>/<step>   a passed step (JSON)
//	<root>findings/<name>/<detector>/<exchange>   a finding (JSON)
//	<root>settings/<name>                 the class's settings
//	<root>created/<name>/<key>            a student's key's first creation (a revision)
//	<root>joincodes/<name>                a join code just renewed, in clear, on a lease of 2 minutes (joincodes.go)
//
// Names are path-escaped, so that no prefix is another's. It is a
// classroom.Storage and classroom.Stores.
type Sessions struct {
	cli  *clientv3.Client
	root string
	// store shapes every session's Store (its prefixes are set here).
	store Options
}

// NewSessions returns the sessions under root (DefaultRoot when empty) of
// the cluster cli reaches; store shapes each session's Store.
func NewSessions(cli *clientv3.Client, root string, store Options) *Sessions {
	if root == "" {
		root = DefaultRoot
	}
	if store.RequestTimeout == 0 {
		store.RequestTimeout = DefaultRequestTimeout
	}
	return &Sessions{cli: cli, root: root, store: store}
}

func esc(s string) string { return url.PathEscape(s) }

func (s *Sessions) key(kind string, parts ...string) string {
	k := s.root + kind + "/"
	for i, p := range parts {
		if i > 0 {
			k += "/"
		}
		k += esc(p)
	}
	return k
}

// under is the prefix of every key of kind for session name.
func (s *Sessions) under(kind, name string) string { return s.key(kind, name) + "/" }

func (s *Sessions) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.store.RequestTimeout)
}

// exists is the compare that session name exists.
func (s *Sessions) exists(name string) clientv3.Cmp {
	return clientv3.Compare(clientv3.CreateRevision(s.key("sessions", name)), ">", 0)
}

// SessionStore opens the Store of session name.
func (s *Sessions) SessionStore(name string) (mvcc.KV, error) {
	opts := s.store
	opts.Prefix, opts.LeasePrefix = s.under("kv", name), s.under("leases", name)
	ctx, cancel := s.ctx()
	defer cancel()
	return Open(ctx, s.cli, opts)
}

// record is a session's access as kept: SessionInfo without what is kept
// apart.
type record struct {
	Guarded          bool      `json:"guarded,omitempty"`
	TeacherTokenHash []byte    `json:"teacherTokenHash,omitempty"`
	JoinCodeHash     []byte    `json:"joinCodeHash,omitempty"`
	CreatedAt        time.Time `json:"createdAt"`
}

// CreateSession creates the session of info, or fails with
// sqlite.ErrSessionExists.
func (s *Sessions) CreateSession(info sqlite.SessionInfo) error {
	rec, err := json.Marshal(record{info.Guarded, info.TeacherTokenHash, info.JoinCodeHash, info.CreatedAt.UTC()})
	if err != nil {
		return err
	}
	ops := []clientv3.Op{clientv3.OpPut(s.key("sessions", info.Name), string(rec))}
	if info.Guarded {
		ops = append(ops, clientv3.OpPut(s.key("used", info.Name), info.LastUsedAt.UTC().Format(time.RFC3339Nano)))
	}
	ctx, cancel := s.ctx()
	defer cancel()
	resp, err := s.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(s.key("sessions", info.Name)), "=", 0)).Then(ops...).Commit()
	if err != nil {
		return fmt.Errorf("etcd: create session %q: %w", info.Name, err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("etcd: create session %q: %w", info.Name, sqlite.ErrSessionExists)
	}
	return nil
}

// SetJoinCode replaces the join code hash in guarded session name's
// access record, if the record is still as it was read (else it reads it
// again): a session another replica ended meanwhile is not brought back
// as a record without its keys. sqlite.ErrNoSession if there is no
// guarded session of that name.
func (s *Sessions) SetJoinCode(name string, hash []byte) error {
	key := s.key("sessions", name)
	ctx, cancel := s.ctx()
	defer cancel()
	for {
		resp, err := s.cli.Get(ctx, key)
		if err != nil {
			return fmt.Errorf("etcd: set the join code of %q: %w", name, err)
		}
		var rec record
		if len(resp.Kvs) == 1 {
			if err := json.Unmarshal(resp.Kvs[0].Value, &rec); err != nil {
				return fmt.Errorf("etcd: session %s: %w", key, err)
			}
		}
		if !rec.Guarded {
			return fmt.Errorf("etcd: set the join code of %q: %w", name, sqlite.ErrNoSession)
		}
		rec.JoinCodeHash = hash
		put, err := s.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", resp.Kvs[0].ModRevision)).
			Then(clientv3.OpPut(key, jsonOf(rec))).Commit()
		if err != nil {
			return fmt.Errorf("etcd: set the join code of %q: %w", name, err)
		}
		if put.Succeeded {
			return nil
		}
	}
}

// putIn writes key=value if session name exists (sqlite.ErrNoSession
// otherwise); with onlyNew, a key that exists is kept as it is.
func (s *Sessions) putIn(name, what string, onlyNew bool, kvs ...[2]string) error {
	ctx, cancel := s.ctx()
	defer cancel()
	for _, kv := range kvs {
		cmps := []clientv3.Cmp{s.exists(name)}
		if onlyNew {
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(kv[0]), "=", 0))
		}
		resp, err := s.cli.Txn(ctx).If(cmps...).Then(clientv3.OpPut(kv[0], kv[1])).Else(clientv3.OpGet(s.key("sessions", name), clientv3.WithCountOnly())).Commit()
		if err != nil {
			return fmt.Errorf("etcd: add %s to %q: %w", what, name, err)
		}
		if !resp.Succeeded && resp.Responses[0].GetResponseRange().Count == 0 {
			return fmt.Errorf("etcd: add %s to %q: %w", what, name, sqlite.ErrNoSession)
		}
	}
	return nil
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs of strings, numbers and times
	}
	return string(b)
}

// AddStudent records a student of session name.
func (s *Sessions) AddStudent(name string, st sqlite.Student) error {
	return s.putIn(name, "student", false, [2]string{s.key("students", name, st.ID), jsonOf(st)})
}

// Touch records when sessions were last used (later times only matter:
// an older one never replaces a newer one another replica wrote).
func (s *Sessions) Touch(lastUsed map[string]time.Time) error {
	names := make([]string, 0, len(lastUsed))
	for n := range lastUsed {
		names = append(names, n)
	}
	slices.Sort(names)
	ctx, cancel := s.ctx()
	defer cancel()
	for _, n := range names {
		k := s.key("used", n)
		resp, err := s.cli.Get(ctx, k)
		if err != nil {
			return fmt.Errorf("etcd: touch sessions: %w", err)
		}
		if len(resp.Kvs) == 1 {
			if t, err := time.Parse(time.RFC3339Nano, string(resp.Kvs[0].Value)); err == nil && !t.Before(lastUsed[n]) {
				continue
			}
		}
		if err := s.putIn(n, "last use", false, [2]string{k, lastUsed[n].UTC().Format(time.RFC3339Nano)}); err != nil && !isNoSession(err) {
			return err
		}
	}
	return nil
}

func isNoSession(err error) bool {
	return err != nil && strings.Contains(err.Error(), sqlite.ErrNoSession.Error())
}

// DeleteSession deletes session name and everything of it, in one
// transaction.
func (s *Sessions) DeleteSession(name string) error {
	ops := []clientv3.Op{clientv3.OpDelete(s.key("sessions", name)), clientv3.OpDelete(s.key("used", name)),
		clientv3.OpDelete(s.key("settings", name)), clientv3.OpDelete(s.key("joincodes", name))}
	for _, kind := range []string{"students", "progress", "findings", "created", "kv", "leases"} {
		ops = append(ops, clientv3.OpDelete(s.under(kind, name), clientv3.WithPrefix()))
	}
	return s.inSession(name, "delete session", ops...)
}

// ResetSession deletes the session's keys and leases' marks, and the first
// creations of its students' keys with them, keeping who may use it and
// what the class achieved. On a cluster the revision goes on: it is the
// cluster's.
func (s *Sessions) ResetSession(name string) error {
	return s.inSession(name, "reset session",
		clientv3.OpDelete(s.under("kv", name), clientv3.WithPrefix()), clientv3.OpDelete(s.under("leases", name), clientv3.WithPrefix()),
		clientv3.OpDelete(s.under("created", name), clientv3.WithPrefix()))
}

// inSession runs ops in one transaction if session name exists.
func (s *Sessions) inSession(name, what string, ops ...clientv3.Op) error {
	ctx, cancel := s.ctx()
	defer cancel()
	resp, err := s.cli.Txn(ctx).If(s.exists(name)).Then(ops...).Commit()
	if err != nil {
		return fmt.Errorf("etcd: %s %q: %w", what, name, err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("etcd: %s %q: %w", what, name, sqlite.ErrNoSession)
	}
	return nil
}

// PurgeDeleted has nothing to finish: a deletion is one transaction.
func (s *Sessions) PurgeDeleted() error { return nil }

// SessionInfos lists every session, by name, with its students in the
// order they joined.
func (s *Sessions) SessionInfos() ([]sqlite.SessionInfo, error) {
	return s.infos("")
}

// SessionInfo reads session name.
func (s *Sessions) SessionInfo(name string) (sqlite.SessionInfo, bool, error) {
	infos, err := s.infos(name)
	if err != nil || len(infos) == 0 {
		return sqlite.SessionInfo{}, false, err
	}
	return infos[0], true, nil
}

// infos reads every session, or (name not empty) the one, in one
// revision of the cluster.
func (s *Sessions) infos(name string) ([]sqlite.SessionInfo, error) {
	sessionsKey, usedKey, studentsKey := s.root+"sessions/", s.root+"used/", s.root+"students/"
	one := []clientv3.OpOption{clientv3.WithPrefix()}
	if name != "" {
		sessionsKey, usedKey, studentsKey = s.key("sessions", name), s.key("used", name), s.under("students", name)
		one = nil
	}
	ctx, cancel := s.ctx()
	defer cancel()
	resp, err := s.cli.Txn(ctx).Then(clientv3.OpGet(sessionsKey, one...), clientv3.OpGet(usedKey, one...),
		clientv3.OpGet(studentsKey, clientv3.WithPrefix())).Commit()
	if err != nil {
		return nil, fmt.Errorf("etcd: sessions: %w", err)
	}
	out := []sqlite.SessionInfo{}
	byName := map[string]int{}
	nameOf := func(key []byte, prefix string) string {
		n, _, _ := strings.Cut(strings.TrimPrefix(string(key), prefix), "/")
		n, _ = url.PathUnescape(n)
		return n
	}
	for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
		var rec record
		if err := json.Unmarshal(kv.Value, &rec); err != nil {
			return nil, fmt.Errorf("etcd: session %s: %w", kv.Key, err)
		}
		n := nameOf(kv.Key, s.root+"sessions/")
		byName[n] = len(out)
		out = append(out, sqlite.SessionInfo{Name: n, Guarded: rec.Guarded, TeacherTokenHash: rec.TeacherTokenHash,
			JoinCodeHash: rec.JoinCodeHash, CreatedAt: rec.CreatedAt})
	}
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		if i, ok := byName[nameOf(kv.Key, s.root+"used/")]; ok {
			out[i].LastUsedAt, _ = time.Parse(time.RFC3339Nano, string(kv.Value))
		}
	}
	for _, kv := range resp.Responses[2].GetResponseRange().Kvs {
		var st sqlite.Student
		if err := json.Unmarshal(kv.Value, &st); err != nil {
			return nil, fmt.Errorf("etcd: student %s: %w", kv.Key, err)
		}
		if i, ok := byName[nameOf(kv.Key, s.root+"students/")]; ok {
			out[i].Students = append(out[i].Students, st)
		}
	}
	for i := range out {
		slices.SortFunc(out[i].Students, func(a, b sqlite.Student) int {
			return cmp.Or(a.JoinedAt.Compare(b.JoinedAt), cmp.Compare(a.ID, b.ID))
		})
	}
	slices.SortFunc(out, func(a, b sqlite.SessionInfo) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// list reads every value under prefix.
func (s *Sessions) list(prefix string) ([][]byte, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	resp, err := s.cli.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(resp.Kvs))
	for i, kv := range resp.Kvs {
		out[i] = kv.Value
	}
	return out, nil
}

// ClassProgress lists the passed steps of session name, by principal,
// lesson and step.
func (s *Sessions) ClassProgress(name string) ([]sqlite.PassedStep, error) {
	vals, err := s.list(s.under("progress", name))
	if err != nil {
		return nil, fmt.Errorf("etcd: class progress of %q: %w", name, err)
	}
	out := []sqlite.PassedStep{}
	for _, v := range vals {
		var ps sqlite.PassedStep
		if err := json.Unmarshal(v, &ps); err != nil {
			return nil, fmt.Errorf("etcd: class progress of %q: %w", name, err)
		}
		out = append(out, ps)
	}
	slices.SortFunc(out, func(a, b sqlite.PassedStep) int {
		return cmp.Or(cmp.Compare(a.Principal, b.Principal), cmp.Compare(a.Lesson, b.Lesson), cmp.Compare(a.Step, b.Step))
	})
	return out, nil
}

// AddPassedSteps records passed steps of session name; a step passed
// before keeps its first time.
func (s *Sessions) AddPassedSteps(name string, steps []sqlite.PassedStep) error {
	kvs := make([][2]string, len(steps))
	for i, st := range steps {
		kvs[i] = [2]string{s.key("progress", name, st.Principal, st.Lesson, strconv.Itoa(st.Step)), jsonOf(st)}
	}
	return s.putIn(name, "passed steps", true, kvs...)
}

// ClassFindingCounts counts the findings of session name by principal,
// lesson and detector.
func (s *Sessions) ClassFindingCounts(name string) ([]sqlite.FindingCount, error) {
	vals, err := s.list(s.under("findings", name))
	if err != nil {
		return nil, fmt.Errorf("etcd: class findings of %q: %w", name, err)
	}
	counts := map[sqlite.FindingCount]int{}
	for _, v := range vals {
		var f sqlite.Finding
		if err := json.Unmarshal(v, &f); err != nil {
			return nil, fmt.Errorf("etcd: class findings of %q: %w", name, err)
		}
		counts[sqlite.FindingCount{Principal: f.Principal, Lesson: f.Lesson, Detector: f.Detector}]++
	}
	out := []sqlite.FindingCount{}
	for c, n := range counts {
		c.N = n
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b sqlite.FindingCount) int {
		return cmp.Or(cmp.Compare(a.Principal, b.Principal), cmp.Compare(a.Lesson, b.Lesson), cmp.Compare(a.Detector, b.Detector))
	})
	return out, nil
}

// AddFindings records findings of session name, each (detector, exchange)
// once.
func (s *Sessions) AddFindings(name string, findings []sqlite.Finding) error {
	kvs := make([][2]string, len(findings))
	for i, f := range findings {
		kvs[i] = [2]string{s.key("findings", name, f.Detector, f.Exchange), jsonOf(f)}
	}
	return s.putIn(name, "findings", true, kvs...)
}

// ClassSettings reads the class settings of session name (nil: none).
func (s *Sessions) ClassSettings(name string) ([]byte, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	resp, err := s.cli.Get(ctx, s.key("settings", name))
	if err != nil {
		return nil, fmt.Errorf("etcd: class settings of %q: %w", name, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, nil
	}
	return resp.Kvs[0].Value, nil
}

// SetClassSettings records the class settings of session name.
func (s *Sessions) SetClassSettings(name string, settings []byte) error {
	return s.putIn(name, "settings", false, [2]string{s.key("settings", name), string(settings)})
}

// ClassFirstCreations reads the first creations of session name's
// students' keys.
func (s *Sessions) ClassFirstCreations(name string) (map[string]int64, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	prefix := s.under("created", name)
	resp, err := s.cli.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("etcd: first creations of %q: %w", name, err)
	}
	out := map[string]int64{}
	for _, kv := range resp.Kvs {
		key, err := url.PathUnescape(strings.TrimPrefix(string(kv.Key), prefix))
		if err != nil {
			return nil, fmt.Errorf("etcd: first creations of %q: %w", name, err)
		}
		if out[key], err = strconv.ParseInt(string(kv.Value), 10, 64); err != nil {
			return nil, fmt.Errorf("etcd: first creations of %q: %w", name, err)
		}
	}
	return out, nil
}

// AddFirstCreation records the first creation of a student's key in
// session name; one recorded already keeps its revision.
func (s *Sessions) AddFirstCreation(name, key string, rev int64) error {
	return s.putIn(name, "a first creation", true, [2]string{s.key("created", name, key), strconv.FormatInt(rev, 10)})
}

// WatchEnded calls ended, from a goroutine of its own, with the name of
// each session deleted from the cluster (ended, by whichever replica)
// after WatchEnded returned, in the order of the cluster's revisions,
// until ctx ends: a replica learns at once that another ended a session,
// rather than at its next sweep. The sweep finds what a compaction cut
// from the watch (see follow).
func (s *Sessions) WatchEnded(ctx context.Context, ended func(name string)) {
	prefix := s.root + "sessions/"
	s.follow(ctx, prefix, clientv3.WithFilterPut(), func(ev *clientv3.Event) {
		if name, err := url.PathUnescape(strings.TrimPrefix(string(ev.Kv.Key), prefix)); err == nil && ev.Type == clientv3.EventTypeDelete {
			ended(name)
		}
	})
}

// follow calls each, from a goroutine of its own, with each event under
// prefix (filter leaves out puts or deletes) after follow returned, in
// the order of the cluster's revisions, until ctx ends. A watch the
// cluster cuts is started again where it stopped, or from the compaction
// that cut it: what was compacted away is not told, and what follows
// reads what it needs of the cluster's state some other way.
func (s *Sessions) follow(ctx context.Context, prefix string, filter clientv3.OpOption, each func(*clientv3.Event)) {
	var next int64 // 0: from when the watch starts, if the cluster did not answer
	if resp, err := s.cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly()); err == nil {
		next = resp.Header.Revision + 1
	}
	go func() {
		for ctx.Err() == nil {
			opts := []clientv3.OpOption{clientv3.WithPrefix(), filter}
			if next > 0 {
				opts = append(opts, clientv3.WithRev(next))
			}
			for resp := range s.cli.Watch(ctx, prefix, opts...) {
				if resp.CompactRevision > 0 {
					next = resp.CompactRevision
				} else if resp.Header.Revision > 0 {
					next = resp.Header.Revision + 1
				}
				for _, ev := range resp.Events {
					each(ev)
				}
			}
			// The client ends a watch only for a reason of the cluster's
			// (a compaction, a cancellation): no busy loop on a cluster
			// that keeps refusing.
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
}

// Check reads from the cluster, for the server's readiness.
func (s *Sessions) Check(ctx context.Context) error {
	_, err := s.cli.Get(ctx, s.root+"sessions/", clientv3.WithCountOnly())
	return err
}
