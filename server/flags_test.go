package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func testFlags() (*flag.FlagSet, *string, *int, *time.Duration, *bool, *sessionFlags) {
	fs := flag.NewFlagSet("rvplay", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	max := fs.Int("max-sessions", 1000, "most sessions")
	unload := fs.Duration("session-unload-after", 5*time.Minute, "how long")
	insecure := fs.Bool("allow-insecure-http", false, "plain HTTP")
	var names sessionFlags
	fs.Var(&names, "session", "an open session (repeatable)")
	return fs, addr, max, unload, insecure, &names
}

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestEveryFlagIsSettableFromTheEnvironment(t *testing.T) {
	fs, addr, max, unload, insecure, names := testFlags()
	err := parseFlags(fs, nil, env(map[string]string{
		"RVPLAY_ADDR": "0.0.0.0:9000", "RVPLAY_MAX_SESSIONS": "20", "RVPLAY_SESSION_UNLOAD_AFTER": "30s",
		"RVPLAY_ALLOW_INSECURE_HTTP": "true", "RVPLAY_SESSION": "demo,class-1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if *addr != "0.0.0.0:9000" || *max != 20 || *unload != 30*time.Second || !*insecure || strings.Join(*names, " ") != "demo class-1" {
		t.Fatalf("from the environment: %q %d %v %v %q", *addr, *max, *unload, *insecure, *names)
	}
}

func TestAFlagOnTheCommandLineWinsOverItsVariable(t *testing.T) {
	fs, addr, max, _, _, names := testFlags()
	err := parseFlags(fs, []string{"--addr", "127.0.0.1:0", "--session", "mine"},
		env(map[string]string{"RVPLAY_ADDR": "0.0.0.0:9000", "RVPLAY_SESSION": "theirs", "RVPLAY_MAX_SESSIONS": "3"}))
	if err != nil {
		t.Fatal(err)
	}
	if *addr != "127.0.0.1:0" || strings.Join(*names, " ") != "mine" || *max != 3 {
		t.Fatalf("got %q %q %d", *addr, *names, *max)
	}
}

func TestABadVariableIsRefusedByName(t *testing.T) {
	fs, _, _, _, _, _ := testFlags()
	err := parseFlags(fs, nil, env(map[string]string{"RVPLAY_MAX_SESSIONS": "many"}))
	if err == nil || !strings.HasPrefix(err.Error(), `RVPLAY_MAX_SESSIONS="many": `) {
		t.Fatalf("err = %v", err)
	}
	fs, _, _, _, _, _ = testFlags()
	if err := parseFlags(fs, []string{"extra"}, env(nil)); err == nil {
		t.Fatal("a stray argument was accepted")
	}
}

func TestHelpExplainsEachFlagWithItsVariableAndDefault(t *testing.T) {
	fs, _, _, _, _, _ := testFlags()
	var out bytes.Buffer
	usage(&out, fs)
	for _, want := range []string{
		"  --addr string\n    \taddress to listen on\n    \t(RVPLAY_ADDR; default \"127.0.0.1:8080\")\n",
		"  --max-sessions int\n    \tmost sessions\n    \t(RVPLAY_MAX_SESSIONS; default 1000)\n",
		"  --session-unload-after duration\n    \thow long\n    \t(RVPLAY_SESSION_UNLOAD_AFTER; default 5m0s)\n",
		"  --session value\n    \tan open session (repeatable)\n    \t(RVPLAY_SESSION)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks\n%s\nin\n%s", want, out.String())
		}
	}
}

// The README's configuration table names every flag the server has, with
// its variable: a flag added without documenting it fails here.
func TestTheREADMEDocumentsEveryFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary")
	}
	out, _ := exec.Command(buildServer(t), "--help").CombinedOutput()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		name, ok := strings.CutPrefix(line, "  --")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, " ")
		n++
		documented := false
		for _, row := range strings.Split(string(readme), "\n") {
			if strings.HasPrefix(row, "| `--"+name+"`") || strings.HasPrefix(row, "| `--"+name+" ") {
				documented = documented || strings.Contains(row, "| `"+envName(name)+"` |")
			}
		}
		if !documented {
			t.Errorf("README's table lacks --%s with %s", name, envName(name))
		}
	}
	if n < 30 {
		t.Fatalf("--help listed %d flags:\n%s", n, out)
	}
}
