package lesson

import (
	"context"
	"encoding/json"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
)

// setupUserAgent marks the set-up's own requests in the record.
const setupUserAgent = "rvplay-lesson-setup"

// SettingsPath is where a session takes its settings (PUT).
const SettingsPath = "/rvplay/v1/settings"

// SetupResult says what Setup did.
type SetupResult struct {
	Lesson string `json:"lesson"`
	// Settings is the status of PUT /rvplay/v1/settings (0: none sent).
	Settings int `json:"settings,omitempty"`
	// SettingsSkipped: the lesson has settings, and a student's set-up
	// left them to the teacher (whose push to the lesson applies them for
	// the class).
	SettingsSkipped bool `json:"settingsSkipped,omitempty"`
	// Objects lists each object with the status of its create (409: it
	// was there already and is left as it is).
	Objects []SetupObject `json:"objects,omitempty"`
	// Revision is the store's revision afterwards; Seq the newest
	// exchange in the record (Since for the first step).
	Revision int64 `json:"revision"`
	Seq      int64 `json:"seq"`
}

// SetupObject is one object Setup created.
type SetupObject struct {
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Status    int    `json:"status"`
	Message   string `json:"message,omitempty"`
}

// Setup applies the lesson's settings and creates its objects through the
// session's own APIs, as the principal in ctx. An object that exists
// already is left alone (on a shared session someone else may be using
// it); the lab starts a lesson that asks for a fresh store on a new one.
//
// A student's set-up (on a class's guarded session) applies no settings:
// they are the whole class's, and the teacher's to change; the teacher's
// push to the lesson applies them once for everyone. It creates the
// objects that are missing, which a student may do anyway.
//
// It first lists the namespaces, which makes a new session create those
// kube-apiserver creates when it starts (default, kube-system,
// kube-public, kube-node-lease: revisions 2 to 5). A lesson's first write
// then has the same revision whatever the lab did before, and the numbers
// in its texts hold.
func (s *Service) Setup(ctx context.Context, l *Lesson) *SetupResult {
	out := &SetupResult{Lesson: l.Slug}
	closeStream(s.Handler.Serve(ctx, &api.Request{Method: "GET", Path: "/api/v1/namespaces",
		Header: api.Header{"Accept": {"application/json"}, "User-Agent": {setupUserAgent}}}))
	before, after := splitSettings(l.Setup.Settings)
	student := len(l.Setup.Settings) > 0 && api.PrincipalFrom(ctx).Role == api.RoleStudent
	out.SettingsSkipped = student
	if !student {
		out.Settings = s.putSettings(ctx, before, 0)
	}
	for _, raw := range l.Setup.Objects {
		out.Objects = append(out.Objects, s.create(ctx, raw))
	}
	if !student {
		out.Settings = s.putSettings(ctx, after, out.Settings)
	}
	out.Revision = s.Store.Rev()
	out.Seq = lastSeq(s.record(""))
	return out
}

// splitSettings separates the watch cache's lag from a lesson's other
// settings. The others (the controllers paused, a bookmark interval) must
// hold while the objects are created; the lag is set after them, so that
// the set-up objects are in the lagging cache from the start and only what
// the learner writes lags behind: a learner who is quick to read "from the
// cache" gets a stale copy, as the lesson says, not a 404.
func splitSettings(raw json.RawMessage) (before, after json.RawMessage) {
	if len(raw) == 0 {
		return nil, nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return raw, nil // the settings API words the error
	}
	lag, ok := fields["watchCacheDelay"]
	if !ok {
		return raw, nil
	}
	delete(fields, "watchCacheDelay")
	if len(fields) > 0 {
		before, _ = json.Marshal(fields)
	}
	after, _ = json.Marshal(map[string]json.RawMessage{"watchCacheDelay": lag})
	return before, after
}

// putSettings sends settings (none: nothing) and returns the status to
// report: the first failure, else the last success.
func (s *Service) putSettings(ctx context.Context, settings json.RawMessage, prev int) int {
	if len(settings) == 0 {
		return prev
	}
	resp := s.Handler.Serve(ctx, &api.Request{Method: "PUT", Path: SettingsPath,
		Header: api.Header{"Content-Type": {"application/json"}}, Body: settings})
	closeStream(resp)
	if prev >= 300 {
		return prev
	}
	return resp.Status
}

func (s *Service) create(ctx context.Context, raw json.RawMessage) SetupObject {
	var o struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(raw, &o) // Parse checked it
	res := ResourceOfKind(o.APIVersion, o.Kind)
	so := SetupObject{Name: o.Metadata.Name}
	if res == nil {
		so.Status, so.Message = 404, "no resource serves "+o.APIVersion+" "+o.Kind
		return so
	}
	so.Resource = res.Resource
	if res.Namespaced {
		so.Namespace = o.Metadata.Namespace
		if so.Namespace == "" {
			so.Namespace = "default"
		}
	}
	path := "/api/" + res.Version
	if res.Group != "" {
		path = "/apis/" + res.Group + "/" + res.Version
	}
	if so.Namespace != "" {
		path += "/namespaces/" + so.Namespace
	}
	path += "/" + res.Resource
	resp := s.Handler.Serve(ctx, &api.Request{Method: "POST", Path: path,
		Header: api.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}, "User-Agent": {setupUserAgent}}, Body: raw})
	so.Status = resp.Status
	if resp.Status >= 300 {
		var st struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(resp.Body, &st)
		so.Message = st.Message
	}
	closeStream(resp)
	return so
}

// ResourceOfKind finds the served resource of an apiVersion and kind.
func ResourceOfKind(apiVersion, kind string) *kube.Resource {
	for _, r := range kube.Resources {
		if r.GroupVersion() == apiVersion && r.Kind == kind {
			return r
		}
	}
	return nil
}

func closeStream(resp *api.Response) {
	if resp != nil && resp.Stream != nil {
		resp.Stream.Close()
	}
}
