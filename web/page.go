// Package web is the playground's browser side: templ pages (landing, lab,
// the teacher's dashboard), the plain ES-module JavaScript and CSS they
// load, the UI strings per language, and the WebAssembly build of the
// engine (web/static/wasm, written by scripts/build-wasm.sh), all embedded
// and served by Handler. It depends on net/http, templ and its lessons
// (web/lessons) only; it must not import the engine: the pages talk to a session through its
// public APIs, in the page (wasm) or over HTTP.
package web

// PageConfig says where a page lives and what it talks to. The same
// components render for the server (absolute /static/ paths) and for the
// static build (relative paths, no server section).
type PageConfig struct {
	// Static is the URL prefix of the static assets, ending in "/".
	Static string
	// Home is the landing page's URL; LabHref the offline lab's.
	Home    string
	LabHref string
	// Standalone is true in the static build: there is no server to hold
	// sessions, so the landing page offers only the offline lab.
	Standalone bool
}

// LabConfig is handed to the lab's JavaScript as JSON.
type LabConfig struct {
	// Mode is "offline" (engine in the page) or "server" (a server session).
	Mode string `json:"mode"`
	// Session is the server session's name; APIBase the URL prefix of its
	// APIs ("/s/demo"). Empty offline.
	Session string `json:"session,omitempty"`
	APIBase string `json:"apiBase,omitempty"`
	// Static is the URL prefix of the static assets (the wasm lives under it).
	Static string `json:"static"`
	Home   string `json:"home"`
	// LabHref is the offline lab's URL: a share link or an imported lab file
	// opened on a server session replays there, never into the live session.
	LabHref string `json:"labHref"`
	// Health is a URL that answers 200 while the server is up (server
	// sessions only): the lab probes it after a request failed.
	Health string `json:"health,omitempty"`
	// CanReset says the Reset button is offered on a server session (to
	// whoever may reset it; the server still decides). Offline it always is.
	CanReset bool `json:"canReset,omitempty"`
	// Languages are the UI languages embedded (static/i18n/*.json).
	Languages []Language `json:"languages"`
	// Lessons are the lessons embedded (static/lessons/<dir>/).
	Lessons []LessonRef `json:"lessons"`
	// Kubeconfig is the URL of a kubeconfig for kubectl (server sessions
	// only): the session's URL and the token of whoever downloads it, so
	// the lab can offer it as a download.
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// Store is "etcd" when the server's sessions live on an etcd cluster
	// (--store etcd://): a session's revisions are then the cluster's,
	// shared with every other session, so they jump when another session
	// writes, and the lab and the lessons that compare revision numbers
	// say so. Empty on SQLite (each session its own store) and offline.
	Store string `json:"store,omitempty"`
}

// OfflineLab and serverLab are the lab's configuration in each mode.
func OfflineLab(p PageConfig) LabConfig {
	return LabConfig{Mode: "offline", Static: p.Static, Home: p.Home, LabHref: p.LabHref, Languages: Languages(), Lessons: LessonIndex()}
}

func serverLab(p PageConfig, s Server, session string) LabConfig {
	return LabConfig{Mode: "server", Session: session, APIBase: "/s/" + session, Static: p.Static, Home: p.Home,
		LabHref: p.LabHref, Health: "/healthz", Languages: Languages(), Lessons: LessonIndex(), Kubeconfig: "/s/" + session + "/kubeconfig",
		Store: s.Store}
}

// DashboardConfig is handed to the teacher's dashboard's JavaScript as
// JSON.
type DashboardConfig struct {
	// Session is the class's session; APIBase the URL prefix of its APIs
	// ("/s/class-1"); LabHref its lab.
	Session string `json:"session"`
	APIBase string `json:"apiBase"`
	LabHref string `json:"labHref"`
	Static  string `json:"static"`
	Home    string `json:"home"`
	// Languages are the UI languages embedded; Lessons the lessons, for
	// their titles and step counts.
	Languages []Language  `json:"languages"`
	Lessons   []LessonRef `json:"lessons"`
}

func dashboard(p PageConfig, session string) DashboardConfig {
	return DashboardConfig{Session: session, APIBase: "/s/" + session, LabHref: "/s/" + session + "/", Static: p.Static, Home: p.Home,
		Languages: Languages(), Lessons: LessonIndex()}
}

func serverPage() PageConfig {
	return PageConfig{Static: "/static/", Home: "/", LabHref: "/lab"}
}
