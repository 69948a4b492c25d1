package classroom

import (
	"context"

	"github.com/rvplay/rvplay/engine/sqlite"
)

// Several servers on one Stores storage (replicas on an etcd cluster)
// each hold the sessions they know in memory; a session created, or a
// student admitted, by another is learnt from storage when a request names
// it, and every sweep brings the whole list up to date, so that any
// replica serves any session and a session ended or expired on one ends
// on all within a sweep, or at once on storage that tells of it
// (EndedWatcher).

// discover learns session name from shared storage when this server does
// not know it, or (token not empty) does not know who holds token in it.
// A miss costs one read of storage; the client rate limit bounds them.
func (r *Registry) discover(name, token string) {
	st, ok := r.store.(Stores)
	if !ok || CheckName(name) != nil {
		return
	}
	r.mu.Lock()
	e := r.sessions[name]
	known := e != nil && (token == "" || !e.guarded)
	if e != nil && !known {
		_, known = e.principal(token)
	}
	known = known || r.closed
	r.mu.Unlock()
	if !known {
		r.learn(st, name)
	}
}

// relearn reads session name from shared storage (if the registry's is),
// known or not: a join is rare, and the client rate limit bounds the
// reads a guesser of codes causes.
func (r *Registry) relearn(name string) {
	if st, ok := r.store.(Stores); ok && CheckName(name) == nil {
		r.learn(st, name)
	}
}

// learn adds what st says of session name to what this server knows.
func (r *Registry) learn(st Stores, name string) {
	info, ok, err := st.SessionInfo(name)
	if err != nil {
		r.opts.Logger.Error("reading a session from storage failed", "session", name, "err", err)
		return
	}
	if !ok {
		return
	}
	r.mu.Lock()
	r.learnLocked(info)
	r.mu.Unlock()
}

// learnLocked adds what info says of a session to what this server knows:
// the session, its students, its join code, when it was last used.
func (r *Registry) learnLocked(info sqlite.SessionInfo) {
	e := r.sessions[info.Name]
	if e == nil {
		if !r.creating[info.Name] && !r.closed {
			r.sessions[info.Name] = newEntry(info)
		}
		return
	}
	if e.guarded && info.Guarded && len(info.JoinCodeHash) > 0 {
		e.joinCode = info.JoinCodeHash // another server may have renewed it
	}
	for _, st := range info.Students {
		if _, ok := e.joined[st.ID]; !ok {
			e.addStudent(st)
		}
	}
	if info.LastUsedAt.After(e.lastUsed) {
		e.lastUsed = info.LastUsedAt
	}
	if info.LastUsedAt.After(e.saved) {
		e.saved = info.LastUsedAt
	}
}

// refresh brings what this server knows up to date with shared storage:
// it learns every session and student there, and ends here (its streams
// end, as on the server that ended it) each session storage no longer has.
func (r *Registry) refresh(ctx context.Context) {
	_, ok := r.store.(Stores)
	if !ok {
		return
	}
	infos, err := r.store.SessionInfos()
	if err != nil {
		r.opts.Logger.Error("reading the sessions from storage failed", "err", err)
		return
	}
	there := map[string]bool{}
	r.mu.Lock()
	for _, info := range infos {
		there[info.Name] = true
		r.learnLocked(info)
	}
	var gone []string
	for name := range r.sessions {
		if !there[name] {
			gone = append(gone, name)
		}
	}
	r.mu.Unlock()
	for _, name := range gone {
		r.endedElsewhere(ctx, name)
	}
}

// FollowEnded ends here each session another server ends from now until
// ctx ends, as soon as storage tells of it (EndedWatcher: replicas on an
// etcd cluster), rather than at the next sweep; on other storage it does
// nothing.
func (r *Registry) FollowEnded(ctx context.Context) {
	if w, ok := r.store.(EndedWatcher); ok {
		own := context.WithValue(ctx, sweepKey{}, true) // the registry's own work
		w.WatchEnded(ctx, func(name string) { r.endedElsewhere(own, name) })
	}
}

// endedElsewhere ends here (its streams end, as on the server that ended
// it) session name, which another server ended, unless storage has it
// (again: one created since).
func (r *Registry) endedElsewhere(ctx context.Context, name string) {
	if _, there, err := r.store.(Stores).SessionInfo(name); err != nil || there {
		return
	}
	err := r.takeOffline(ctx, name, nil, true, "ended on another server", func() error { return nil })
	if err != nil && err != ErrNotFound && err != ErrClosed {
		r.opts.Logger.Error("ending a session ended elsewhere failed", "session", name, "err", err)
	}
}

// FollowJoinCodes shows on this server's teachers' dashboards each join
// code another server renews from now until ctx ends, as that server's
// own dashboards show it (JoinCodeAnnouncer: replicas on an etcd
// cluster); on other storage it does nothing.
func (r *Registry) FollowJoinCodes(ctx context.Context) {
	if a, ok := r.store.(JoinCodeAnnouncer); ok {
		a.WatchJoinCodes(ctx, r.relayJoinCode)
	}
}

// relayJoinCode tells the dashboards here of session name that its join
// code is now code, if storage says so: a notice whose code is not the
// one whose hash the session's record holds (one renewed again since, one
// that comes late or twice, one written by anyone but a server) is
// dropped, so that a dashboard never shows a code that admits nobody.
func (r *Registry) relayJoinCode(name, code string) {
	st, ok := r.store.(Stores)
	if !ok || CheckName(name) != nil {
		return
	}
	r.mu.Lock()
	var c *class
	if e := r.sessions[name]; e != nil {
		c = e.class
	}
	r.mu.Unlock()
	if c == nil {
		return // no browser of the class here: nobody to tell
	}
	info, there, err := st.SessionInfo(name)
	if err != nil {
		r.opts.Logger.Error("reading a session from storage failed", "session", name, "err", err)
		return
	}
	if !there || !info.Guarded || !sameHash(hashJoinCode(name, code), info.JoinCodeHash) {
		return
	}
	r.mu.Lock()
	r.learnLocked(info)
	r.mu.Unlock()
	c.joinCodeRenewed(code)
}
