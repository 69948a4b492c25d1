// Package engine_test checks docs/ARCHITECTURE.md's layering rules over
// every engine package: dependencies point downward, and nothing the
// browser links pulls in a transport, SQLite or syscall/js.
package engine_test

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

func TestEnginePackagesKeepTheLayering(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("needs the go command, which WebAssembly tests cannot run")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	const mod = "github.com/rvplay/rvplay/"
	// Each rule: packages under prefix must not depend on any of these.
	forbidden := []struct {
		prefix string
		deps   []string
	}{
		// etcd's gRPC API is served by server/etcdgrpc: the browser's build
		// never links gRPC or etcd's API packages.
		{"engine/", []string{"net/http", "syscall/js", "github.com/gorilla/websocket", "google.golang.org/grpc", "go.etcd.io/etcd"}},
		// The one clock every layer shares sits below them all.
		{"engine/clock", []string{"github.com/rvplay/rvplay", "modernc.org/sqlite"}},
		{"engine/mvcc", []string{"modernc.org/sqlite", mod + "engine/kube", mod + "engine/api", mod + "engine/session"}},
		{"engine/kube", []string{"modernc.org/sqlite", mod + "engine/api", mod + "engine/session", mod + "engine/sqlite"}},
		{"engine/api", []string{"modernc.org/sqlite", mod + "engine/sqlite"}},
		{"engine/client", []string{"modernc.org/sqlite", mod + "engine/sqlite", mod + "engine/kube", mod + "engine/mvcc"}},
		{"engine/session", []string{"modernc.org/sqlite", mod + "engine/sqlite"}},
		{"engine/lesson", []string{"modernc.org/sqlite", mod + "engine/sqlite", mod + "web"}},
		{"engine/controllers", []string{"modernc.org/sqlite", mod + "engine/sqlite"}},
		{"engine/duration", []string{"modernc.org/sqlite", mod + "engine/sqlite"}},
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], mod)
		for _, rule := range forbidden {
			if !strings.HasPrefix(pkg, rule.prefix) {
				continue
			}
			for _, dep := range fields[1:] {
				for _, bad := range rule.deps {
					if dep == bad || strings.HasPrefix(dep, bad+"/") {
						t.Errorf("%s depends on %s", pkg, dep)
					}
				}
			}
		}
	}
}
