package console

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

func filenameFlags() []*flagDef {
	return []*flagDef{
		{name: "filename", short: "f", kind: stringArrayFlag, usage: "Filename, directory, or URL to files"},
		{name: "recursive", short: "R", kind: boolFlag},
		{name: "kustomize", short: "k", kind: stringFlag},
	}
}

func writeFlags(manager string) []*flagDef {
	return append(append(outputFlags(), filenameFlags()...),
		&flagDef{name: "dry-run", kind: stringFlag, def: "none", noOpt: "unchanged"},
		&flagDef{name: "field-manager", kind: stringFlag, def: manager},
		&flagDef{name: "validate", kind: stringFlag, def: "strict", noOpt: "strict"},
		&flagDef{name: "save-config", kind: boolFlag},
	)
}

func createFlags() []*flagDef {
	return append(writeFlags("kubectl-create"),
		&flagDef{name: "from-literal", kind: stringArrayFlag},
		&flagDef{name: "from-file", kind: stringArrayFlag},
		&flagDef{name: "image", kind: stringArrayFlag},
		&flagDef{name: "replicas", short: "r", kind: intFlag, def: "1"},
		&flagDef{name: "port", kind: intFlag, def: "-1"},
		&flagDef{name: "edit", kind: boolFlag},
		&flagDef{name: "windows-line-endings", kind: boolFlag},
	)
}

func applyFlags() []*flagDef {
	return append(writeFlags("kubectl-client-side-apply"),
		&flagDef{name: "server-side", kind: boolFlag},
		&flagDef{name: "force-conflicts", kind: boolFlag},
		&flagDef{name: "force", kind: boolFlag},
		&flagDef{name: "overwrite", kind: boolFlag, def: "true"},
		&flagDef{name: "prune", kind: boolFlag},
		&flagDef{name: "selector", short: "l", kind: stringFlag},
		&flagDef{name: "wait", kind: boolFlag},
	)
}

func replaceFlags() []*flagDef {
	return append(writeFlags("kubectl-replace"),
		&flagDef{name: "force", kind: boolFlag},
		&flagDef{name: "subresource", kind: stringFlag},
	)
}

func patchFlags() []*flagDef {
	return append(writeFlags("kubectl-patch"),
		&flagDef{name: "patch", short: "p", kind: stringFlag},
		&flagDef{name: "patch-file", kind: stringFlag},
		&flagDef{name: "type", kind: stringFlag, def: "strategic"},
		&flagDef{name: "local", kind: boolFlag},
		&flagDef{name: "subresource", kind: stringFlag},
	)
}

func scaleFlags() []*flagDef {
	return append(append(outputFlags(), filenameFlags()...),
		&flagDef{name: "replicas", kind: intFlag, def: "-1"},
		&flagDef{name: "current-replicas", kind: intFlag, def: "-1"},
		&flagDef{name: "resource-version", kind: stringFlag},
		&flagDef{name: "timeout", kind: stringFlag, def: "0s"},
		&flagDef{name: "dry-run", kind: stringFlag, def: "none", noOpt: "unchanged"},
		&flagDef{name: "selector", short: "l", kind: stringFlag},
		&flagDef{name: "all", kind: boolFlag},
	)
}

func editFlags() []*flagDef {
	return append(writeFlags("kubectl-edit"),
		&flagDef{name: "windows-line-endings", kind: boolFlag},
		&flagDef{name: "subresource", kind: stringFlag},
	)
}

func deleteFlags() []*flagDef {
	return append(filenameFlags(),
		&flagDef{name: "output", short: "o", kind: stringFlag},
		&flagDef{name: "selector", short: "l", kind: stringFlag},
		&flagDef{name: "field-selector", kind: stringFlag},
		&flagDef{name: "all", kind: boolFlag},
		&flagDef{name: "all-namespaces", short: "A", kind: boolFlag},
		&flagDef{name: "ignore-not-found", kind: boolFlag},
		&flagDef{name: "now", kind: boolFlag},
		&flagDef{name: "force", kind: boolFlag},
		&flagDef{name: "grace-period", kind: intFlag, def: "-1"},
		&flagDef{name: "wait", kind: boolFlag, def: "true"},
		&flagDef{name: "cascade", kind: stringFlag, def: "background", noOpt: "background"},
		&flagDef{name: "dry-run", kind: stringFlag, def: "none", noOpt: "unchanged"},
		&flagDef{name: "timeout", kind: stringFlag, def: "0s"},
		&flagDef{name: "interactive", short: "i", kind: boolFlag},
		&flagDef{name: "raw", kind: stringFlag},
	)
}

// readManifests reads every -f: a console file, a URL (through the
// browser's fetch), or "-" (a heredoc, else the lab's editor).
func (k *kubectlRun) readManifests() ([]manifest, error) {
	files := k.fs.strs("filename")
	var out []manifest
	for _, f := range files {
		var data []byte
		source := f
		switch {
		case f == "-":
			source = "STDIN"
			if k.stdin != nil {
				b, err := io.ReadAll(k.stdin)
				if err != nil {
					return nil, err
				}
				data = b
			} else {
				if k.c.opts.Editor == nil {
					return nil, errors.New("no objects passed to " + k.verb + " (-f - reads a heredoc, and this console has no editor)")
				}
				text, err := k.c.opts.Editor.Text(k.ctx)
				if err != nil {
					return nil, err
				}
				k.note("-f - read the object in the lab's editor (type a heredoc after the command to give another)")
				data = []byte(text)
			}
		case strings.HasPrefix(f, "http://") || strings.HasPrefix(f, "https://"):
			if k.c.opts.Fetch == nil {
				k.note("the lab cannot fetch URLs here: paste the manifest in the editor and use -f -, or a heredoc")
				return nil, fmt.Errorf("unable to read URL %q, server reported the lab has no network access", f)
			}
			b, err := k.c.opts.Fetch(k.ctx, f)
			if err != nil {
				return nil, fmt.Errorf("unable to read URL %q, server reported %v", f, err)
			}
			data = b
		default:
			b, err := k.c.readFile(f)
			if err != nil {
				k.note("the console's files are the ones written with > (ls lists them); -f - reads a heredoc or the lab's editor")
				return nil, fmt.Errorf("the path %q does not exist", f)
			}
			data = b
		}
		ms, err := decodeManifests(data, source)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no objects passed to %s", k.verb)
	}
	return out, nil
}

// target resolves a manifest's resource and namespace.
func (k *kubectlRun) target(d *discovery, m manifest) (resource, string, error) {
	r, err := d.byKind(nestedString(m.obj, "apiVersion"), nestedString(m.obj, "kind"))
	if err != nil {
		return r, "", err
	}
	ns := ""
	if r.Namespaced {
		ns = metaNamespace(m.obj)
		if ns == "" {
			// kubectl's resource builder puts the namespace in the object.
			ns = k.ns
			setNested(m.obj, ns, "metadata", "namespace")
		} else if k.nsSet && ns != k.ns {
			return r, "", toolErrorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", ns, k.ns, ns)
		}
	}
	return r, ns, nil
}

func (k *kubectlRun) writeQuery() url.Values {
	q := url.Values{}
	if m := k.fs.str("field-manager"); m != "" {
		q.Set("fieldManager", m)
	}
	switch k.fs.str("validate") {
	case "strict", "true":
		q.Set("fieldValidation", "Strict")
	case "warn":
		q.Set("fieldValidation", "Warn")
	case "ignore", "false":
		q.Set("fieldValidation", "Ignore")
	}
	if k.fs.str("dry-run") == "server" {
		q.Set("dryRun", "All")
	}
	return q
}

// dryRun reports whether --dry-run=client: nothing is sent.
func (k *kubectlRun) dryRunClient() bool {
	return k.fs.str("dry-run") == "client" || k.fs.str("dry-run") == "unchanged"
}

func dryRunSuffix(k *kubectlRun) string {
	switch k.fs.str("dry-run") {
	case "client", "unchanged":
		return " (dry run)"
	case "server":
		return " (server dry run)"
	}
	return ""
}

// printResult prints what a write did: "configmap/demo created", or the
// object with -o.
func (k *kubectlRun) printResult(r resource, o obj, name, operation string) error {
	f, err := parseOutput(k.fs.str("output"))
	if err != nil {
		return err
	}
	if f.kind == "" || f.kind == "wide" {
		fmt.Fprintf(k.stdout, "%s/%s %s%s\n", r.kindName(), name, operation, dryRunSuffix(k))
		return nil
	}
	if f.kind == "name" {
		fmt.Fprintf(k.stdout, "%s/%s\n", r.kindName(), name)
		return nil
	}
	p, err := k.newObjectPrinter(f, r)
	if err != nil {
		return err
	}
	return p.print(o)
}

func (k *kubectlRun) forEachManifest(fn func(d *discovery, m manifest) error) int {
	d, err := k.discover()
	if err != nil {
		return k.fail(err)
	}
	ms, err := k.readManifests()
	if err != nil {
		return k.fail(err)
	}
	status := 0
	for _, m := range ms {
		if err := fn(d, m); err != nil {
			k.fail(err)
			status = 1
		}
	}
	return status
}

func kubectlCreate(k *kubectlRun) int {
	if len(k.fs.strs("filename")) > 0 {
		return k.forEachManifest(func(d *discovery, m manifest) error {
			r, ns, err := k.target(d, m)
			if err != nil {
				return err
			}
			if k.fs.bool("save-config") {
				setLastApplied(m.obj)
			}
			return k.create(r, ns, m.obj, m.source)
		})
	}
	if len(k.pos) == 0 {
		return k.errorf("must specify one of -f and -k")
	}
	what, args := k.pos[0], k.pos[1:]
	switch what {
	case "configmap", "cm":
		return k.createConfigMap(args)
	case "deployment", "deploy":
		return k.createDeployment(args)
	case "secret":
		if len(args) == 0 || args[0] != "generic" {
			k.note("kubectl create secret in the lab makes generic secrets")
			return k.errorf("unknown command %q for \"kubectl create secret\"", strings.Join(args[:min(len(args), 1)], ""))
		}
		return k.createSecret(args[1:])
	case "namespace", "ns":
		if len(args) != 1 {
			return k.errorf("exactly one NAME is required, got %d", len(args))
		}
		d, err := k.discover()
		if err != nil {
			return k.fail(err)
		}
		r, _ := d.lookup("namespaces")
		return k.failIf(k.create(r, "", obj{"apiVersion": "v1", "kind": "Namespace", "metadata": obj{"name": args[0]}, "spec": obj{}, "status": obj{}}, ""))
	}
	k.note("kubectl create in the lab makes configmap, deployment and namespace objects, or anything with -f")
	return k.errorf("unknown command %q for \"kubectl create\"", what)
}

func (k *kubectlRun) failIf(err error) int {
	if err != nil {
		return k.fail(err)
	}
	return 0
}

func (k *kubectlRun) create(r resource, ns string, o obj, source string) error {
	if k.dryRunClient() {
		return k.printResult(r, o, metaName(o), "created")
	}
	body, _ := json.Marshal(o)
	data, err := k.do("POST", r.path(ns, ""), k.writeQuery(), body, "application/json", "application/json")
	if err != nil {
		if source != "" {
			return withSource(err, "creating", source)
		}
		return err
	}
	created, err := decodeObject(data)
	if err != nil {
		return err
	}
	return k.printResult(r, created, metaName(created), "created")
}

func (k *kubectlRun) createConfigMap(args []string) int {
	if len(args) != 1 {
		return k.errorf("exactly one NAME is required, got %d\nSee 'kubectl create configmap -h' for help and examples", len(args))
	}
	data := obj{}
	for _, lit := range k.fs.strs("from-literal") {
		key, v, ok := strings.Cut(lit, "=")
		if !ok || key == "" {
			return k.errorf("invalid literal source %s, expected key=value", lit)
		}
		if _, dup := data[key]; dup {
			return k.errorf("cannot add key %q, another key by that name already exists in Data for ConfigMap %q", key, args[0])
		}
		data[key] = v
	}
	for _, f := range k.fs.strs("from-file") {
		key, name, ok := strings.Cut(f, "=")
		if !ok {
			name, key = f, f[strings.LastIndex(f, "/")+1:]
		}
		b, err := k.c.readFile(name)
		if err != nil {
			return k.errorf("error reading %s: no such file or directory", name)
		}
		data[key] = string(b)
	}
	d, err := k.discover()
	if err != nil {
		return k.fail(err)
	}
	r, err := d.lookup("configmaps")
	if err != nil {
		return k.fail(err)
	}
	o := obj{"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj{"name": args[0]}}
	if len(data) > 0 {
		o["data"] = data
	}
	if k.nsSet {
		setNested(o, k.ns, "metadata", "namespace")
	}
	return k.failIf(wrapCreate(k.create(r, k.ns, o, ""), "configmap"))
}

// wrapCreate is how kubectl create's generators report a failed create.
func wrapCreate(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("failed to create %s: %v", what, err)
}

func (k *kubectlRun) createSecret(args []string) int {
	if len(args) != 1 {
		return k.errorf("exactly one NAME is required, got %d\nSee 'kubectl create secret generic -h' for help and examples", len(args))
	}
	data := obj{}
	for _, lit := range k.fs.strs("from-literal") {
		key, v, ok := strings.Cut(lit, "=")
		if !ok || key == "" {
			return k.errorf("invalid literal source %s, expected key=value", lit)
		}
		data[key] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	d, err := k.discover()
	if err != nil {
		return k.fail(err)
	}
	r, err := d.lookup("secrets")
	if err != nil {
		return k.fail(err)
	}
	o := obj{"apiVersion": "v1", "kind": "Secret", "metadata": obj{"name": args[0]}, "type": "Opaque"}
	if len(data) > 0 {
		o["data"] = data
	}
	return k.failIf(wrapCreate(k.create(r, k.ns, o, ""), "secret"))
}

func (k *kubectlRun) createDeployment(args []string) int {
	if len(args) != 1 {
		return k.errorf("exactly one NAME is required, got %d\nSee 'kubectl create deployment -h' for help and examples", len(args))
	}
	images := k.fs.strs("image")
	if len(images) == 0 {
		return k.errorf("required flag(s) \"image\" not set")
	}
	name := args[0]
	labels := obj{"app": name}
	var containers []any
	seen := map[string]int{}
	for _, img := range images {
		n := img[strings.LastIndex(img, "/")+1:]
		if i := strings.IndexAny(n, ":@"); i >= 0 {
			n = n[:i]
		}
		n = strings.ReplaceAll(n, "_", "-")
		if c := seen[n]; c > 0 {
			seen[n]++
			n = fmt.Sprintf("%s-%d", n, c)
		} else {
			seen[n] = 1
		}
		c := obj{"image": img, "name": n, "resources": obj{}}
		if p := k.fs.int("port"); p >= 0 {
			c["ports"] = []any{obj{"containerPort": p}}
		}
		containers = append(containers, c)
	}
	o := obj{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": obj{"labels": labels, "name": name},
		"spec": obj{"replicas": k.fs.int("replicas"), "selector": obj{"matchLabels": obj{"app": name}}, "strategy": obj{},
			"template": obj{"metadata": obj{"labels": obj{"app": name}}, "spec": obj{"containers": containers}}},
		"status": obj{}}
	d, err := k.discover()
	if err != nil {
		return k.fail(err)
	}
	r, err := d.lookup("deployments.apps")
	if err != nil {
		return k.fail(err)
	}
	return k.failIf(wrapCreate(k.create(r, k.ns, o, ""), "deployment"))
}

func kubectlReplace(k *kubectlRun) int {
	if len(k.fs.strs("filename")) == 0 {
		return k.errorf("must specify --filename to replace")
	}
	return k.forEachManifest(func(d *discovery, m manifest) error {
		r, ns, err := k.target(d, m)
		if err != nil {
			return err
		}
		name := metaName(m.obj)
		if name == "" {
			return errors.New("name is required to replace an object")
		}
		if k.fs.bool("force") {
			k.note("replace --force deletes and recreates the object; the console replaces it in place instead")
		}
		if k.dryRunClient() {
			return k.printResult(r, m.obj, name, "replaced")
		}
		body, _ := json.Marshal(m.obj)
		data, err := k.do("PUT", r.path(ns, name), k.writeQuery(), body, "application/json", "application/json")
		if err != nil {
			return withSource(err, "replacing", m.source)
		}
		o, err := decodeObject(data)
		if err != nil {
			return err
		}
		return k.printResult(r, o, name, "replaced")
	})
}

// objects resolves TYPE NAME..., TYPE/NAME... or -f into the objects a
// command acts on, read from the server (kubectl's builder does the same).
type target struct {
	r      resource
	ns     string
	name   string
	source string
	live   obj
	file   obj
}

func (k *kubectlRun) targets(needNames bool) ([]target, error) {
	d, err := k.discover()
	if err != nil {
		return nil, err
	}
	var out []target
	if len(k.fs.strs("filename")) > 0 {
		ms, err := k.readManifests()
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			r, ns, err := k.target(d, m)
			if err != nil {
				return nil, err
			}
			out = append(out, target{r: r, ns: ns, name: metaName(m.obj), source: m.source, file: m.obj})
		}
		return out, nil
	}
	if len(k.pos) == 0 {
		return nil, errors.New("you must specify the type of resource")
	}
	r, names, err := k.typeArgs(d, k.pos)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 && needNames {
		return nil, errors.New("resource(s) were provided, but no name was specified")
	}
	for _, n := range names {
		out = append(out, target{r: r, ns: k.nsFor(r), name: n})
	}
	return out, nil
}

func kubectlPatch(k *kubectlRun) int {
	patch := k.fs.str("patch")
	if pf := k.fs.str("patch-file"); pf != "" {
		b, err := k.c.readFile(pf)
		if err != nil {
			return k.errorf("unable to read patch file: open %s: no such file or directory", pf)
		}
		patch = string(b)
	}
	if patch == "" {
		return k.errorf("must specify -p to patch")
	}
	js, err := toJSON(patch)
	if err != nil {
		return k.errorf("unable to parse %q: %v", patch, err)
	}
	ct := map[string]string{"strategic": "application/strategic-merge-patch+json", "merge": "application/merge-patch+json",
		"json": "application/json-patch+json"}[strings.ToLower(k.fs.str("type"))]
	if ct == "" {
		return k.errorf("--type must be one of [json merge strategic], not %q", k.fs.str("type"))
	}
	ts, err := k.targets(true)
	if err != nil {
		return k.fail(err)
	}
	status := 0
	for _, t := range ts {
		sub := []string{}
		if s := k.fs.str("subresource"); s != "" {
			sub = append(sub, s)
		}
		live, err := k.getObject(t.r.path(t.ns, t.name, sub...), nil)
		if err != nil {
			k.fail(err)
			status = 1
			continue
		}
		q := url.Values{"fieldManager": {k.fs.str("field-manager")}}
		if k.fs.str("dry-run") == "server" {
			q.Set("dryRun", "All")
		}
		data, err := k.do("PATCH", t.r.path(t.ns, t.name, sub...), q, js, ct, "application/json")
		if err != nil {
			k.fail(err)
			status = 1
			continue
		}
		patched, err := decodeObject(data)
		if err != nil {
			return k.fail(err)
		}
		op := "patched"
		if reflect.DeepEqual(live, patched) {
			op = "patched (no change)"
		}
		if err := k.printResult(t.r, patched, t.name, op); err != nil {
			return k.fail(err)
		}
	}
	return status
}

// toJSON is apimachinery's yaml.ToJSON: text that looks like JSON is sent
// as it is (the server reports what is wrong with it), anything else is
// read as YAML.
func toJSON(s string) ([]byte, error) {
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		return []byte(s), nil
	}
	return yaml.YAMLToJSON([]byte(s))
}

func kubectlScale(k *kubectlRun) int {
	replicas := k.fs.int("replicas")
	if replicas < 0 {
		if !k.fs.changed("replicas") {
			return k.errorf("required flag(s) \"replicas\" not set")
		}
		return k.errorf("The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
	}
	ts, err := k.targets(true)
	if err != nil {
		return k.fail(err)
	}
	status := 0
	for _, t := range ts {
		if _, err := k.getObject(t.r.path(t.ns, t.name), nil); err != nil {
			k.fail(err)
			status = 1
			continue
		}
		if err := k.scale(t, replicas); err != nil {
			k.fail(err)
			status = 1
			continue
		}
		fmt.Fprintf(k.stdout, "%s/%s scaled%s\n", t.r.kindName(), t.name, dryRunSuffix(k))
	}
	return status
}

// scale is kubectl's ScaleSimple in its retry loop: with a precondition
// (--current-replicas, --resource-version) it reads the scale
// subresource, checks it and writes it back, retrying a conflict; without,
// it patches spec.replicas.
func (k *kubectlRun) scale(t target, replicas int64) error {
	path := t.r.path(t.ns, t.name, "scale")
	current, rv := k.fs.int("current-replicas"), k.fs.str("resource-version")
	if current < 0 && rv == "" {
		if k.dryRunClient() {
			return nil
		}
		body := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
		_, err := k.do("PATCH", path, nil, body, "application/merge-patch+json", "application/json")
		return err
	}
	for attempt := 0; ; attempt++ {
		sc, err := k.getObject(path, nil)
		if err != nil {
			return err
		}
		have, _ := nestedInt(sc, "spec", "replicas")
		if current >= 0 && current != have {
			return toolErrorf("Expected replicas to be %d, was %d", current, have)
		}
		if rv != "" && rv != resourceVersion(sc) {
			return toolErrorf("Expected resource version to be %s, was %s", rv, resourceVersion(sc))
		}
		if k.dryRunClient() {
			return nil
		}
		setNested(sc, replicas, "spec", "replicas")
		body, _ := json.Marshal(sc)
		_, err = k.do("PUT", path, nil, body, "application/json", "application/json")
		var se *statusError
		if errors.As(err, &se) && se.code == 409 && attempt < 5 {
			if err := k.c.opts.Sleep(k.ctx, time.Second); err != nil {
				return err
			}
			continue
		}
		return err
	}
}

func kubectlDelete(k *kubectlRun) int {
	var ts []target
	if len(k.fs.strs("filename")) > 0 {
		var err error
		if ts, err = k.targets(true); err != nil {
			return k.fail(err)
		}
	} else {
		if len(k.pos) == 0 {
			return k.errorf("You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'")
		}
		d, err := k.discover()
		if err != nil {
			return k.fail(err)
		}
		r, names, err := k.typeArgs(d, k.pos)
		if err != nil {
			return k.fail(err)
		}
		sel := k.fs.str("selector")
		if len(names) == 0 {
			if !k.fs.bool("all") && sel == "" && k.fs.str("field-selector") == "" {
				return k.errorf("resource(s) were provided, but no name was specified")
			}
			ns := k.nsFor(r)
			if k.fs.bool("all-namespaces") {
				ns = ""
			}
			q := url.Values{}
			if sel != "" {
				q.Set("labelSelector", sel)
			}
			if fsel := k.fs.str("field-selector"); fsel != "" {
				q.Set("fieldSelector", fsel)
			}
			l, err := k.getObject(r.path(ns, ""), q)
			if err != nil {
				return k.fail(err)
			}
			items, _ := l["items"].([]any)
			for _, it := range items {
				io, _ := it.(obj)
				ts = append(ts, target{r: r, ns: metaNamespace(io), name: metaName(io)})
			}
			if len(ts) == 0 {
				if ns != "" {
					fmt.Fprintf(k.stderr, "No resources found in %s namespace.\n", ns)
				} else {
					fmt.Fprintln(k.stderr, "No resources found")
				}
				return 0
			}
		} else {
			for _, n := range names {
				ts = append(ts, target{r: r, ns: k.nsFor(r), name: n})
			}
		}
	}
	status := 0
	for _, t := range ts {
		if k.dryRunClient() {
			fmt.Fprintf(k.stdout, "%s %q deleted (dry run)\n", t.r.kindName(), t.name)
			continue
		}
		opts := obj{"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}
		if k.fs.bool("now") {
			opts["gracePeriodSeconds"] = int64(1)
		}
		if g := k.fs.int("grace-period"); g >= 0 {
			opts["gracePeriodSeconds"] = g
		}
		switch k.fs.str("cascade") {
		case "foreground":
			opts["propagationPolicy"] = "Foreground"
		case "orphan", "false":
			opts["propagationPolicy"] = "Orphan"
		}
		body, _ := json.Marshal(opts)
		q := url.Values{}
		if k.fs.str("dry-run") == "server" {
			q.Set("dryRun", "All")
		}
		_, err := k.do("DELETE", t.r.path(t.ns, t.name), q, body, "application/json", "application/json")
		if err != nil {
			if isNotFound(err) && k.fs.bool("ignore-not-found") {
				continue
			}
			if t.source != "" {
				err = withSource(err, "deleting", t.source)
			}
			k.fail(err)
			status = 1
			continue
		}
		if k.fs.str("output") == "name" {
			fmt.Fprintf(k.stdout, "%s/%s\n", t.r.kindName(), t.name)
			continue
		}
		fmt.Fprintf(k.stdout, "%s %q deleted%s\n", t.r.kindName(), t.name, dryRunSuffix(k))
	}
	return status
}

// setLastApplied records the object as its own last applied configuration,
// as kubectl's GetModifiedConfiguration does (with the annotations map it
// leaves behind, empty or not).
func setLastApplied(o obj) {
	ann := nestedMap(o, "metadata", "annotations")
	if ann == nil {
		ann = obj{}
		setNested(o, ann, "metadata", "annotations")
	}
	delete(ann, lastAppliedAnnotation)
	b, _ := json.Marshal(o)
	setNested(o, string(b)+"\n", "metadata", "annotations", lastAppliedAnnotation)
}

func kubectlApply(k *kubectlRun) int {
	if len(k.fs.strs("filename")) == 0 {
		return k.errorf("must specify one of -f and -k")
	}
	if k.fs.bool("server-side") {
		if !k.fs.changed("field-manager") {
			k.fs.values["field-manager"] = []string{"kubectl"}
		}
		return k.forEachManifest(func(d *discovery, m manifest) error {
			r, ns, err := k.target(d, m)
			if err != nil {
				return err
			}
			return k.serverSideApply(r, ns, m)
		})
	}
	if k.fs.bool("force-conflicts") {
		return k.errorf("--force-conflicts only works with --server-side")
	}
	return k.forEachManifest(func(d *discovery, m manifest) error {
		r, ns, err := k.target(d, m)
		if err != nil {
			return err
		}
		return k.clientSideApply(r, ns, m)
	})
}

func (k *kubectlRun) serverSideApply(r resource, ns string, m manifest) error {
	q := url.Values{"fieldManager": {k.fs.str("field-manager")}}
	if k.fs.bool("force-conflicts") {
		q.Set("force", "true")
	}
	if k.fs.str("dry-run") == "server" {
		q.Set("dryRun", "All")
	}
	body, _ := json.Marshal(m.obj)
	name := metaName(m.obj)
	data, err := k.do("PATCH", r.path(ns, name), q, body, "application/apply-patch+yaml", "application/json")
	if err != nil {
		var se *statusError
		if errors.As(err, &se) && se.code == 409 {
			return errors.New(applyConflictMessage(se.message))
		}
		return withSource(err, "applying patch", m.source)
	}
	o, err := decodeObject(data)
	if err != nil {
		return err
	}
	return k.printResult(r, o, name, "serverside-applied")
}

// applyConflictMessage is kubectl's advice after a server-side apply
// conflict.
func applyConflictMessage(serverMessage string) string {
	return serverMessage + `
Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the ` + "`--force-conflicts`" + ` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts`
}

func (k *kubectlRun) clientSideApply(r resource, ns string, m manifest) error {
	name := metaName(m.obj)
	modified := deepCopy(m.obj).(obj)
	setLastApplied(modified)
	live, err := k.getObject(r.path(ns, name), nil)
	if isNotFound(err) {
		if k.dryRunClient() {
			return k.printResult(r, modified, name, "created")
		}
		body, _ := json.Marshal(modified)
		data, err := k.do("POST", r.path(ns, ""), k.writeQuery(), body, "application/json", "application/json")
		if err != nil {
			return withSource(err, "creating", m.source)
		}
		o, err := decodeObject(data)
		if err != nil {
			return err
		}
		return k.printResult(r, o, name, "created")
	}
	if err != nil {
		return withSource(err, "retrieving current configuration of:\nResource: "+fmt.Sprintf("%q, GroupVersionKind: %q\nName: %q, Namespace: %q\nfrom server for", r.groupVersion()+", Resource="+r.Name, r.groupVersion()+", Kind="+r.Kind, name, ns), m.source)
	}
	schema := k.schemaFor(r)
	for attempt := 1; ; attempt++ {
		var original obj
		if la := nestedString(live, "metadata", "annotations", lastAppliedAnnotation); la != "" {
			original, _ = decodeObject([]byte(la))
		} else if attempt == 1 {
			fmt.Fprintf(k.stderr, "Warning: resource %s/%s is missing the %s annotation which is required by kubectl apply. kubectl apply should only be used on resources created declaratively by either kubectl create --save-config or kubectl apply. The missing annotation will be patched automatically.\n", r.Name, name, lastAppliedAnnotation)
		}
		if original == nil {
			original = obj{}
		}
		patch := threeWayPatch(original, modified, live, schema)
		if len(patch) == 0 {
			return k.printResult(r, live, name, "unchanged")
		}
		if k.dryRunClient() {
			return k.printResult(r, live, name, "configured")
		}
		body, _ := json.Marshal(patch)
		data, err := k.do("PATCH", r.path(ns, name), k.writeQuery(), body, "application/strategic-merge-patch+json", "application/json")
		var se *statusError
		if errors.As(err, &se) && se.code == 409 && attempt < 5 {
			// kubectl re-reads the object and tries again, pausing a
			// second before every try after the second.
			if attempt > 1 {
				if err := k.c.opts.Sleep(k.ctx, time.Second); err != nil {
					return err
				}
			}
			if live, err = k.getObject(r.path(ns, name), nil); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			err = withSource(err, "patching", m.source)
			return withSource(err, fmt.Sprintf("applying patch:\n%s\nto:\nResource: %q, GroupVersionKind: %q\nName: %q, Namespace: %q\nfor:",
				body, r.groupVersion()+", Resource="+r.Name, r.groupVersion()+", Kind="+r.Kind, name, ns), m.source)
		}
		o, err := decodeObject(data)
		if err != nil {
			return err
		}
		return k.printResult(r, o, name, "configured")
	}
}

const editHeader = `# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
`

func kubectlEdit(k *kubectlRun) int {
	if k.c.opts.Editor == nil {
		return k.errorf("kubectl edit opens the lab's editor, and this console has none")
	}
	ts, err := k.targets(true)
	if err != nil {
		return k.fail(err)
	}
	format := k.fs.str("output")
	status := 0
	for _, t := range ts {
		live, err := k.getObject(t.r.path(t.ns, t.name), nil)
		if err != nil {
			k.fail(err)
			status = 1
			continue
		}
		shown := live
		if !k.fs.bool("show-managed-fields") {
			shown = withoutManagedFields(live)
		}
		text := editHeader + printYAML(shown)
		if format == "json" {
			text = printJSON(shown)
		}
		k.streaming()
		edited, err := k.c.opts.Editor.Edit(k.ctx, text)
		if errors.Is(err, ErrEditCanceled) {
			fmt.Fprintln(k.stderr, "Edit cancelled, no changes made.")
			continue
		}
		if err != nil {
			return k.fail(err)
		}
		body := stripComments(edited)
		if strings.TrimSpace(body) == "" {
			fmt.Fprintln(k.stderr, "Edit cancelled, saved file was empty.")
			continue
		}
		if body == stripComments(text) {
			fmt.Fprintln(k.stderr, "Edit cancelled, no changes made.")
			continue
		}
		js, err := yaml.YAMLToJSON([]byte(body))
		if err != nil {
			k.errorf("%v", err)
			status = 1
			continue
		}
		modified, err := decodeObject(js)
		if err != nil {
			k.errorf("%v", err)
			status = 1
			continue
		}
		for _, f := range [][]string{{"apiVersion"}, {"kind"}, {"metadata", "name"}} {
			if !reflect.DeepEqual(nested(shown, f...), nested(modified, f...)) {
				k.errorf("At least one of apiVersion, kind and name was changed")
				status = 1
				continue
			}
		}
		patch := twoWayPatch(shown, modified, k.schemaFor(t.r))
		if len(patch) == 0 {
			fmt.Fprintln(k.stderr, "Edit cancelled, no changes made.")
			continue
		}
		pb, _ := json.Marshal(patch)
		_, err = k.do("PATCH", t.r.path(t.ns, t.name), url.Values{"fieldManager": {k.fs.str("field-manager")}}, pb, "application/strategic-merge-patch+json", "application/json")
		if err != nil {
			k.fail(err)
			status = 1
			continue
		}
		fmt.Fprintf(k.stdout, "%s/%s edited\n", t.r.kindName(), t.name)
	}
	return status
}

func stripComments(s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

func labelFlags(manager string) func() []*flagDef {
	return func() []*flagDef {
		return append(append(outputFlags(), filenameFlags()...),
			&flagDef{name: "overwrite", kind: boolFlag},
			&flagDef{name: "resource-version", kind: stringFlag},
			&flagDef{name: "all", kind: boolFlag},
			&flagDef{name: "selector", short: "l", kind: stringFlag},
			&flagDef{name: "list", kind: boolFlag},
			&flagDef{name: "local", kind: boolFlag},
			&flagDef{name: "dry-run", kind: stringFlag, def: "none", noOpt: "unchanged"},
			&flagDef{name: "field-manager", kind: stringFlag, def: manager},
		)
	}
}

// kubectlLabel is kubectl label and kubectl annotate: KEY=VALUE adds or
// (with --overwrite) changes, KEY- removes; a merge patch carries the
// change, with the resourceVersion as a precondition if one is given.
func kubectlLabel(k *kubectlRun) int {
	field, past := "labels", "labeled"
	if k.verb == "annotate" {
		field, past = "annotations", "annotated"
	}
	var objArgs []string
	set, remove := map[string]string{}, []string{}
	for _, a := range k.pos {
		switch {
		case strings.Contains(a, "="):
			key, v, _ := strings.Cut(a, "=")
			set[key] = v
		case strings.HasSuffix(a, "-") && len(objArgs) > 0:
			remove = append(remove, strings.TrimSuffix(a, "-"))
		default:
			objArgs = append(objArgs, a)
		}
	}
	if len(set) == 0 && len(remove) == 0 {
		return k.errorf("at least one %s update is required", strings.TrimSuffix(field, "s"))
	}
	k.pos = objArgs
	ts, err := k.targets(true)
	if err != nil {
		return k.fail(err)
	}
	status := 0
	for _, t := range ts {
		live, err := k.getObject(t.r.path(t.ns, t.name), nil)
		if err != nil {
			k.fail(err)
			status = 1
			continue
		}
		cur := nestedMap(live, "metadata", field)
		keys := make([]string, 0, len(set))
		for key := range set {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		bad := false
		for _, key := range keys {
			if old, ok := cur[key]; ok && !k.fs.bool("overwrite") && old != set[key] {
				k.errorf("'%s' already has a value (%v), and --overwrite is false", key, old)
				bad = true
			}
		}
		if bad {
			status = 1
			continue
		}
		change := obj{}
		for key, v := range set {
			if cur[key] != v {
				change[key] = v
			}
		}
		for _, key := range remove {
			if _, ok := cur[key]; ok {
				change[key] = nil
			} else {
				fmt.Fprintf(k.stderr, "%s %q not found.\n", strings.TrimSuffix(field, "s"), key)
			}
		}
		md := obj{}
		if len(change) > 0 {
			md[field] = change
		}
		if rv := k.fs.str("resource-version"); rv != "" {
			md["resourceVersion"] = rv
		}
		op := past
		if len(md) == 0 {
			op = "not " + past
		} else {
			body, _ := json.Marshal(obj{"metadata": md})
			if _, err := k.do("PATCH", t.r.path(t.ns, t.name), url.Values{"fieldManager": {k.fs.str("field-manager")}}, body, "application/merge-patch+json", "application/json"); err != nil {
				k.fail(err)
				status = 1
				continue
			}
		}
		fmt.Fprintf(k.stdout, "%s/%s %s\n", t.r.kindName(), t.name, op)
	}
	return status
}

var _ = strconv.Itoa
