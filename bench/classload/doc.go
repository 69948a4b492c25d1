// Package classload is issue 12's load and crash proof at the issue's
// scale, run by task bench: a class of 200 students on one guarded
// session, every one watching the shared namespace over a WebSocket, 20 of
// them writing, for 60 s, once steady and once through a SIGKILL of the
// server; then 1,000 idle sessions on one server. The load itself and its
// checks are internal/classload's; this package runs them on the server
// binary and holds the figures to the bounds.
//
//	go test ./bench/classload -run '^$' -bench ClassLoad -benchtime 1x
//	go test ./bench/classload -run '^$' -bench ClassLoad/steady -classload.duration 20s
package classload
