package main

import (
	"os"
	"testing"

	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// TestMain runs the tests through rvplaytest.RunTests: those that run the
// server as a process (crash, shutdown, TLS, flags) share one build of it
// (buildServer), removed when they end.
func TestMain(m *testing.M) { os.Exit(rvplaytest.RunTests(m)) }
