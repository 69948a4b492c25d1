package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Settings are the knobs of a session's time-driven behaviour. Each has
// kube-apiserver's value in a real cluster; a session's defaults are chosen
// so that each concept shows within a lesson's few minutes.
type Settings struct {
	// BookmarkInterval is how often a watch that allows bookmarks gets one.
	// kube-apiserver: about a minute. Default here: 10 s, so that a lesson
	// sees an idle watcher's resourceVersion move.
	BookmarkInterval time.Duration
	// CompactionInterval is how often the session compacts its history the
	// way kube-apiserver does (--etcd-compaction-interval, 5 minutes): each
	// tick records the revision in etcd's compact_rev_key and compacts to
	// the revision the previous tick recorded, so one interval of history
	// survives. Default: kube-apiserver's 5 minutes, from the session's
	// first Kubernetes request (a session used only through the etcd
	// gateway is a plain etcd, which compacts only when told). 0: off, a
	// session keeps its whole history, for time travel and reads at old
	// revisions; a lesson whose revision numbers a tick's write would
	// shift turns it off.
	CompactionInterval time.Duration
	// WatchCache serves Kubernetes watches, and the reads kube-apiserver
	// serves from it (resourceVersion "0", NotOlderThan, consistent lists
	// once it has caught up, the revisions it still holds), from one watch
	// cache per resource with kube-apiserver's window, messages ("too old
	// resource version: N (M)") and bookmarks (JSON "watchCache": "on" or
	// "off"). kube-apiserver: on (--watch-cache), and so here. Off is
	// kube-apiserver's --watch-cache=false, the etcd-level behaviour (a
	// compaction gives watches and reads their 410 at once) that the
	// lessons on compaction and bookmarks pin.
	WatchCache bool
	// WatchCacheDelay makes the watch cache lag this far behind the store:
	// its watches, bookmarks and resourceVersion "0" reads see each write
	// that much later (a stale cache). Default: 0.
	WatchCacheDelay time.Duration
	// ControllersPaused stops the session's controllers and its kubelet
	// (JSON "controllers": "running", the default, or "paused"): nothing
	// then runs beside the API server, deployments keep the status someone
	// writes by hand, so a lesson can play the controller itself.
	ControllersPaused bool
	// PodReadyDelay is how long a pod's containers take to start and be
	// ready once the kubelet admitted it (and to restart after a crash).
	// A real kubelet takes as long as pulling images and starting
	// containers does. Default: 1 s.
	PodReadyDelay time.Duration
}

// DefaultSettings are a new session's settings.
func DefaultSettings() Settings {
	return Settings{BookmarkInterval: 10 * time.Second, CompactionInterval: DefaultCompactionInterval, PodReadyDelay: time.Second, WatchCache: true}
}

// DefaultCompactionInterval is kube-apiserver's --etcd-compaction-interval.
const DefaultCompactionInterval = 5 * time.Minute

// The bounds a setting must keep: a bookmark every few milliseconds or a
// compaction every few would be a load, not a lesson.
const (
	MinBookmarkInterval   = time.Second
	MinCompactionInterval = time.Second
	MaxSettingDuration    = 24 * time.Hour
)

// The values of "controllers" and "watchCache".
const (
	ControllersRunning = "running"
	ControllersPaused  = "paused"
	WatchCacheOn       = "on"
	WatchCacheOff      = "off"
)

// MarshalJSON renders durations as Go writes them ("10s", "1m30s").
func (s Settings) MarshalJSON() ([]byte, error) {
	controllers := ControllersRunning
	if s.ControllersPaused {
		controllers = ControllersPaused
	}
	watchCache := WatchCacheOff
	if s.WatchCache {
		watchCache = WatchCacheOn
	}
	return []byte(`{"bookmarkInterval":"` + s.BookmarkInterval.String() + `","compactionInterval":"` + s.CompactionInterval.String() +
		`","watchCacheDelay":"` + s.WatchCacheDelay.String() + `","controllers":"` + controllers + `","watchCache":"` + watchCache +
		`","podReadyDelay":"` + s.PodReadyDelay.String() + `"}`), nil
}

// Validate checks every bound and names the first setting that breaks one.
func (s Settings) Validate() error {
	for _, c := range []struct {
		name       string
		d, min     time.Duration
		zeroIsOff  bool
		zeroAllows bool
	}{
		{"bookmarkInterval", s.BookmarkInterval, MinBookmarkInterval, false, false},
		{"compactionInterval", s.CompactionInterval, MinCompactionInterval, true, true},
		{"watchCacheDelay", s.WatchCacheDelay, 0, false, true},
		{"podReadyDelay", s.PodReadyDelay, 0, false, true},
	} {
		switch {
		case c.d == 0 && c.zeroAllows:
		case c.d < 0:
			return errors.New(c.name + ": must not be negative")
		case c.d < c.min && c.zeroIsOff:
			return errors.New(c.name + ": must be at least " + c.min.String() + " (or 0s: off)")
		case c.d < c.min:
			return errors.New(c.name + ": must be at least " + c.min.String())
		case c.d > MaxSettingDuration:
			return errors.New(c.name + ": must be at most " + MaxSettingDuration.String())
		}
	}
	return nil
}

// settingsPatch is the JSON a PATCH takes: a member present is a change.
type settingsPatch struct {
	BookmarkInterval   json.RawMessage `json:"bookmarkInterval"`
	CompactionInterval json.RawMessage `json:"compactionInterval"`
	WatchCacheDelay    json.RawMessage `json:"watchCacheDelay"`
	Controllers        *string         `json:"controllers"`
	WatchCache         *string         `json:"watchCache"`
	PodReadyDelay      json.RawMessage `json:"podReadyDelay"`
}

// Merge applies a JSON merge patch of settings ({"bookmarkInterval":"5s"})
// to s: members present are set, members absent keep their value. A
// duration is Go's syntax ("5s", "1m", "250ms") or a number of seconds;
// controllers is "running" or "paused", watchCache "on" or "off".
func (s Settings) Merge(patch []byte) (Settings, error) {
	var p settingsPatch
	dec := json.NewDecoder(bytes.NewReader(patch))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return s, errors.New("unknown setting " + f + ": the settings are bookmarkInterval, compactionInterval, watchCacheDelay, controllers, watchCache and podReadyDelay")
		}
		if p.Controllers == nil && strings.Contains(err.Error(), "Go struct field settingsPatch.controllers") {
			return s, errors.New(`controllers: neither "running" nor "paused"`)
		}
		if strings.Contains(err.Error(), "Go struct field settingsPatch.watchCache") {
			return s, errors.New(`watchCache: neither "on" nor "off"`)
		}
		return s, errors.New(`settings must be a JSON object such as {"bookmarkInterval":"5s"}`)
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		to   *time.Duration
	}{
		{"bookmarkInterval", p.BookmarkInterval, &s.BookmarkInterval},
		{"compactionInterval", p.CompactionInterval, &s.CompactionInterval},
		{"watchCacheDelay", p.WatchCacheDelay, &s.WatchCacheDelay},
		{"podReadyDelay", p.PodReadyDelay, &s.PodReadyDelay},
	} {
		if f.raw == nil {
			continue
		}
		d, err := parseDuration(f.raw)
		if err != nil {
			return s, errors.New(f.name + ": " + err.Error())
		}
		*f.to = d
	}
	if p.Controllers != nil {
		switch *p.Controllers {
		case ControllersRunning, ControllersPaused:
			s.ControllersPaused = *p.Controllers == ControllersPaused
		default:
			return s, errors.New(`controllers: ` + strconv.Quote(*p.Controllers) + ` is neither "running" nor "paused"`)
		}
	}
	if p.WatchCache != nil {
		switch *p.WatchCache {
		case WatchCacheOn, WatchCacheOff:
			s.WatchCache = *p.WatchCache == WatchCacheOn
		default:
			return s, errors.New(`watchCache: ` + strconv.Quote(*p.WatchCache) + ` is neither "on" nor "off"`)
		}
	}
	return s, s.Validate()
}

// parseDuration reads Go's duration syntax or a number of seconds.
func parseDuration(raw json.RawMessage) (time.Duration, error) {
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		d, err := time.ParseDuration(strings.TrimSpace(str))
		if err != nil {
			return 0, errors.New(strconv.Quote(str) + " is not a duration (for example 5s, 1m, 250ms)")
		}
		return d, nil
	}
	var secs float64
	if err := json.Unmarshal(raw, &secs); err != nil {
		return 0, errors.New(string(raw) + ` is not a duration (for example "5s", "1m", "250ms")`)
	}
	return time.Duration(secs * float64(time.Second)), nil
}
