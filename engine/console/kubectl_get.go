package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

func outputFlags() []*flagDef {
	return []*flagDef{
		{name: "output", short: "o", kind: stringFlag, usage: "Output format"},
		{name: "show-managed-fields", kind: boolFlag},
		{name: "allow-missing-template-keys", kind: boolFlag, def: "true"},
		{name: "template", kind: stringFlag},
	}
}

func getCmdFlags() []*flagDef {
	return append(outputFlags(),
		&flagDef{name: "selector", short: "l", kind: stringFlag},
		&flagDef{name: "field-selector", kind: stringFlag},
		&flagDef{name: "all-namespaces", short: "A", kind: boolFlag},
		&flagDef{name: "watch", short: "w", kind: boolFlag},
		&flagDef{name: "watch-only", kind: boolFlag},
		&flagDef{name: "output-watch-events", kind: boolFlag},
		&flagDef{name: "show-labels", kind: boolFlag},
		&flagDef{name: "show-kind", kind: boolFlag},
		&flagDef{name: "label-columns", short: "L", kind: stringSliceFlag},
		&flagDef{name: "no-headers", kind: boolFlag},
		&flagDef{name: "sort-by", kind: stringFlag},
		&flagDef{name: "ignore-not-found", kind: boolFlag},
		&flagDef{name: "raw", kind: stringFlag},
		&flagDef{name: "chunk-size", kind: intFlag, def: "500"},
		&flagDef{name: "subresource", kind: stringFlag},
		&flagDef{name: "server-print", kind: boolFlag, def: "true"},
	)
}

// outputFormat is a parsed -o.
type outputFormat struct {
	kind string // "", "wide", "json", "yaml", "name", "jsonpath", "custom-columns"
	arg  string
}

var allowedFormats = "custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml"

func parseOutput(o string) (outputFormat, error) {
	kind, arg, _ := strings.Cut(o, "=")
	switch kind {
	case "", "wide", "json", "yaml", "name":
		return outputFormat{kind: kind}, nil
	case "jsonpath", "custom-columns":
		if arg == "" {
			if kind == "jsonpath" {
				return outputFormat{}, errors.New("template format specified but no template given")
			}
			return outputFormat{}, errors.New("custom-columns format specified but no custom columns given")
		}
		return outputFormat{kind, arg}, nil
	}
	return outputFormat{}, fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: %s", o, allowedFormats)
}

// objectPrinter prints whole objects (-o json|yaml|name|jsonpath|
// custom-columns), as kubectl's non-table printers do.
type objectPrinter struct {
	k           *kubectlRun
	format      outputFormat
	r           resource
	managed     bool
	count       int
	jp          *jsonpathPrinter
	cc          *customColumns
	watchEvents bool
}

func (k *kubectlRun) newObjectPrinter(f outputFormat, r resource) (*objectPrinter, error) {
	p := &objectPrinter{k: k, format: f, r: r, managed: k.fs.bool("show-managed-fields")}
	switch f.kind {
	case "jsonpath":
		jp, err := newJSONPathPrinter(f.arg)
		if err != nil {
			return nil, err
		}
		p.jp = jp
	case "custom-columns":
		cc, err := newCustomColumns(f.arg, k.stdout, k.fs.bool("no-headers"))
		if err != nil {
			return nil, err
		}
		p.cc = cc
	}
	return p, nil
}

// print prints one object (a single item, a List, or a watch event).
func (p *objectPrinter) print(o obj) error {
	w := p.k.stdout
	if !p.managed && (p.format.kind == "json" || p.format.kind == "yaml") {
		o = withoutManagedFields(o)
		if ev, ok := o["object"].(obj); ok && p.watchEvents {
			o = obj{"type": o["type"], "object": withoutManagedFields(ev)}
		}
	}
	switch p.format.kind {
	case "json":
		fmt.Fprint(w, printJSON(o))
	case "yaml":
		if p.count > 0 {
			fmt.Fprintln(w, "---")
		}
		fmt.Fprint(w, printYAML(o))
	case "name":
		target := o
		if p.watchEvents {
			target, _ = o["object"].(obj)
		}
		if items, ok := target["items"].([]any); ok && strings.HasSuffix(nestedString(target, "kind"), "List") {
			for _, it := range items {
				io, _ := it.(obj)
				fmt.Fprintf(w, "%s/%s\n", p.r.kindName(), metaName(io))
			}
		} else {
			fmt.Fprintf(w, "%s/%s\n", p.r.kindName(), metaName(target))
		}
	case "jsonpath":
		if err := p.jp.print(w, o); err != nil {
			return err
		}
	case "custom-columns":
		var objs []obj
		if items, ok := o["items"].([]any); ok && strings.HasSuffix(nestedString(o, "kind"), "List") {
			for _, it := range items {
				io, _ := it.(obj)
				objs = append(objs, io)
			}
		} else {
			objs = []obj{o}
		}
		if err := p.cc.print(objs); err != nil {
			return err
		}
	}
	p.count++
	return nil
}

// listOf wraps items as the List kubectl prints.
func listOf(items []obj) obj {
	l := make([]any, len(items))
	for i, it := range items {
		l[i] = it
	}
	return obj{"apiVersion": "v1", "items": l, "kind": "List", "metadata": obj{"resourceVersion": ""}}
}

// withTypeMeta sets apiVersion and kind on a list's item, as unstructured
// list decoding does.
func withTypeMeta(o obj, r resource) obj {
	if o["apiVersion"] == nil {
		o["apiVersion"] = r.groupVersion()
	}
	if o["kind"] == nil {
		o["kind"] = r.Kind
	}
	return o
}

func kubectlGet(k *kubectlRun) int {
	if raw := k.fs.str("raw"); k.fs.changed("raw") {
		return k.getRaw(raw)
	}
	format, err := parseOutput(k.fs.str("output"))
	if err != nil {
		return k.errorf("%v", err)
	}
	if k.fs.bool("show-labels") && format.kind != "" && format.kind != "wide" {
		return k.errorf("--show-labels option cannot be used with %s printer", format.kind)
	}
	watching := k.fs.bool("watch") || k.fs.bool("watch-only")
	if k.fs.bool("output-watch-events") && !watching {
		return k.errorf("--output-watch-events option can only be used with --watch or --watch-only\nSee 'kubectl get -h' for help and examples")
	}
	if len(k.pos) == 0 {
		fmt.Fprintf(k.stderr, "You must specify the type of resource to get. Use \"kubectl api-resources\" for a complete list of supported resources.\n\nerror: Required resource not specified.\nUse \"kubectl explain <resource>\" for a detailed description of that resource (e.g. kubectl explain pods).\nSee 'kubectl get -h' for help and examples\n")
		return 1
	}
	d, err := k.discover()
	if err != nil {
		return k.fail(err)
	}
	r, names, err := k.typeArgs(d, k.pos)
	if err != nil {
		return k.fail(err)
	}
	allNs := k.fs.bool("all-namespaces")
	if allNs && len(names) > 0 {
		return k.errorf("a resource cannot be retrieved by name across all namespaces")
	}
	ns := k.nsFor(r)
	if allNs {
		ns = ""
	}
	if watching {
		if len(names) > 1 {
			return k.errorf("watch is only supported on individual resources and resource collections - more than 1 resource was found")
		}
		return k.watch(r, ns, names, format)
	}
	human := format.kind == "" || format.kind == "wide"
	if human {
		return k.getTable(r, ns, names, format.kind == "wide", allNs && r.Namespaced)
	}
	return k.getObjects(r, ns, names, format)
}

func (k *kubectlRun) listQuery(limit bool) url.Values {
	q := url.Values{}
	if s := k.fs.str("selector"); s != "" {
		q.Set("labelSelector", s)
	}
	if s := k.fs.str("field-selector"); s != "" {
		q.Set("fieldSelector", s)
	}
	if n := k.fs.int("chunk-size"); limit && n > 0 && k.fs.str("sort-by") == "" {
		q.Set("limit", strconv.FormatInt(n, 10))
	}
	return q
}

func (k *kubectlRun) getRaw(raw string) int {
	if len(k.pos) > 0 {
		return k.errorf("arguments may not be passed when --raw is specified")
	}
	if k.fs.changed("output") {
		return k.errorf("--raw and --output are mutually exclusive\nSee 'kubectl get -h' for help and examples")
	}
	if k.fs.bool("watch") || k.fs.bool("watch-only") || k.fs.str("selector") != "" {
		return k.errorf("--raw may not be specified with other flags that filter the server request or alter the output")
	}
	u, err := url.ParseRequestURI(raw)
	if err != nil {
		return k.errorf("--raw must be a valid URL path: %v\nSee 'kubectl get -h' for help and examples", err)
	}
	q := u.Query()
	if q.Get("watch") == "true" || q.Get("watch") == "1" {
		err := k.watchStream(u.Path, q, "application/json", func(typ string, o obj) error {
			b, _ := json.Marshal(obj{"type": typ, "object": o})
			fmt.Fprintln(k.stdout, string(b))
			return nil
		})
		if k.ctx.Err() != nil {
			return 130
		}
		if err != nil {
			return k.fail(err)
		}
		return 0
	}
	data, err := k.do("GET", u.Path, q, nil, "", "application/json, */*")
	if err != nil {
		return k.fail(err)
	}
	_, _ = k.stdout.Write(data)
	return 0
}

// getTable prints server-side Tables, as kubectl get does by default.
func (k *kubectlRun) getTable(r resource, ns string, names []string, wide, withNs bool) int {
	hp := &humanPrinter{tw: newTableWriter(k.stdout), wide: wide, withNamespace: withNs, showLabels: k.fs.bool("show-labels"),
		noHeaders: k.fs.bool("no-headers"), labelColumns: k.fs.strs("label-columns")}
	if k.fs.bool("show-kind") {
		hp.showKind = r.kindName() + "/"
	}
	status := 0
	printed := false
	if len(names) > 0 {
		for _, n := range names {
			var t table
			data, err := k.do("GET", r.path(ns, n), nil, nil, "", tableAccept)
			if err == nil {
				err = json.Unmarshal(data, &t)
			}
			if err != nil {
				if isNotFound(err) && k.fs.bool("ignore-not-found") {
					continue
				}
				k.fail(err)
				status = 1
				continue
			}
			unNumberTable(&t)
			hp.printTable(&t, "")
			printed = true
		}
		return status
	}
	q := k.listQuery(true)
	if k.fs.str("sort-by") != "" {
		q.Set("includeObject", "Object")
	}
	var all table
	for {
		var t table
		data, err := k.do("GET", r.path(ns, ""), q, nil, "", tableAccept)
		if err == nil {
			err = json.Unmarshal(data, &t)
		}
		if err != nil {
			return k.fail(err)
		}
		unNumberTable(&t)
		all.ColumnDefinitions = t.ColumnDefinitions
		all.Rows = append(all.Rows, t.Rows...)
		var meta struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(data, &meta)
		if meta.Metadata.Continue == "" {
			break
		}
		q.Set("continue", meta.Metadata.Continue)
	}
	if s := k.fs.str("sort-by"); s != "" && len(all.Rows) > 0 {
		objs := make([]obj, len(all.Rows))
		for i, row := range all.Rows {
			objs[i] = row.Object
		}
		order, err := sortOrder(objs, s)
		if err != nil {
			return k.fail(err)
		}
		rows := all.Rows
		all.Rows = nil
		for _, i := range order {
			all.Rows = append(all.Rows, rows[i])
		}
	}
	if len(all.Rows) > 0 {
		hp.printTable(&all, "")
		printed = true
	}
	if !printed && !k.fs.bool("ignore-not-found") {
		if ns != "" {
			fmt.Fprintf(k.stderr, "No resources found in %s namespace.\n", ns)
		} else {
			fmt.Fprintln(k.stderr, "No resources found")
		}
	}
	return status
}

// unNumberTable turns the cells and objects json.Unmarshal read as
// float64 into kubectl's integers.
func unNumberTable(t *table) {
	for i := range t.Rows {
		for j, c := range t.Rows[i].Cells {
			if f, ok := c.(float64); ok && f == float64(int64(f)) {
				t.Rows[i].Cells[j] = int64(f)
			}
		}
	}
}

// getObjects prints whole objects: one for one name, else a List.
func (k *kubectlRun) getObjects(r resource, ns string, names []string, f outputFormat) int {
	p, err := k.newObjectPrinter(f, r)
	if err != nil {
		return k.errorf("%v", err)
	}
	status := 0
	var items []obj
	if len(names) > 0 {
		for _, n := range names {
			o, err := k.getObject(r.path(ns, n), nil)
			if err != nil {
				if isNotFound(err) && k.fs.bool("ignore-not-found") {
					continue
				}
				k.fail(err)
				status = 1
				continue
			}
			items = append(items, o)
		}
		if len(names) == 1 {
			if len(items) == 1 {
				if err := p.print(items[0]); err != nil {
					return k.fail(err)
				}
			}
			return status
		}
	} else {
		q := k.listQuery(true)
		for {
			l, err := k.getObject(r.path(ns, ""), q)
			if err != nil {
				return k.fail(err)
			}
			list, _ := l["items"].([]any)
			for _, it := range list {
				if io, ok := it.(obj); ok {
					items = append(items, withTypeMeta(io, r))
				}
			}
			cont := nestedString(l, "metadata", "continue")
			if cont == "" {
				break
			}
			q.Set("continue", cont)
		}
		if s := k.fs.str("sort-by"); s != "" {
			order, err := sortOrder(items, s)
			if err != nil {
				return k.fail(err)
			}
			sorted := make([]obj, len(items))
			for i, j := range order {
				sorted[i] = items[j]
			}
			items = sorted
		}
	}
	if f.kind == "name" && len(items) == 0 {
		return status
	}
	if err := p.print(listOf(items)); err != nil {
		return k.fail(err)
	}
	return status
}

// sortOrder returns the indexes of objs sorted by a --sort-by expression.
func sortOrder(objs []obj, expr string) ([]int, error) {
	tagged := make([]obj, len(objs))
	for i, o := range objs {
		tagged[i] = obj{"i": int64(i), "o": o}
	}
	e, err := relaxedJSONPath(expr)
	if err != nil {
		return nil, err
	}
	// sort the wrappers by the expression applied to their object
	inner := strings.TrimSuffix(strings.TrimPrefix(e, "{"), "}")
	if err := sortObjects(tagged, "{.o"+inner+"}"); err != nil {
		return nil, err
	}
	out := make([]int, len(tagged))
	for i, t := range tagged {
		out[i] = int(t["i"].(int64))
	}
	return out, nil
}

// watch is kubectl get -w / --watch-only.
func (k *kubectlRun) watch(r resource, ns string, names []string, f outputFormat) int {
	human := f.kind == "" || f.kind == "wide"
	events := k.fs.bool("output-watch-events")
	accept := "application/json"
	if human {
		accept = tableAccept
	}
	var hp *humanPrinter
	var op *objectPrinter
	if human {
		hp = &humanPrinter{tw: newTableWriter(k.stdout), wide: f.kind == "wide", withNamespace: ns == "" && r.Namespaced,
			showLabels: k.fs.bool("show-labels"), noHeaders: k.fs.bool("no-headers"), watchEvents: events, labelColumns: k.fs.strs("label-columns")}
	} else {
		var err error
		if op, err = k.newObjectPrinter(f, r); err != nil {
			return k.errorf("%v", err)
		}
		op.watchEvents = events
	}
	printOne := func(typ string, o obj) error {
		if human {
			var t table
			b, _ := json.Marshal(o)
			if err := json.Unmarshal(b, &t); err != nil {
				return err
			}
			unNumberTable(&t)
			hp.printTable(&t, typ)
			return nil
		}
		if events {
			return op.print(obj{"type": typ, "object": o})
		}
		return op.print(o)
	}
	output := !k.fs.bool("watch-only")
	q := k.listQuery(false)
	rv := "0"
	var initial []obj
	if len(names) == 1 {
		o, err := k.do("GET", r.path(ns, names[0]), nil, nil, "", accept)
		if err != nil {
			return k.fail(err)
		}
		got, err := decodeObject(o)
		if err != nil {
			return k.fail(err)
		}
		initial = []obj{got}
		q.Set("fieldSelector", "metadata.name="+names[0])
	} else {
		data, err := k.do("GET", r.path(ns, ""), k.listQuery(true), nil, "", accept)
		if err != nil {
			return k.fail(err)
		}
		l, err := decodeObject(data)
		if err != nil {
			return k.fail(err)
		}
		rv = resourceVersion(l)
		if human {
			// Split the Table into one-row Tables, as a list of objects.
			rows, _ := l["rows"].([]any)
			for _, row := range rows {
				t := obj{"columnDefinitions": l["columnDefinitions"], "rows": []any{row}}
				initial = append(initial, t)
			}
		} else {
			items, _ := l["items"].([]any)
			for _, it := range items {
				if io, ok := it.(obj); ok {
					initial = append(initial, withTypeMeta(io, r))
				}
			}
		}
	}
	if output {
		for _, o := range initial {
			if err := printOne("ADDED", o); err != nil {
				return k.fail(err)
			}
		}
	}
	// A watch of one object starts at resourceVersion 0, whose first event
	// is a synthetic ADDED of the object just printed: kubectl skips it.
	skip := len(names) == 1
	q.Set("resourceVersion", rv)
	q.Set("watch", "true")
	err := k.watchStream(r.path(ns, ""), q, accept, func(typ string, o obj) error {
		if skip {
			skip = false
			return nil
		}
		if typ == "ERROR" {
			b, _ := json.Marshal(o)
			return statusFrom(int(nestedIntOr(o, 500, "code")), b)
		}
		if typ == "BOOKMARK" {
			return nil
		}
		return printOne(typ, o)
	})
	if k.ctx.Err() != nil {
		if errors.Is(k.ctx.Err(), context.DeadlineExceeded) {
			return 0
		}
		return 130
	}
	if err != nil {
		return k.fail(err)
	}
	return 0
}

func nestedIntOr(o obj, def int64, path ...string) int64 {
	if n, ok := nestedInt(o, path...); ok {
		return n
	}
	return def
}

// parseKubectlTimeout reads --request-timeout: "0", "30", "30s", "1m".
func parseKubectlTimeout(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	return time.ParseDuration(s)
}
