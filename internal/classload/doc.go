// Package classload puts a class's load on a real rvplay server process
// and checks what issue 12 promises of it: a guarded session created with
// POST /sessions, students joined with its code (POST /s/<id>/join), every
// student watching the ConfigMaps of the shared namespace over a WebSocket
// as the lab does (Kubernetes' ?watch=true upgrade with the student's
// token, resuming from its last resourceVersion and listing again after a
// 410, as client-go's reflector does), and some of the students writing
// there at a steady pace (create, update with the resourceVersion read,
// delete with a resourceVersion precondition).
//
// Run drives the load and, when asked, SIGKILLs the server in the middle
// of it and restarts it on the same database. It then checks every
// watcher's sequence of events against the session's own history (read
// through the etcd gateway with the teacher's token): no event lost,
// repeated or out of order, every list equal to the state at its
// resourceVersion, every acknowledged write in the history. It measures
// delivery (from the first arrival of a write's answer or event at a
// client's socket to the event's arrival at each watcher's, as the kernel
// stamps them, so that the load tool's own waits for a core do not
// count), the server's resident memory (/proc) and goroutines (/metrics)
// before, during and after the load. IdleSessions measures what an idle session
// costs the server.
//
// bench/classload runs it at the scale (task bench); the server's
// crash test runs a small class through a crash (task test). It is test
// tooling: product code must not import it.
package classload
