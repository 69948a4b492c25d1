package console

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rvplay/rvplay/engine/duration"
)

// kubectl describe, for the kinds the lab serves, laid out as kubectl's
// describers lay them out: lines with tab-separated cells through a
// tabwriter (minimum width 0, tab width 8, padding 2), nested levels
// indented by two spaces. Other kinds get kubectl's generic describer.

func describeFlags() []*flagDef {
	return append(filenameFlags(),
		&flagDef{name: "selector", short: "l", kind: stringFlag},
		&flagDef{name: "all-namespaces", short: "A", kind: boolFlag},
		&flagDef{name: "show-events", kind: boolFlag, def: "true"},
		&flagDef{name: "chunk-size", kind: intFlag, def: "500"},
	)
}

// describer writes levelled lines.
type describer struct {
	b bytes.Buffer
}

func (d *describer) w(level int, format string, a ...any) {
	d.b.WriteString(strings.Repeat("  ", level))
	fmt.Fprintf(&d.b, format, a...)
}

func (d *describer) String() string {
	var out bytes.Buffer
	tw := tabwriter.NewWriter(&out, 0, 8, 2, ' ', 0)
	_, _ = tw.Write(d.b.Bytes())
	_ = tw.Flush()
	return out.String()
}

func stringMap(v any) map[string]string {
	m, _ := v.(obj)
	out := map[string]string{}
	for k, e := range m {
		s, _ := e.(string)
		out[k] = s
	}
	return out
}

func (d *describer) labels(title string, labels map[string]string) {
	d.labelsIndent("", title, "\t", labels)
}

func (d *describer) labelsIndent(initial, title, inner string, labels map[string]string) {
	d.w(0, "%s%s:%s", initial, title, inner)
	if len(labels) == 0 {
		d.b.WriteString("<none>\n")
		return
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i != 0 {
			d.w(0, "%s%s", initial, inner)
		}
		d.w(0, "%s=%s\n", k, labels[k])
	}
}

// annotations prints annotations as kubectl does, leaving out the last
// applied configuration and folding long or multi-line values.
func (d *describer) annotations(title string, anns map[string]string) {
	d.w(0, "%s:\t", title)
	var keys []string
	for k := range anns {
		if k == lastAppliedAnnotation {
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		d.b.WriteString("<none>\n")
		return
	}
	sort.Strings(keys)
	const maxLen = 140
	for i, k := range keys {
		if i != 0 {
			d.w(0, "\t")
		}
		v := strings.TrimSuffix(anns[k], "\n")
		if len(v)+len(k)+2 > maxLen || strings.Contains(v, "\n") {
			d.w(0, "%s:\n", k)
			for _, s := range strings.Split(v, "\n") {
				if len(s) > maxLen-2 {
					s = s[:maxLen-2] + "..."
				}
				d.w(0, "\t  %s\n", s)
			}
		} else {
			d.w(0, "%s: %s\n", k, v)
		}
	}
}

// noResources is kubectl's notice that nothing matched: printed, not an
// error.
type noResources string

func (n noResources) Error() string { return string(n) }

func kubectlDescribe(k *kubectlRun) int {
	ts, err := k.describeTargets()
	var none noResources
	if errors.As(err, &none) {
		fmt.Fprintln(k.stderr, string(none))
		return 0
	}
	if err != nil {
		return k.fail(err)
	}
	status := 0
	for i, t := range ts {
		o := t.live
		if o == nil {
			if o, err = k.getObject(t.r.path(t.ns, t.name), nil); err != nil {
				k.fail(err)
				status = 1
				continue
			}
		}
		if i > 0 {
			fmt.Fprint(k.stdout, "\n\n")
		}
		var out string
		switch t.r.groupResource() {
		case "configmaps":
			out = k.describeConfigMap(o)
		case "secrets":
			out = describeSecret(o)
		case "namespaces":
			out = describeNamespace(o)
		case "deployments.apps":
			out = k.describeDeployment(t.r, o)
		case "pods":
			out = k.describePod(t.r, o)
		default:
			out = k.describeGeneric(t.r, o)
		}
		fmt.Fprint(k.stdout, out)
	}
	return status
}

func (k *kubectlRun) describeTargets() ([]target, error) {
	if len(k.fs.strs("filename")) > 0 || (len(k.pos) > 0 && strings.Contains(k.pos[0], "/")) {
		return k.targets(true)
	}
	d, err := k.discover()
	if err != nil {
		return nil, err
	}
	if len(k.pos) == 0 {
		return nil, toolErrorf("You must specify the type of resource to describe. Use \"kubectl api-resources\" for a complete list of supported resources.\n")
	}
	r, names, err := k.typeArgs(d, k.pos)
	if err != nil {
		return nil, err
	}
	ns := k.nsFor(r)
	if k.fs.bool("all-namespaces") {
		ns = ""
	}
	if len(names) > 0 {
		var ts []target
		for _, n := range names {
			ts = append(ts, target{r: r, ns: ns, name: n})
		}
		return ts, nil
	}
	// Without names, kubectl describes every object of the type (a
	// name prefix may also be given; the console takes whole names).
	q := url.Values{}
	if s := k.fs.str("selector"); s != "" {
		q.Set("labelSelector", s)
	}
	l, err := k.getObject(r.path(ns, ""), q)
	if err != nil {
		return nil, err
	}
	items, _ := l["items"].([]any)
	var ts []target
	for _, it := range items {
		io, _ := it.(obj)
		ts = append(ts, target{r: r, ns: metaNamespace(io), name: metaName(io), live: io})
	}
	if len(ts) == 0 {
		if ns != "" {
			return nil, noResources(fmt.Sprintf("No resources found in %s namespace.", ns))
		}
		return nil, noResources("No resources found")
	}
	return ts, nil
}

// events lists the events about an object, as kubectl's searchEvents.
func (k *kubectlRun) events(o obj, kind string) ([]obj, error) {
	if !k.fs.bool("show-events") {
		return nil, nil
	}
	sel := []string{"involvedObject.kind=" + kind, "involvedObject.name=" + metaName(o)}
	if ns := metaNamespace(o); ns != "" {
		sel = append(sel, "involvedObject.namespace="+ns)
	}
	if uid := nestedString(o, "metadata", "uid"); uid != "" {
		sel = append(sel, "involvedObject.uid="+uid)
	}
	path := "/api/v1/events"
	if ns := metaNamespace(o); ns != "" {
		path = "/api/v1/namespaces/" + ns + "/events"
	}
	l, err := k.getObject(path, url.Values{"fieldSelector": {strings.Join(sel, ",")}, "limit": {"500"}})
	if err != nil {
		return nil, err
	}
	items, _ := l["items"].([]any)
	out := []obj{}
	for _, it := range items {
		if io, ok := it.(obj); ok {
			out = append(out, io)
		}
	}
	return out, nil
}

func (k *kubectlRun) describeEvents(d *describer, events []obj) {
	if len(events) == 0 {
		d.w(0, "Events:\t<none>\n")
		return
	}
	ts := func(e obj, f string) time.Time {
		t, _ := time.Parse(time.RFC3339, nestedString(e, f))
		return t
	}
	sort.SliceStable(events, func(i, j int) bool {
		return ts(events[i], "lastTimestamp").Before(ts(events[j], "lastTimestamp"))
	})
	d.w(0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n")
	d.w(1, "----\t------\t----\t----\t-------\n")
	now := k.c.opts.Now()
	since := func(t time.Time) string {
		if t.IsZero() {
			return "<unknown>"
		}
		return duration.HumanDuration(now.Sub(t))
	}
	for _, e := range events {
		first := since(ts(e, "eventTime"))
		if nestedString(e, "eventTime") == "" {
			first = since(ts(e, "firstTimestamp"))
		}
		interval := first
		if count, _ := nestedInt(e, "count"); count > 1 {
			interval = fmt.Sprintf("%s (x%d over %s)", since(ts(e, "lastTimestamp")), count, first)
		}
		source := nestedString(e, "source", "component")
		if source == "" {
			source = nestedString(e, "reportingComponent")
		}
		msg := strings.TrimSpace(nestedString(e, "message"))
		if fp := nestedString(e, "involvedObject", "fieldPath"); fp != "" {
			msg = fp + ": " + msg
		}
		d.w(1, "%v\t%v\t%s\t%v\t%v\n", nestedString(e, "type"), nestedString(e, "reason"), interval, source, msg)
	}
}

func (k *kubectlRun) describeConfigMap(o obj) string {
	d := &describer{}
	d.w(0, "Name:\t%s\n", metaName(o))
	d.w(0, "Namespace:\t%s\n", metaNamespace(o))
	d.labels("Labels", stringMap(nested(o, "metadata", "labels")))
	d.annotations("Annotations", stringMap(nested(o, "metadata", "annotations")))
	d.w(0, "\nData\n====\n")
	data := stringMap(o["data"])
	for _, key := range sortedKeys(nestedMap(o, "data")) {
		d.w(0, "%s:\n----\n", key)
		d.w(0, "%s\n", data[key])
		d.w(0, "\n")
	}
	d.w(0, "\nBinaryData\n====\n")
	bin := stringMap(o["binaryData"])
	for _, key := range sortedKeys(nestedMap(o, "binaryData")) {
		d.w(0, "%s: %d bytes\n", key, base64Len(bin[key]))
	}
	d.w(0, "\n")
	if events, err := k.events(o, "ConfigMap"); err == nil && events != nil {
		k.describeEvents(d, events)
	}
	return d.String()
}

func base64Len(s string) int {
	n := len(s) / 4 * 3
	return n - strings.Count(s[max(len(s)-2, 0):], "=")
}

func describeSecret(o obj) string {
	d := &describer{}
	d.w(0, "Name:\t%s\n", metaName(o))
	d.w(0, "Namespace:\t%s\n", metaNamespace(o))
	d.labels("Labels", stringMap(nested(o, "metadata", "labels")))
	d.annotations("Annotations", stringMap(nested(o, "metadata", "annotations")))
	typ := nestedString(o, "type")
	d.w(0, "\nType:\t%s\n", typ)
	d.w(0, "\nData\n====\n")
	data := stringMap(o["data"])
	for _, key := range sortedKeys(nestedMap(o, "data")) {
		d.w(0, "%s:\t%d bytes\n", key, base64Len(data[key]))
	}
	return d.String()
}

func describeNamespace(o obj) string {
	d := &describer{}
	d.w(0, "Name:\t%s\n", metaName(o))
	d.labels("Labels", stringMap(nested(o, "metadata", "labels")))
	d.annotations("Annotations", stringMap(nested(o, "metadata", "annotations")))
	d.w(0, "Status:\t%s\n", nestedString(o, "status", "phase"))
	return d.String()
}

// selectorString renders a label selector as labels.Selector.String().
func selectorString(sel obj) string {
	var parts []string
	ml := stringMap(sel["matchLabels"])
	for _, k := range sortedKeys(nestedMap(sel, "matchLabels")) {
		parts = append(parts, k+"="+ml[k])
	}
	exprs, _ := sel["matchExpressions"].([]any)
	for _, e := range exprs {
		em, _ := e.(obj)
		key, op := nestedString(em, "key"), nestedString(em, "operator")
		var vals []string
		vs, _ := em["values"].([]any)
		for _, v := range vs {
			s, _ := v.(string)
			vals = append(vals, s)
		}
		sort.Strings(vals)
		switch op {
		case "In":
			parts = append(parts, key+" in ("+strings.Join(vals, ",")+")")
		case "NotIn":
			parts = append(parts, key+" notin ("+strings.Join(vals, ",")+")")
		case "Exists":
			parts = append(parts, key)
		case "DoesNotExist":
			parts = append(parts, "!"+key)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func intOrString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return fmt.Sprint(x)
	case float64:
		return fmt.Sprint(int64(x))
	}
	return "0"
}

func (k *kubectlRun) describeDeployment(r resource, o obj) string {
	d := &describer{}
	d.w(0, "Name:\t%s\n", metaName(o))
	d.w(0, "Namespace:\t%s\n", metaNamespace(o))
	d.w(0, "CreationTimestamp:\t%s\n", rfc1123z(nestedString(o, "metadata", "creationTimestamp")))
	d.labels("Labels", stringMap(nested(o, "metadata", "labels")))
	d.annotations("Annotations", stringMap(nested(o, "metadata", "annotations")))
	d.w(0, "Selector:\t%s\n", selectorString(nestedMap(o, "spec", "selector")))
	replicas, _ := nestedInt(o, "spec", "replicas")
	st := func(f string) int64 { n, _ := nestedInt(o, "status", f); return n }
	d.w(0, "Replicas:\t%d desired | %d updated | %d total | %d available | %d unavailable\n", replicas, st("updatedReplicas"), st("replicas"), st("availableReplicas"), st("unavailableReplicas"))
	d.w(0, "StrategyType:\t%s\n", nestedString(o, "spec", "strategy", "type"))
	minReady, _ := nestedInt(o, "spec", "minReadySeconds")
	d.w(0, "MinReadySeconds:\t%d\n", minReady)
	if ru := nestedMap(o, "spec", "strategy", "rollingUpdate"); ru != nil {
		d.w(0, "RollingUpdateStrategy:\t%s max unavailable, %s max surge\n", intOrString(ru["maxUnavailable"]), intOrString(ru["maxSurge"]))
	}
	describePodTemplate(d, nestedMap(o, "spec", "template"))
	if conds, _ := nested(o, "status", "conditions").([]any); len(conds) > 0 {
		d.w(0, "Conditions:\n  Type\tStatus\tReason\n")
		d.w(1, "----\t------\t------\n")
		for _, c := range conds {
			cm, _ := c.(obj)
			d.w(1, "%v \t%v\t%v\n", nestedString(cm, "type"), nestedString(cm, "status"), nestedString(cm, "reason"))
		}
	}
	if events, err := k.events(o, r.Kind); err == nil && events != nil {
		k.describeEvents(d, events)
	}
	return d.String()
}

func rfc1123z(ts string) string {
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return "<unknown>"
	}
	return t.Format(time.RFC1123Z)
}

func describePodTemplate(d *describer, tpl obj) {
	d.w(0, "Pod Template:\n")
	if tpl == nil {
		d.w(1, "<unset>")
		return
	}
	d.labels("  Labels", stringMap(nested(tpl, "metadata", "labels")))
	if anns := stringMap(nested(tpl, "metadata", "annotations")); len(anns) > 0 {
		d.annotations("  Annotations", anns)
	}
	spec := nestedMap(tpl, "spec")
	if sa := nestedString(spec, "serviceAccountName"); sa != "" {
		d.w(1, "Service Account:\t%s\n", sa)
	}
	if ic, _ := spec["initContainers"].([]any); len(ic) > 0 {
		describeContainers(d, "Init Containers", ic, nil, "  ")
	}
	cs, _ := spec["containers"].([]any)
	describeContainers(d, "Containers", cs, nil, "  ")
	describeVolumes(d, spec, "  ")
	if pc := nestedString(spec, "priorityClassName"); pc != "" {
		d.w(1, "Priority Class Name:\t%s\n", pc)
	}
	d.labels("  Node-Selectors", stringMap(spec["nodeSelector"]))
	describeTolerations(d, "  Tolerations", spec)
}

func stringOrNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func describeContainers(d *describer, label string, cs []any, statuses map[string]obj, space string) {
	none := ""
	if len(cs) == 0 {
		none = " <none>"
	}
	d.w(0, "%s%s:%s\n", space, label, none)
	nameIndent := ""
	if space != "" {
		nameIndent = " "
	}
	for _, c := range cs {
		cm, _ := c.(obj)
		name := nestedString(cm, "name")
		status, ok := statuses[name]
		d.w(1, "%s%v:\n", nameIndent, name)
		if ok {
			d.w(2, "Container ID:\t%s\n", nestedString(status, "containerID"))
		}
		d.w(2, "Image:\t%s\n", nestedString(cm, "image"))
		if ok {
			d.w(2, "Image ID:\t%s\n", nestedString(status, "imageID"))
		}
		ports, _ := cm["ports"].([]any)
		var ps, hps []string
		for _, p := range ports {
			pm, _ := p.(obj)
			proto := nestedString(pm, "protocol")
			cp, _ := nestedInt(pm, "containerPort")
			hp, _ := nestedInt(pm, "hostPort")
			s, h := fmt.Sprintf("%d/%s", cp, proto), fmt.Sprintf("%d/%s", hp, proto)
			if n := nestedString(pm, "name"); n != "" {
				s, h = fmt.Sprintf("%s (%s)", s, n), fmt.Sprintf("%s (%s)", h, n)
			}
			ps, hps = append(ps, s), append(hps, h)
		}
		if p := strings.Join(ps, ", "); strings.Contains(p, ",") {
			d.w(2, "Ports:\t%s\n", p)
		} else {
			d.w(2, "Port:\t%s\n", stringOrNone(p))
		}
		if h := strings.Join(hps, ", "); strings.Contains(h, ",") {
			d.w(2, "Host Ports:\t%s\n", h)
		} else {
			d.w(2, "Host Port:\t%s\n", stringOrNone(h))
		}
		for _, f := range []struct{ field, title string }{{"command", "Command"}, {"args", "Args"}} {
			if l, _ := cm[f.field].([]any); len(l) > 0 {
				d.w(2, "%s:\n", f.title)
				for _, a := range l {
					s, _ := a.(string)
					for _, line := range strings.Split(s, "\n") {
						d.w(3, "%s\n", line)
					}
				}
			}
		}
		if ok {
			describeContainerState(d, status)
		}
		for _, f := range []struct{ field, title string }{{"limits", "Limits"}, {"requests", "Requests"}} {
			if m := nestedMap(cm, "resources", f.field); len(m) > 0 {
				d.w(2, "%s:\n", f.title)
				for _, k := range sortedKeys(m) {
					d.w(3, "%s:\t%s\n", k, intOrString(m[k]))
				}
			}
		}
		env, _ := cm["env"].([]any)
		if len(env) == 0 {
			d.w(2, "Environment:\t<none>\n")
		} else {
			d.w(2, "Environment:\n")
			for _, e := range env {
				em, _ := e.(obj)
				if vf := nestedMap(em, "valueFrom"); vf != nil {
					switch {
					case nestedMap(vf, "configMapKeyRef") != nil:
						d.w(3, "%s:\t<set to the key '%s' of config map '%s'>\tOptional: %v\n", nestedString(em, "name"),
							nestedString(vf, "configMapKeyRef", "key"), nestedString(vf, "configMapKeyRef", "name"), nested(vf, "configMapKeyRef", "optional") == true)
					case nestedMap(vf, "secretKeyRef") != nil:
						d.w(3, "%s:\t<set to the key '%s' in secret '%s'>\tOptional: %v\n", nestedString(em, "name"),
							nestedString(vf, "secretKeyRef", "key"), nestedString(vf, "secretKeyRef", "name"), nested(vf, "secretKeyRef", "optional") == true)
					case nestedMap(vf, "fieldRef") != nil:
						d.w(3, "%s:\t (%s:%s)\n", nestedString(em, "name"), nestedString(vf, "fieldRef", "apiVersion"), nestedString(vf, "fieldRef", "fieldPath"))
					}
					continue
				}
				for i, s := range strings.Split(nestedString(em, "value"), "\n") {
					if i == 0 {
						d.w(3, "%s:\t%s\n", nestedString(em, "name"), s)
					} else {
						d.w(3, "\t%s\n", s)
					}
				}
			}
		}
		mounts, _ := cm["volumeMounts"].([]any)
		if len(mounts) == 0 {
			d.w(2, "Mounts:\t<none>\n")
		} else {
			d.w(2, "Mounts:\n")
			sort.SliceStable(mounts, func(i, j int) bool {
				return nestedString(mounts[i].(obj), "mountPath") < nestedString(mounts[j].(obj), "mountPath")
			})
			for _, m := range mounts {
				mm, _ := m.(obj)
				flags := []string{"rw"}
				if mm["readOnly"] == true {
					flags = []string{"ro"}
				}
				if sp := nestedString(mm, "subPath"); sp != "" {
					flags = append(flags, fmt.Sprintf("path=%q", sp))
				}
				d.w(3, "%s from %s (%s)\n", nestedString(mm, "mountPath"), nestedString(mm, "name"), strings.Join(flags, ","))
			}
		}
	}
}

func describeContainerState(d *describer, status obj) {
	state := nestedMap(status, "state")
	switch {
	case nestedMap(state, "running") != nil:
		d.w(2, "State:\tRunning\n")
		d.w(3, "Started:\t%s\n", rfc1123z(nestedString(state, "running", "startedAt")))
	case nestedMap(state, "waiting") != nil:
		d.w(2, "State:\tWaiting\n")
		if r := nestedString(state, "waiting", "reason"); r != "" {
			d.w(3, "Reason:\t%s\n", r)
		}
	case nestedMap(state, "terminated") != nil:
		d.w(2, "State:\tTerminated\n")
		if r := nestedString(state, "terminated", "reason"); r != "" {
			d.w(3, "Reason:\t%s\n", r)
		}
		code, _ := nestedInt(state, "terminated", "exitCode")
		d.w(3, "Exit Code:\t%d\n", code)
	default:
		d.w(2, "State:\tWaiting\n")
	}
	ready := "False"
	if status["ready"] == true {
		ready = "True"
	}
	d.w(2, "Ready:\t%v\n", ready)
	rc, _ := nestedInt(status, "restartCount")
	d.w(2, "Restart Count:\t%d\n", rc)
}

func describeVolumes(d *describer, spec obj, space string) {
	vols, _ := spec["volumes"].([]any)
	if len(vols) == 0 {
		d.w(0, "%sVolumes:\t<none>\n", space)
		return
	}
	d.w(0, "%sVolumes:\n", space)
	for _, v := range vols {
		vm, _ := v.(obj)
		d.w(0, "%s", space)
		d.w(1, "%v:\n", nestedString(vm, "name"))
		switch {
		case nestedMap(vm, "configMap") != nil:
			d.w(2, "Type:\tConfigMap (a volume populated by a ConfigMap)\n")
			d.w(2, "Name:\t%v\n", nestedString(vm, "configMap", "name"))
			d.w(2, "Optional:\t%v\n", nested(vm, "configMap", "optional") == true)
		case nestedMap(vm, "secret") != nil:
			d.w(2, "Type:\tSecret (a volume populated by a Secret)\n")
			d.w(2, "SecretName:\t%v\n", nestedString(vm, "secret", "secretName"))
			d.w(2, "Optional:\t%v\n", nested(vm, "secret", "optional") == true)
		case nestedMap(vm, "emptyDir") != nil:
			d.w(2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n")
			d.w(2, "Medium:\t%s\n", nestedString(vm, "emptyDir", "medium"))
			d.w(2, "SizeLimit:\t%s\n", stringOrUnset(intOrString(nested(vm, "emptyDir", "sizeLimit"))))
		default:
			d.w(2, "Type:\t<unknown>\n")
		}
	}
}

func stringOrUnset(s string) string {
	if s == "" || s == "0" {
		return "<unset>"
	}
	return s
}

func describeTolerations(d *describer, title string, spec obj) {
	tols, _ := spec["tolerations"].([]any)
	d.w(0, "%s:\t", title)
	if len(tols) == 0 {
		d.b.WriteString("<none>\n")
		return
	}
	for i, t := range tols {
		tm, _ := t.(obj)
		if i != 0 {
			d.w(0, "%s", strings.Repeat(" ", 0))
			d.w(0, "\t")
		}
		s := nestedString(tm, "key")
		if v := nestedString(tm, "value"); v != "" {
			s += "=" + v
		}
		if e := nestedString(tm, "effect"); e != "" {
			s += ":" + e
		}
		if nestedString(tm, "operator") == "Exists" && nestedString(tm, "value") == "" {
			if nestedString(tm, "key") != "" || nestedString(tm, "effect") != "" {
				s += " op=Exists"
			} else {
				s = "op=Exists"
			}
		}
		if secs, ok := nestedInt(tm, "tolerationSeconds"); ok {
			s += fmt.Sprintf(" for %ds", secs)
		}
		d.w(0, "%s\n", s)
	}
}

func (k *kubectlRun) describePod(r resource, o obj) string {
	d := &describer{}
	spec, status := nestedMap(o, "spec"), nestedMap(o, "status")
	d.w(0, "Name:\t%s\n", metaName(o))
	d.w(0, "Namespace:\t%s\n", metaNamespace(o))
	if p, ok := nestedInt(spec, "priority"); ok {
		d.w(0, "Priority:\t%d\n", p)
	}
	if pc := nestedString(spec, "priorityClassName"); pc != "" {
		d.w(0, "Priority Class Name:\t%s\n", pc)
	}
	if sa := nestedString(spec, "serviceAccountName"); sa != "" {
		d.w(0, "Service Account:\t%s\n", sa)
	}
	if n := nestedString(spec, "nodeName"); n == "" {
		d.w(0, "Node:\t<none>\n")
	} else {
		d.w(0, "Node:\t%s\n", n+"/"+nestedString(status, "hostIP"))
	}
	if st := nestedString(status, "startTime"); st != "" {
		d.w(0, "Start Time:\t%s\n", rfc1123z(st))
	}
	d.labels("Labels", stringMap(nested(o, "metadata", "labels")))
	d.annotations("Annotations", stringMap(nested(o, "metadata", "annotations")))
	d.w(0, "Status:\t%s\n", nestedString(status, "phase"))
	if r := nestedString(status, "reason"); r != "" {
		d.w(0, "Reason:\t%s\n", r)
	}
	if m := nestedString(status, "message"); m != "" {
		d.w(0, "Message:\t%s\n", m)
	}
	d.w(0, "IP:\t%s\n", nestedString(status, "podIP"))
	ips, _ := status["podIPs"].([]any)
	if len(ips) == 0 {
		d.w(0, "IPs:\t<none>\n")
	} else {
		d.w(0, "IPs:\n")
		for _, ip := range ips {
			d.w(1, "IP:\t%s\n", nestedString(ip.(obj), "ip"))
		}
	}
	if refs, _ := nested(o, "metadata", "ownerReferences").([]any); len(refs) > 0 {
		for _, ref := range refs {
			rm, _ := ref.(obj)
			if rm["controller"] == true {
				d.w(0, "Controlled By:\t%s/%s\n", nestedString(rm, "kind"), nestedString(rm, "name"))
			}
		}
	}
	statuses := map[string]obj{}
	cstat, _ := status["containerStatuses"].([]any)
	for _, s := range cstat {
		sm, _ := s.(obj)
		statuses[nestedString(sm, "name")] = sm
	}
	cs, _ := spec["containers"].([]any)
	describeContainers(d, "Containers", cs, statuses, "")
	if conds, _ := status["conditions"].([]any); len(conds) > 0 {
		d.w(0, "Conditions:\n  Type\tStatus\n")
		for _, c := range conds {
			cm, _ := c.(obj)
			d.w(1, "%v \t%v \n", nestedString(cm, "type"), nestedString(cm, "status"))
		}
	}
	describeVolumes(d, spec, "")
	qos := nestedString(status, "qosClass")
	if qos == "" {
		qos = "BestEffort"
	}
	d.w(0, "QoS Class:\t%s\n", qos)
	d.labels("Node-Selectors", stringMap(spec["nodeSelector"]))
	describeTolerations(d, "Tolerations", spec)
	if events, err := k.events(o, r.Kind); err == nil && events != nil {
		k.describeEvents(d, events)
	}
	return d.String()
}

// describeGeneric is kubectl's describer for kinds without their own: the
// metadata, then every other field as an indented outline.
func (k *kubectlRun) describeGeneric(r resource, o obj) string {
	d := &describer{}
	d.w(0, "Name:\t%s\n", metaName(o))
	d.w(0, "Namespace:\t%s\n", metaNamespace(o))
	d.labels("Labels", stringMap(nested(o, "metadata", "labels")))
	d.annotations("Annotations", stringMap(nested(o, "metadata", "annotations")))
	genericContent(d, 0, o, "", []string{".metadata.name", ".metadata.namespace", ".metadata.labels", ".metadata.annotations", ".metadata.managedFields"})
	if events, err := k.events(o, r.Kind); err == nil && events != nil {
		k.describeEvents(d, events)
	}
	return d.String()
}

// genericContent prints fields as kubectl's printUnstructuredContent:
// keys sorted and written as words ("resourceVersion" -> "Resource
// Version"), maps and lists nested one level deeper.
func genericContent(d *describer, level int, content obj, prefix string, skip []string) {
	for _, key := range sortedKeys(content) {
		path := prefix + "." + key
		skipped := false
		for _, s := range skip {
			if s == path {
				skipped = true
			}
		}
		if skipped {
			continue
		}
		field := camelToWords(key)
		switch v := content[key].(type) {
		case obj:
			d.w(level, "%s:\n", field)
			genericContent(d, level+1, v, path, skip)
		case []any:
			d.w(level, "%s:\n", field)
			for _, e := range v {
				switch ev := e.(type) {
				case obj:
					genericContent(d, level+1, ev, path, skip)
				default:
					d.w(level+1, "%v\n", ev)
				}
			}
		default:
			d.w(level, "%s:\t%v\n", field, v)
		}
	}
}

// camelToWords is kubectl's "smartLabelFor": apiVersion -> API Version.
func camelToWords(field string) string {
	commonAcronyms := map[string]bool{"API": true, "URL": true, "UID": true, "OSB": true, "GUID": true}
	var words []string
	start := 0
	for i := 1; i <= len(field); i++ {
		if i == len(field) || (field[i] >= 'A' && field[i] <= 'Z') {
			words = append(words, field[start:i])
			start = i
		}
	}
	for i, w := range words {
		if up := strings.ToUpper(w); commonAcronyms[up] {
			words[i] = up
			continue
		}
		if len(w) > 0 {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}
