package classroom

import (
	"encoding/json"

	"github.com/rvplay/rvplay/engine/session"
)

// A class's session settings outlive the session's time in memory: the
// settings the teacher of a guarded session leaves (from the dashboard,
// the lab's settings, or a lesson's set-up) are stored, and the session,
// loaded again (after it was unloaded when idle, or the server restarted),
// takes them back instead of starting again from the server's flags. A
// reset keeps them. Open sessions keep theirs in memory only, as before.

// restoreSettings gives s, just loaded, the settings stored for session
// name. A stored value this server no longer accepts (a bound changed) is
// left out, with a log line, and the flags' value stays.
func (r *Registry) restoreSettings(name string, s *session.Session) error {
	if info, ok := r.Lookup(name); !ok || !info.Guarded {
		return nil
	}
	stored, err := r.store.ClassSettings(name)
	if err != nil || stored == nil {
		return err
	}
	if _, err := s.UpdateSettings(func(cur session.Settings) (session.Settings, error) { return cur.Merge(stored) }); err != nil {
		r.opts.Logger.Error("the class's stored settings were not applied", "session", name, "settings", string(stored), "err", err)
	}
	if c, ok := r.class(name); ok {
		c.settings.with(s, func() string { return "" }, func(saved *string) { *saved = string(stored) })
	}
	return nil
}

// keepSettings follows a request or a push that may have changed the
// settings of session name (s, whose settings were before): a guarded
// session's are stored, and a change, on any session, is announced on
// the channel so that every lab shows the settings in effect.
func (r *Registry) keepSettings(name string, s *session.Session, before session.Settings) {
	r.saveSettings(name, s)
	if s.Settings() == before {
		return
	}
	if c, ok := r.class(name); ok {
		c.settingsChanged()
	}
}

// saveSettings stores s's settings if they differ from what is stored.
func (r *Registry) saveSettings(name string, s *session.Session) {
	info, known := r.Lookup(name)
	c, ok := r.class(name)
	if !known || !ok || !info.Guarded {
		return
	}
	now, err := json.Marshal(s.Settings())
	if err != nil {
		return
	}
	c.settings.with(s, func() string { return "" }, func(saved *string) {
		if *saved == string(now) {
			return
		}
		if err := r.store.SetClassSettings(name, now); err != nil {
			r.opts.Logger.Error("storing the class's settings failed", "session", name, "err", err)
			return
		}
		*saved = string(now)
	})
}
