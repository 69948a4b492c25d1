//go:build !(js && wasm)

package apply_test

// A real kubectl (1.27–1.33, as installed on the development machines)
// against a small HTTP server that serves the golden discovery documents,
// this module's OpenAPI documents and a map of objects written through
// packages patch and apply. It checks what kubectl needs from the server
// side of those packages: validation without extra flags, explain,
// client-side apply (strategic merge patch computed from our OpenAPI) and
// server-side apply with conflicts.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/kube/apply"
	"github.com/rvplay/rvplay/engine/kube/patch"
	"github.com/rvplay/rvplay/engine/kube/schema"
)

type fakeServer struct {
	mu       sync.Mutex
	objects  map[string]map[string]any
	rv       int
	requests []string
}

func (s *fakeServer) status(w http.ResponseWriter, code int, reason, msg string, details map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	st := map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure", "message": msg, "reason": reason, "code": code}
	if details != nil {
		st["details"] = details
	}
	json.NewEncoder(w).Encode(st)
}

func (s *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.String()+" "+r.Header.Get("Content-Type")+" "+string(body))
	switch p := r.URL.Path; {
	case p == "/version" || p == "/api" || p == "/api/v1" || p == "/apis" || p == "/apis/apps/v1":
		name := map[string]string{"/version": "version.json", "/api": "api.json", "/api/v1": "api_v1.json", "/apis": "apis.json", "/apis/apps/v1": "apis_apps_v1.json"}[p]
		b, _ := os.ReadFile(filepath.Join("testdata", name))
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	case p == "/openapi/v2":
		if strings.Contains(r.Header.Get("Accept"), "protobuf") {
			w.Header().Set("Content-Type", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
			w.Write(schema.OpenAPIV2Protobuf())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(schema.OpenAPIV2())
	case p == "/openapi/v3":
		w.Header().Set("Content-Type", "application/json")
		w.Write(schema.OpenAPIV3Index())
	case strings.HasPrefix(p, "/openapi/v3/"):
		doc, ok := schema.OpenAPIV3(strings.TrimPrefix(p, "/openapi/v3/"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	default:
		s.resource(w, r, body)
	}
}

func (s *fakeServer) resource(w http.ResponseWriter, r *http.Request, body []byte) {
	seg := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	// api/v1/namespaces/NS/PLURAL[/NAME] or apis/G/V/namespaces/NS/PLURAL[/NAME]
	if seg[0] == "apis" {
		seg = seg[1:]
	}
	if len(seg) < 5 || seg[2] != "namespaces" {
		http.NotFound(w, r)
		return
	}
	av, ns, plural := seg[1], seg[3], seg[4]
	if seg[0] != "api" {
		av = seg[0] + "/" + seg[1]
	}
	kind := map[string]string{"configmaps": "ConfigMap", "deployments": "Deployment"}[plural]
	t := schema.ForGVK(av, kind)
	q := r.URL.Query()
	now := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	manager := q.Get("fieldManager")
	if manager == "" {
		manager = strings.SplitN(r.Header.Get("User-Agent"), "/", 2)[0]
	}
	reply := func(code int, obj map[string]any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		b, _ := schema.Marshal(t, obj)
		w.Write(b)
	}
	store := func(key string, old, obj map[string]any) {
		s.rv++
		md := obj["metadata"].(map[string]any)
		md["namespace"], md["resourceVersion"] = ns, fmt.Sprint(s.rv)
		if old == nil {
			md["uid"], md["creationTimestamp"] = fmt.Sprintf("uid-%d", s.rv), now.Format(time.RFC3339)
		}
		schema.FillEmitted(t, obj)
		s.objects[key] = obj
	}
	if r.Method == "POST" {
		var obj map[string]any
		if err := json.Unmarshal(body, &obj); err != nil {
			s.status(w, 400, "BadRequest", err.Error(), nil)
			return
		}
		if u := schema.UnknownFields(t, obj); len(u) > 0 && q.Get("fieldValidation") == "Strict" {
			s.status(w, 400, "BadRequest", kind+` in version "v1" cannot be handled as a `+kind+": "+schema.StrictDecodingError(u), nil)
			return
		}
		name := obj["metadata"].(map[string]any)["name"].(string)
		key := plural + "/" + ns + "/" + name
		if err := apply.UpdateManagedFields(t, av, nil, obj, apply.Write{Manager: manager, Now: now}); err != nil {
			panic(err)
		}
		store(key, nil, obj)
		reply(201, obj)
		return
	}
	if len(seg) < 6 {
		http.NotFound(w, r)
		return
	}
	key := plural + "/" + ns + "/" + seg[5]
	cur := s.objects[key]
	switch r.Method {
	case "GET":
		if cur == nil {
			s.status(w, 404, "NotFound", plural+` "`+seg[5]+`" not found`, map[string]any{"name": seg[5], "kind": plural})
			return
		}
		reply(200, cur)
	case "PATCH":
		ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		var out map[string]any
		if ct == patch.ApplyPatchType {
			var cfg map[string]any
			if err := json.Unmarshal(body, &cfg); err != nil {
				s.status(w, 400, "BadRequest", err.Error(), nil)
				return
			}
			res, err := apply.Apply(t, av, cur, cfg, apply.Write{Manager: manager, Now: now}, q.Get("force") == "true")
			if ce, ok := err.(*apply.ConflictError); ok {
				s.status(w, 409, "Conflict", ce.Error(), map[string]any{"causes": ce.Causes()})
				return
			}
			if err != nil {
				s.status(w, 500, "", err.Error(), nil)
				return
			}
			created := cur == nil
			store(key, cur, res)
			if created {
				reply(201, res)
			} else {
				reply(200, res)
			}
			return
		}
		if cur == nil {
			s.status(w, 404, "NotFound", plural+` "`+seg[5]+`" not found`, map[string]any{"name": seg[5], "kind": plural})
			return
		}
		curJSON, _ := json.Marshal(cur)
		var res []byte
		var err error
		switch ct {
		case patch.StrategicMergePatchType:
			res, err = patch.StrategicMerge(t, curJSON, body)
		case patch.MergePatchType:
			res, err = patch.MergePatch(curJSON, body)
		case patch.JSONPatchType:
			res, err = patch.JSONPatch(curJSON, body)
		}
		if err != nil {
			s.status(w, 422, "Invalid", err.Error(), nil)
			return
		}
		json.Unmarshal(res, &out)
		if err := apply.UpdateManagedFields(t, av, cur, out, apply.Write{Manager: manager, Now: now}); err != nil {
			panic(err)
		}
		store(key, cur, out)
		reply(200, out)
	default:
		s.status(w, 405, "MethodNotAllowed", "not supported", nil)
	}
}

func kubectls(t *testing.T) []string {
	if testing.Short() || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("runs kubectl; skipped with -short")
	}
	var out []string
	for v := 27; v <= 33; v++ {
		for _, dir := range []string{"/usr/lib/google-cloud-sdk/bin", "/usr/local/bin", "/usr/bin"} {
			p := fmt.Sprintf("%s/kubectl.1.%d", dir, v)
			if _, err := os.Stat(p); err == nil {
				out = append(out, p)
				break
			}
		}
	}
	if len(out) == 0 {
		t.Skip("no kubectl.1.27 … kubectl.1.33 installed")
	}
	return out
}

type kubectlEnv struct {
	t    *testing.T
	bin  string
	dir  string
	srv  *fakeServer
	kcfg string
}

func (k *kubectlEnv) run(stdin string, args ...string) (string, error) {
	args = append([]string{"--kubeconfig", k.kcfg, "--cache-dir", filepath.Join(k.dir, "cache")}, args...)
	cmd := exec.Command(k.bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func (k *kubectlEnv) lastRequest(prefix string) string {
	k.srv.mu.Lock()
	defer k.srv.mu.Unlock()
	for i := len(k.srv.requests) - 1; i >= 0; i-- {
		if strings.HasPrefix(k.srv.requests[i], prefix) {
			return k.srv.requests[i]
		}
	}
	return ""
}

func newKubectlEnv(t *testing.T, bin string) *kubectlEnv {
	fs := &fakeServer{objects: map[string]map[string]any{}}
	ts := httptest.NewServer(fs)
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	kcfg := filepath.Join(dir, "kubeconfig")
	os.WriteFile(kcfg, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+ts.URL+`/s/abc"}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: default}}]
current-context: c
`), 0o600)
	// The session prefix /s/abc is stripped, as the real server routes it.
	inner := ts.Config.Handler
	ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.URL.Path = strings.TrimPrefix(r.URL.Path, "/s/abc")
		inner.ServeHTTP(w, r)
	})
	return &kubectlEnv{t: t, bin: bin, dir: dir, srv: fs, kcfg: kcfg}
}

const deployYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: app:1
        env:
        - {name: A, value: "1"}
      - name: log
        image: log:1
`

func TestKubectlWorksAgainstOurOpenAPIAndPatches(t *testing.T) {
	for _, bin := range kubectls(t) {
		t.Run(filepath.Base(bin), func(t *testing.T) {
			k := newKubectlEnv(t, bin)

			// Strict validation (the default) is delegated to the server.
			out, err := k.run("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {a: b}\n", "create", "-f", "-")
			if err != nil {
				t.Fatalf("create: %v\n%s", err, out)
			}
			if r := k.lastRequest("POST"); !strings.Contains(r, "fieldValidation=Strict") {
				t.Errorf("create did not ask for server-side strict validation: %s", r)
			}
			out, err = k.run("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c2}\nbogus: 1\n", "create", "-f", "-")
			if err == nil || !strings.Contains(out, `strict decoding error: unknown field "bogus"`) {
				t.Errorf("unknown field accepted or wrong message: %v\n%s", err, out)
			}

			// explain reads the OpenAPI documents.
			out, err = k.run("", "explain", "configmap")
			if err != nil || !strings.Contains(out, "binaryData") || !strings.Contains(out, "ConfigMap holds") {
				t.Errorf("explain configmap: %v\n%s", err, out)
			}
			out, err = k.run("", "explain", "deployment.spec.template.spec.containers.ports")
			if err != nil || !strings.Contains(out, "containerPort") {
				t.Errorf("explain containers.ports: %v\n%s", err, out)
			}

			// Client-side apply: create, then a strategic merge patch built
			// from our OpenAPI (merge by container name).
			if out, err := k.run(deployYAML, "apply", "-f", "-"); err != nil {
				t.Fatalf("apply (create): %v\n%s", err, out)
			}
			changed := strings.Replace(deployYAML, "image: app:1", "image: app:2", 1)
			if out, err := k.run(changed, "apply", "-v=2", "-f", "-"); err != nil || strings.Contains(out, "warning") {
				t.Fatalf("apply (patch): %v\n%s", err, out)
			}
			r := k.lastRequest("PATCH")
			if !strings.Contains(r, "application/strategic-merge-patch+json") || !strings.Contains(r, `"$setElementOrder/containers"`) {
				t.Errorf("client-side apply did not send a strategic merge patch with merge keys: %s", r)
			}
			out, err = k.run("", "get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[*].image}")
			if err != nil || out != "app:2 log:1" {
				t.Errorf("after apply: %v %q", err, out)
			}

			// The same file applied server-side by kubectl takes over from
			// client-side apply without --force-conflicts (the server allows
			// it, kubectl then moves ownership with a JSON patch).
			changed = strings.Replace(changed, "replicas: 2", "replicas: 3", 1)
			if out, err := k.run(changed, "apply", "--server-side", "-f", "-"); err != nil {
				t.Fatalf("server-side apply after client-side apply: %v\n%s", err, out)
			}
			if os.Getenv("SHOW_REQUESTS") != "" {
				for _, r := range k.srv.requests {
					t.Log(r)
				}
			}
			out, _ = k.run("", "get", "deploy", "web", "-o", "jsonpath={.spec.replicas} {.metadata.managedFields[*].manager}")
			if !strings.HasPrefix(out, "3 ") || !strings.Contains(out, "kubectl") {
				t.Errorf("after migration: %q", out)
			}

			// Server-side apply by a second manager conflicts, --force-conflicts wins.
			ssa := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 5\n"
			out, err = k.run(ssa, "apply", "--server-side", "--field-manager", "ops", "-f", "-")
			if err == nil || !strings.Contains(out, `conflict with "kubectl": .spec.replicas`) {
				t.Errorf("server-side apply should conflict: %v\n%s", err, out)
			}
			if out, err := k.run(ssa, "apply", "--server-side", "--field-manager", "ops", "--force-conflicts", "-f", "-"); err != nil {
				t.Errorf("forced server-side apply: %v\n%s", err, out)
			}
			out, _ = k.run("", "get", "deploy", "web", "-o", "jsonpath={.spec.replicas}")
			if out != "5" {
				t.Errorf("replicas = %q", out)
			}
		})
	}
}
