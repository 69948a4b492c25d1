// Package stress replays issue 10's attacks on a real rvplay server process
// and checks that each stays within its bound: the server's memory
// (RssAnon from /proc) and goroutines (from its profiler) stay under stated
// limits, a well-behaved client of another session keeps being answered
// (its p99 is recorded), and every write that client was acknowledged is
// readable afterwards.
//
// go test runs each attack at a small scale (a couple of minutes on two
// cores); RVPLAY_STRESS=full runs them at the issue's scale, which `task
// bench` does, and prints the table BENCHMARKS.md quotes. Like the other
// suites under test/ that drive the server binary, it is a module of its
// own; it requires the main module only for internal/rvplaytest, which
// builds and starts the server.
package stress
