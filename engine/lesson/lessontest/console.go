package lessontest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/console"
	"github.com/rvplay/rvplay/engine/lesson"
	yaml "go.yaml.in/yaml/v2"
)

// KubectlUserAgent is what the lab's console sends as kubectl, as the real
// tool does.
const (
	KubectlUserAgent = "kubectl/v1.35.0 (js/wasm) kubernetes/rvplay-console"
)

// runCommand runs a console command line in the lab's console
// (engine/console), with stdin as the editor's text that `-f -` reads,
// and returns what it printed. Commands the console does not have yet
// (it answers 127) are performed by translate with the requests the real
// tool would send.
func (r *Runner) runCommand(ctx context.Context, line, stdin string) (string, error) {
	cons := console.New(r.front, console.Options{Editor: stdinEditor(stdin), Now: r.Clock.Now})
	var out, errOut strings.Builder
	if status := cons.Run(ctx, line, console.Output{Stdout: &out, Stderr: &errOut}); status != 127 {
		return out.String() + errOut.String(), nil
	}
	return r.translate(ctx, line, stdin)
}

// stdinEditor is the lab's editor holding what a `-f -` command reads.
type stdinEditor string

func (e stdinEditor) Text(context.Context) (string, error) { return string(e), nil }

func (e stdinEditor) Edit(context.Context, string) (string, error) {
	return "", console.ErrEditCanceled
}

// translate performs a kubectl command line with the requests the real
// kubectl would send (the subset the lessons use) and returns the answer's
// body, until the console has kubectl.
func (r *Runner) translate(ctx context.Context, line, stdin string) (string, error) {
	if i := strings.Index(line, " | "); i >= 0 { // | jq ...: only the display changes
		line = line[:i]
	}
	args, err := splitArgs(line)
	if err != nil {
		return "", err
	}
	if len(args) == 0 {
		return "", fmt.Errorf("empty command")
	}
	if args[0] == "kubectl" {
		return r.kubectl(ctx, args[1:], stdin)
	}
	return "", fmt.Errorf("%s: neither the console nor the test knows it", args[0])
}

// flags separates --flag=value / --flag value / -x value from positional args.
func flags(args []string, valued map[string]bool) (map[string]string, []string) {
	fl, pos := map[string]string{}, []string(nil)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		name, val, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !ok && valued[name] && i+1 < len(args) {
			val = args[i+1]
			i++
		} else if !ok {
			val = "true"
		}
		fl[name] = val
	}
	return fl, pos
}

// answer is what the console prints: the body, whatever the status (a
// 409 is what a lesson wants to show, not a failure of the command).
func answer(resp *api.Response) (string, error) {
	closeStream(resp)
	return string(resp.Body), nil
}

func closeStream(resp *api.Response) {
	if resp.Stream != nil {
		resp.Stream.Close()
	}
}

// kubeResource resolves kubectl's resource names (deployment, deploy,
// deployments, configmap, cm, ...).
func kubeResource(name string) (group, version, plural string, ok bool) {
	name = strings.ToLower(name)
	for _, res := range []struct{ group, version, plural, kind string }{
		{"apps", "v1", "deployments", "deployment"},
		{"", "v1", "configmaps", "configmap"},
		{"", "v1", "pods", "pod"},
		{"", "v1", "namespaces", "namespace"},
	} {
		if name == res.plural || name == res.kind || (name == "deploy" && res.plural == "deployments") || (name == "cm" && res.plural == "configmaps") {
			return res.group, res.version, res.plural, true
		}
	}
	return "", "", "", false
}

func kubePath(group, version, plural, ns, name string, sub ...string) string {
	p := "/api/" + version
	if group != "" {
		p = "/apis/" + group + "/" + version
	}
	if ns != "" && plural != "namespaces" {
		p += "/namespaces/" + ns
	}
	p += "/" + plural
	if name != "" {
		p += "/" + name
	}
	for _, s := range sub {
		p += "/" + s
	}
	return p
}

func (r *Runner) kubectl(ctx context.Context, args []string, stdin string) (string, error) {
	fl, pos := flags(args, map[string]bool{"o": true, "output": true, "f": true, "filename": true, "n": true, "namespace": true,
		"replicas": true, "type": true, "p": true, "patch": true, "field-manager": true, "subresource": true, "server": true, "timeout": true})
	if len(pos) == 0 {
		return "", fmt.Errorf("kubectl: no command")
	}
	ns := fl["n"]
	if ns == "" {
		ns = fl["namespace"]
	}
	if ns == "" {
		ns = "default"
	}
	do := func(method, path string, q url.Values, body []byte, contentType string) (string, error) {
		h := api.Header{"User-Agent": {KubectlUserAgent}, "Accept": {"application/json"}}
		if contentType != "" {
			h.Set("Content-Type", contentType)
		}
		if q == nil {
			q = url.Values{}
		}
		return answer(r.console.Do(ctx, &api.Request{Method: method, Path: path, Query: q, Body: body, Header: h}))
	}
	target := func(at int) (string, string, string, string, error) {
		if len(pos) <= at {
			return "", "", "", "", fmt.Errorf("kubectl %s: which resource?", pos[0])
		}
		res, name, _ := strings.Cut(pos[at], "/")
		if name == "" && len(pos) > at+1 {
			name = pos[at+1]
		}
		g, v, p, ok := kubeResource(res)
		if !ok {
			return "", "", "", "", fmt.Errorf("kubectl: unknown resource %q", res)
		}
		return g, v, p, name, nil
	}
	switch pos[0] {
	case "get":
		g, v, p, name, err := target(1)
		if err != nil {
			return "", err
		}
		return do("GET", kubePath(g, v, p, ns, name), nil, nil, "")
	case "apply", "replace", "create":
		obj, err := yamlToJSON(stdin)
		if err != nil {
			return "", err
		}
		var o struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(obj, &o)
		res := lesson.ResourceOfKind(o.APIVersion, o.Kind)
		if res == nil {
			return "", fmt.Errorf("kubectl: no resource for %s %s", o.APIVersion, o.Kind)
		}
		rns := ns
		if !res.Namespaced {
			rns = ""
		}
		switch {
		case pos[0] == "replace":
			return do("PUT", kubePath(res.Group, res.Version, res.Resource, rns, o.Metadata.Name), nil, obj, "application/json")
		case pos[0] == "apply" && fl["server-side"] == "true":
			q := url.Values{"fieldManager": {"kubectl"}}
			if m := fl["field-manager"]; m != "" {
				q.Set("fieldManager", m)
			}
			if fl["force-conflicts"] == "true" {
				q.Set("force", "true")
			}
			return do("PATCH", kubePath(res.Group, res.Version, res.Resource, rns, o.Metadata.Name), q, obj, "application/apply-patch+yaml")
		case pos[0] == "create":
			return do("POST", kubePath(res.Group, res.Version, res.Resource, rns, ""), url.Values{"fieldManager": {"kubectl-create"}}, obj, "application/json")
		}
		// client-side apply: create, or patch what is there
		out, err := do("POST", kubePath(res.Group, res.Version, res.Resource, rns, ""), url.Values{"fieldManager": {"kubectl-client-side-apply"}}, obj, "application/json")
		if err == nil && strings.Contains(out, `"reason":"AlreadyExists"`) {
			return do("PATCH", kubePath(res.Group, res.Version, res.Resource, rns, o.Metadata.Name), url.Values{"fieldManager": {"kubectl-client-side-apply"}}, obj, "application/strategic-merge-patch+json")
		}
		return out, err
	case "scale":
		g, v, p, name, err := target(1)
		if err != nil {
			return "", err
		}
		n, err := strconv.Atoi(fl["replicas"])
		if err != nil {
			return "", fmt.Errorf("kubectl scale: --replicas")
		}
		patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
		return do("PATCH", kubePath(g, v, p, ns, name, "scale"), url.Values{"fieldManager": {"kubectl-scale"}}, []byte(patch), "application/merge-patch+json")
	case "patch":
		g, v, p, name, err := target(1)
		if err != nil {
			return "", err
		}
		ct := map[string]string{"merge": "application/merge-patch+json", "json": "application/json-patch+json", "strategic": "application/strategic-merge-patch+json", "": "application/strategic-merge-patch+json"}[fl["type"]]
		patch := fl["p"]
		if patch == "" {
			patch = fl["patch"]
		}
		var sub []string
		if s := fl["subresource"]; s != "" {
			sub = append(sub, s)
		}
		return do("PATCH", kubePath(g, v, p, ns, name, sub...), url.Values{"fieldManager": {"kubectl-patch"}}, []byte(patch), ct)
	case "rollout":
		if len(pos) < 2 || pos[1] != "status" {
			return "", fmt.Errorf("kubectl rollout: only status")
		}
		g, v, p, name, err := target(2)
		if err != nil {
			return "", err
		}
		return r.rolloutStatus(ctx, kubePath(g, v, p, ns, ""), name)
	}
	return "", fmt.Errorf("kubectl %s: not in the lessons' subset", pos[0])
}

// rolloutStatus watches the deployment until its status says the rollout
// is complete, as kubectl rollout status does.
func (r *Runner) rolloutStatus(ctx context.Context, collection, name string) (string, error) {
	q := url.Values{"watch": {"true"}, "fieldSelector": {"metadata.name=" + name}}
	resp := r.console.Do(ctx, &api.Request{Method: "GET", Path: collection, Query: q, Header: api.Header{"User-Agent": {KubectlUserAgent}}})
	if resp.Status != 200 || resp.Stream == nil {
		closeStream(resp)
		return string(resp.Body), fmt.Errorf("rollout status: %d", resp.Status)
	}
	defer resp.Stream.Close()
	for {
		frame, err := resp.Stream.Next(ctx)
		if err != nil {
			return "", fmt.Errorf("rollout status: %w", err)
		}
		var ev struct {
			Object map[string]any `json:"object"`
		}
		if json.Unmarshal(frame, &ev) != nil {
			continue
		}
		if rolledOut(ev.Object) {
			return fmt.Sprintf("deployment %q successfully rolled out\n", name), nil
		}
	}
}

func rolledOut(o map[string]any) bool {
	num := func(path ...string) float64 {
		var cur any = o
		for _, p := range path {
			m, _ := cur.(map[string]any)
			cur = m[p]
		}
		f, _ := cur.(float64)
		return f
	}
	want := num("spec", "replicas")
	return num("metadata", "generation") <= num("status", "observedGeneration") &&
		num("status", "updatedReplicas") >= want && num("status", "replicas") <= num("status", "updatedReplicas") &&
		num("status", "availableReplicas") >= num("status", "updatedReplicas")
}

// splitArgs splits a command line as a POSIX shell would for the lessons'
// commands: words, 'single' and "double" quotes.
func splitArgs(line string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unterminated quote in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}

// yamlToJSON converts a manifest to JSON, as kubectl does before sending.
func yamlToJSON(doc string) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
		return nil, err
	}
	return json.Marshal(jsonable(v))
}

func jsonable(v any) any {
	switch x := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
	}
	return v
}
