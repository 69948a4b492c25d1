package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"

	"github.com/rvplay/rvplay/engine/api"
)

// kubectl as kubectl 1.32 parses, runs and prints it, against the
// session's Kubernetes API (through the same requests kubectl sends, as
// JSON). Resource types come from the session's discovery documents, table
// columns from its server-side printing, strategic merge keys from its
// OpenAPI: nothing about a type is known to the console itself.

const kubeconfigNote = "the console always talks to this lab's session: --server, --kubeconfig, --context and the other connection flags are accepted and have no effect"

func kubectlGlobalFlags() []*flagDef {
	conn := func(name, short string) *flagDef {
		return &flagDef{name: name, short: short, kind: stringFlag, explain: kubeconfigNote}
	}
	return []*flagDef{
		{name: "namespace", short: "n", kind: stringFlag, usage: "If present, the namespace scope for this CLI request"},
		conn("kubeconfig", ""), conn("context", ""), conn("cluster", ""), conn("user", ""), conn("server", "s"),
		conn("token", ""), conn("as", ""), conn("certificate-authority", ""), conn("client-certificate", ""),
		conn("client-key", ""), conn("tls-server-name", ""), conn("username", ""), conn("password", ""), conn("cache-dir", ""),
		{name: "insecure-skip-tls-verify", kind: boolFlag, explain: kubeconfigNote},
		{name: "request-timeout", kind: stringFlag, def: "0"},
		{name: "v", short: "v", kind: intFlag},
		{name: "warnings-as-errors", kind: boolFlag},
		{name: "match-server-version", kind: boolFlag},
	}
}

// kubectlRun is one kubectl invocation.
type kubectlRun struct {
	*proc
	c     *Console
	ctx   context.Context
	fs    *flagSet
	verb  string
	pos   []string
	ns    string // the namespace to use
	nsSet bool   // -n was given
}

// errorf prints kubectl's client-side error line.
func (k *kubectlRun) errorf(format string, a ...any) int {
	fmt.Fprintf(k.stderr, "error: %s\n", fmt.Sprintf(format, a...))
	return 1
}

// fail prints an error as kubectl's CheckErr does.
func (k *kubectlRun) fail(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		fmt.Fprintln(k.stderr, se.kubectlMessage())
		return 1
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "error: ") {
		msg = "error: " + msg
	}
	fmt.Fprintln(k.stderr, msg)
	return 1
}

type kubectlCmd struct {
	name  string
	flags func() []*flagDef
	run   func(k *kubectlRun) int
}

var kubectlCommands []*kubectlCmd

func init() {
	kubectlCommands = []*kubectlCmd{
		{name: "get", flags: getCmdFlags, run: kubectlGet},
		{name: "describe", flags: describeFlags, run: kubectlDescribe},
		{name: "create", flags: createFlags, run: kubectlCreate},
		{name: "apply", flags: applyFlags, run: kubectlApply},
		{name: "replace", flags: replaceFlags, run: kubectlReplace},
		{name: "patch", flags: patchFlags, run: kubectlPatch},
		{name: "scale", flags: scaleFlags, run: kubectlScale},
		{name: "edit", flags: editFlags, run: kubectlEdit},
		{name: "delete", flags: deleteFlags, run: kubectlDelete},
		{name: "label", flags: labelFlags("kubectl-label"), run: kubectlLabel},
		{name: "annotate", flags: labelFlags("kubectl-annotate"), run: kubectlLabel},
		{name: "rollout", flags: rolloutFlags, run: kubectlRollout},
		{name: "version", flags: func() []*flagDef {
			return []*flagDef{{name: "client", kind: boolFlag}, {name: "output", short: "o", kind: stringFlag}}
		}, run: kubectlVersion},
		{name: "api-resources", flags: func() []*flagDef {
			return []*flagDef{{name: "namespaced", kind: boolFlag, def: "true"}, {name: "output", short: "o", kind: stringFlag}, {name: "api-group", kind: stringFlag}}
		}, run: kubectlAPIResources},
	}
}

func kubectlCommandNames() string {
	var ns []string
	for _, c := range kubectlCommands {
		ns = append(ns, c.name)
	}
	return strings.Join(ns, ", ")
}

func (c *Console) kubectl(ctx context.Context, p *proc) int {
	var cmd *kubectlCmd
	// The command is the first word that is not a flag or a flag's value.
	probe := newFlagSet("kubectl", kubectlGlobalFlags()...)
	for i := 0; i < len(p.args); i++ {
		a := p.args[i]
		if strings.HasPrefix(a, "-") {
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") {
				d := probe.byName[name]
				if d == nil && len(name) == 1 {
					d = probe.short[name]
				}
				if d != nil && d.kind != boolFlag {
					i++
				}
			}
			continue
		}
		for _, kc := range kubectlCommands {
			if kc.name == a {
				cmd = kc
			}
		}
		if cmd == nil {
			if a == "help" {
				fmt.Fprint(p.stdout, kubectlHelp())
				return 0
			}
			fmt.Fprintf(p.stderr, "Error: unknown command %q for \"kubectl\"\n", a)
			p.note("the console runs kubectl %s", kubectlCommandNames())
			return 1
		}
		break
	}
	if cmd == nil {
		fmt.Fprint(p.stdout, kubectlHelp())
		return 0
	}
	fs := newFlagSet("kubectl "+cmd.name, kubectlGlobalFlags()...)
	fs.add(cmd.flags()...)
	fs.normalize = func(n string) string { return strings.ReplaceAll(n, "_", "-") }
	pos, err := fs.parse(p.args)
	if err != nil {
		fmt.Fprintf(p.stderr, "Error: %v\nSee 'kubectl %s --help' for usage.\n", err, cmd.name)
		if strings.Contains(err.Error(), "resource-version") && cmd.name == "get" {
			p.note("kubectl get has no --resource-version; to read at a resourceVersion, ask the API itself: kubectl get --raw '/api/v1/namespaces/default/configmaps?resourceVersion=5&resourceVersionMatch=Exact'")
		} else {
			p.note("kubectl %s accepts: %s", cmd.name, flagNames(fs))
		}
		return 1
	}
	for _, n := range fs.explanations() {
		p.note("%s", n)
	}
	// Drop the command word itself.
	for i, a := range pos {
		if a == cmd.name {
			pos = append(pos[:i:i], pos[i+1:]...)
			break
		}
	}
	k := &kubectlRun{proc: p, c: c, ctx: ctx, fs: fs, verb: cmd.name, pos: pos, ns: "default"}
	if n := fs.str("namespace"); fs.changed("namespace") {
		k.ns, k.nsSet = n, true
	}
	if t := fs.str("request-timeout"); t != "0" && t != "" {
		d, err := parseKubectlTimeout(t)
		if err != nil {
			return k.errorf("invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)")
		}
		if d > 0 {
			var cancel context.CancelFunc
			k.ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
	}
	return cmd.run(k)
}

func flagNames(fs *flagSet) string {
	var ns []string
	for _, d := range fs.defs {
		if d.explain != "" {
			continue
		}
		n := "--" + d.name
		if d.short != "" {
			n = "-" + d.short + "/" + n
		}
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return strings.Join(ns, ", ")
}

func kubectlHelp() string {
	var b strings.Builder
	b.WriteString("kubectl controls the Kubernetes cluster manager.\n\nCommands in the lab:\n")
	for _, c := range kubectlCommands {
		fmt.Fprintf(&b, "  %s\n", c.name)
	}
	b.WriteString("\nUsage:\n  kubectl [flags] [options]\n")
	return b.String()
}

// toolMessage is an error worded as kubectl words it (capitals and full
// stops included).
type toolMessage string

func (m toolMessage) Error() string { return string(m) }

func toolErrorf(format string, a ...any) error { return toolMessage(fmt.Sprintf(format, a...)) }

// statusError is an error answer of the Kubernetes API (a Status).
type statusError struct {
	code    int
	reason  string
	message string
	details obj
}

func (e *statusError) Error() string { return e.message }

func (e *statusError) kubectlMessage() string {
	switch {
	case e.reason == "Unauthorized":
		return fmt.Sprintf("error: You must be logged in to the server (%s)", e.message)
	case e.reason != "":
		return fmt.Sprintf("Error from server (%s): %s", e.reason, e.message)
	}
	return "Error from server: " + e.message
}

// withSource is kubectl's AddSourceToErr: "error when creating "f": ...".
func withSource(err error, verb, source string) error {
	var se *statusError
	if errors.As(err, &se) {
		c := *se
		c.message = fmt.Sprintf("error when %s %q: %s", verb, source, se.message)
		return &c
	}
	return fmt.Errorf("error when %s %q: %v", verb, source, err)
}

// statusFrom reads an error answer as client-go does.
func statusFrom(code int, body []byte) *statusError {
	var s struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
		Reason  string `json:"reason"`
		Details obj    `json:"details"`
	}
	if json.Unmarshal(body, &s) == nil && s.Kind == "Status" {
		return &statusError{code: code, reason: s.Reason, message: s.Message, details: s.Details}
	}
	// client-go's errors for answers that are not a Status.
	reasons := map[int]string{400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
		406: "NotAcceptable", 409: "Conflict", 410: "Gone", 415: "UnsupportedMediaType", 422: "Invalid", 429: "TooManyRequests",
		500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout"}
	msgs := map[int]string{404: "the server could not find the requested resource", 409: "the server reported a conflict",
		405: "the server does not allow this method on the requested resource", 401: "the server has asked for the client to provide credentials",
		403: "the server does not allow access to the requested resource", 410: "the server has asked for the client to provide credentials",
		429: "the server has received too many requests and has asked us to try again later", 500: "an error on the server (\"" + strings.TrimSpace(string(body)) + "\") has prevented the request from succeeding",
		503: "the server is currently unable to handle the request", 504: "the server was unable to return a response in the time allotted, but may still be processing the request"}
	m, ok := msgs[code]
	if !ok {
		m = fmt.Sprintf("the server responded with the status code %d but did not return more information", code)
	}
	return &statusError{code: code, reason: reasons[code], message: m}
}

func isNotFound(err error) bool {
	var se *statusError
	return errors.As(err, &se) && se.code == 404
}

// do sends one request to the session's Kubernetes API.
func (k *kubectlRun) do(method, path string, q url.Values, body []byte, contentType, accept string) ([]byte, error) {
	h := api.Header{}
	if accept != "" {
		h.Set("Accept", accept)
	}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	resp := k.c.kube.Do(k.ctx, &api.Request{Method: method, Path: path, Query: q, Body: body, Header: h})
	data := resp.Body
	if resp.Stream != nil {
		for {
			f, err := resp.Stream.Next(k.ctx)
			if err != nil {
				break
			}
			data = append(data, f...)
		}
		resp.Stream.Close()
	}
	if resp.Status < 200 || resp.Status > 299 {
		return nil, statusFrom(resp.Status, data)
	}
	return data, nil
}

func (k *kubectlRun) getObject(path string, q url.Values) (obj, error) {
	data, err := k.do("GET", path, q, nil, "", "application/json")
	if err != nil {
		return nil, err
	}
	return decodeObject(data)
}

// watchStream opens a watch and returns its raw event lines.
func (k *kubectlRun) watchStream(path string, q url.Values, accept string, onEvent func(typ string, o obj) error) error {
	h := api.Header{}
	if accept != "" {
		h.Set("Accept", accept)
	}
	resp := k.c.kube.Do(k.ctx, &api.Request{Method: "GET", Path: path, Query: q, Header: h})
	if resp.Status < 200 || resp.Status > 299 {
		data := resp.Body
		if resp.Stream != nil {
			resp.Stream.Close()
		}
		return statusFrom(resp.Status, data)
	}
	if resp.Stream == nil {
		return nil
	}
	defer resp.Stream.Close()
	k.streaming()
	var pending []byte
	for {
		frame, err := resp.Stream.Next(k.ctx)
		if err != nil {
			if err == io.EOF || errors.Is(err, api.EOF) {
				return nil
			}
			return err
		}
		pending = append(pending, frame...)
		for {
			i := strings.IndexByte(string(pending), '\n')
			if i < 0 {
				break
			}
			line := pending[:i]
			pending = pending[i+1:]
			if len(strings.TrimSpace(string(line))) == 0 {
				continue
			}
			var ev struct {
				Type   string          `json:"type"`
				Object json.RawMessage `json:"object"`
			}
			if err := json.Unmarshal(line, &ev); err != nil {
				return err
			}
			o, err := decodeObject(ev.Object)
			if err != nil {
				return err
			}
			if err := onEvent(ev.Type, o); err != nil {
				return err
			}
		}
	}
}

// resource is one entry of the session's discovery: a resource type and
// how to address it.
type resource struct {
	Name         string   `json:"name"`
	SingularName string   `json:"singularName"`
	Namespaced   bool     `json:"namespaced"`
	Kind         string   `json:"kind"`
	Verbs        []string `json:"verbs"`
	ShortNames   []string `json:"shortNames"`
	Group        string   `json:"-"`
	Version      string   `json:"-"`
}

func (r resource) groupVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// path is the REST path of the collection (name "") or of one object.
func (r resource) path(ns, name string, sub ...string) string {
	p := "/apis/" + r.Group + "/" + r.Version
	if r.Group == "" {
		p = "/api/" + r.Version
	}
	if r.Namespaced && ns != "" {
		p += "/namespaces/" + ns
	}
	p += "/" + r.Name
	if name != "" {
		p += "/" + name
	}
	for _, s := range sub {
		p += "/" + s
	}
	return p
}

// groupResource is "configmaps" or "deployments.apps".
func (r resource) groupResource() string {
	if r.Group == "" {
		return r.Name
	}
	return r.Name + "." + r.Group
}

// kindName is how kubectl names the type in its messages: "configmap",
// "deployment.apps".
func (r resource) kindName() string {
	k := strings.ToLower(r.Kind)
	if r.Group == "" {
		return k
	}
	return k + "." + r.Group
}

// discovery is the session's list of resource types.
type discovery struct {
	resources []resource
}

func (k *kubectlRun) discover() (*discovery, error) {
	k.c.mu.Lock()
	d := k.c.discovery
	k.c.mu.Unlock()
	if d != nil {
		return d, nil
	}
	d = &discovery{}
	var gvs []string
	var core struct {
		Versions []string `json:"versions"`
	}
	data, err := k.do("GET", "/api", nil, nil, "", "application/json")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &core); err != nil {
		return nil, err
	}
	gvs = append(gvs, core.Versions...)
	var groups struct {
		Groups []struct {
			PreferredVersion struct {
				GroupVersion string `json:"groupVersion"`
			} `json:"preferredVersion"`
		} `json:"groups"`
	}
	data, err = k.do("GET", "/apis", nil, nil, "", "application/json")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &groups); err != nil {
		return nil, err
	}
	for _, g := range groups.Groups {
		gvs = append(gvs, g.PreferredVersion.GroupVersion)
	}
	for _, gv := range gvs {
		p := "/apis/" + gv
		if !strings.Contains(gv, "/") {
			p = "/api/" + gv
		}
		data, err := k.do("GET", p, nil, nil, "", "application/json")
		if err != nil {
			return nil, err
		}
		var l struct {
			Resources []resource `json:"resources"`
		}
		if err := json.Unmarshal(data, &l); err != nil {
			return nil, err
		}
		group, version, found := strings.Cut(gv, "/")
		if !found {
			group, version = "", gv
		}
		for _, r := range l.Resources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			r.Group, r.Version = group, version
			d.resources = append(d.resources, r)
		}
	}
	k.c.mu.Lock()
	k.c.discovery = d
	k.c.mu.Unlock()
	return d, nil
}

// lookup resolves a resource type argument as kubectl's RESTMapper does:
// plural, singular, short name or kind, optionally with .group or
// .version.group.
func (d *discovery) lookup(arg string) (resource, error) {
	a := strings.ToLower(arg)
	name, group, _ := strings.Cut(a, ".")
	version := ""
	if v, g, ok := strings.Cut(group, "."); ok && strings.HasPrefix(v, "v") && len(v) > 1 && v[1] >= '0' && v[1] <= '9' {
		version, group = v, g
	}
	for _, r := range d.resources {
		if group != "" && r.Group != group {
			continue
		}
		if version != "" && r.Version != version {
			continue
		}
		if r.Name == name || r.SingularName == name || strings.ToLower(r.Kind) == name {
			return r, nil
		}
		for _, s := range r.ShortNames {
			if s == name {
				return r, nil
			}
		}
	}
	return resource{}, fmt.Errorf("the server doesn't have a resource type %q", arg)
}

// byKind finds the resource of an object's apiVersion and kind.
func (d *discovery) byKind(apiVersion, kind string) (resource, error) {
	for _, r := range d.resources {
		if r.groupVersion() == apiVersion && r.Kind == kind {
			return r, nil
		}
	}
	group, version, found := strings.Cut(apiVersion, "/")
	if !found {
		group, version = "", apiVersion
	}
	return resource{}, fmt.Errorf("resource mapping not found for name: %q namespace: %q from %q: no matches for kind %q in version %q\nensure CRDs are installed first", "", "", "", kind, strings.TrimPrefix(group+"/"+version, "/"))
}

// typeArgs reads kubectl's TYPE NAME... or TYPE/NAME... arguments.
func (k *kubectlRun) typeArgs(d *discovery, args []string) (resource, []string, error) {
	if len(args) == 0 {
		return resource{}, nil, errors.New("you must specify the type of resource to get")
	}
	if t, n, ok := strings.Cut(args[0], "/"); ok {
		r, err := d.lookup(t)
		if err != nil {
			return resource{}, nil, err
		}
		names := []string{n}
		for _, a := range args[1:] {
			t2, n2, ok := strings.Cut(a, "/")
			if !ok {
				return resource{}, nil, fmt.Errorf("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'")
			}
			r2, err := d.lookup(t2)
			if err != nil {
				return resource{}, nil, err
			}
			if r2.Name != r.Name {
				return resource{}, nil, errors.New("the console handles one resource type per command")
			}
			names = append(names, n2)
		}
		return r, names, nil
	}
	if strings.Contains(args[0], ",") {
		return resource{}, nil, errors.New("the console handles one resource type per command (no TYPE1,TYPE2)")
	}
	r, err := d.lookup(args[0])
	if err != nil {
		return resource{}, nil, err
	}
	return r, args[1:], nil
}

// nsFor is the namespace a request for r uses ("" for cluster-scoped).
func (k *kubectlRun) nsFor(r resource) string {
	if !r.Namespaced {
		return ""
	}
	return k.ns
}

func kubectlVersion(k *kubectlRun) int {
	fmt.Fprintln(k.stdout, "Client Version: v1.32.4 (rvplay console)")
	if k.fs.bool("client") {
		return 0
	}
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	data, err := k.do("GET", "/version", nil, nil, "", "application/json")
	if err != nil {
		return k.fail(err)
	}
	_ = json.Unmarshal(data, &v)
	fmt.Fprintf(k.stdout, "Server Version: %s\n", v.GitVersion)
	return 0
}

func kubectlAPIResources(k *kubectlRun) int {
	d, err := k.discover()
	if err != nil {
		return k.fail(err)
	}
	tw := newTableWriter(k.stdout)
	tw.row([]string{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"})
	for _, r := range d.resources {
		tw.row([]string{r.Name, strings.Join(r.ShortNames, ","), r.groupVersion(), fmt.Sprint(r.Namespaced), r.Kind})
	}
	tw.flush()
	return 0
}
