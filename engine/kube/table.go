package kube

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/duration"
)

// Column is one column of the server-side printing kubectl asks for
// (Accept: application/json;as=Table;v=v1;g=meta.k8s.io).
type Column struct {
	Name        string
	Type        string // "string", "integer", "date"
	Format      string // "name" for the name column
	Description string
	Priority    int // 0: always shown; 1: -o wide
	Cell        func(o Object, now time.Time) any
}

type columnDefinition struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format"`
	Description string `json:"description"`
	Priority    int    `json:"priority"`
}

func age(field ...string) func(o Object, now time.Time) any {
	return func(o Object, now time.Time) any {
		s, _ := pathValue(o, field...).(string)
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return "<unknown>"
		}
		return duration.HumanDuration(now.Sub(t))
	}
}

var (
	nameColumn = Column{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace.",
		Cell: func(o Object, _ time.Time) any { return Name(o) }}
	ageColumn = Column{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
		Cell: age("metadata", "creationTimestamp")}
)

func countOf(o Object, fields ...string) int64 {
	var n int64
	for _, f := range fields {
		if m, ok := o[f].(map[string]any); ok {
			n += int64(len(m))
		}
	}
	return n
}

func intAt(o Object, path ...string) int64 {
	n, _ := numberInt(pathValue(o, path...))
	return n
}

// Printed columns of the served resources (kube's printers). A resource
// without Columns prints Name and Age.
var (
	configMapColumns = []Column{nameColumn, {Name: "Data", Type: "integer", Description: "Number of data entries.",
		Cell: func(o Object, _ time.Time) any { return countOf(o, "data", "binaryData") }}, ageColumn}
	secretColumns = []Column{nameColumn, {Name: "Type", Type: "string", Description: "Used to facilitate programmatic handling of secret data.",
		Cell: func(o Object, _ time.Time) any { return pathString("type")(o) }},
		{Name: "Data", Type: "integer", Description: "Number of data entries.",
			Cell: func(o Object, _ time.Time) any { return countOf(o, "data") }}, ageColumn}
	namespaceColumns = []Column{nameColumn, {Name: "Status", Type: "string", Description: "The status of the namespace",
		Cell: func(o Object, _ time.Time) any { return pathString("status", "phase")(o) }}, ageColumn}
	podColumns = []Column{nameColumn,
		{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic.", Cell: podReady},
		{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod.", Cell: func(o Object, _ time.Time) any {
			if str(meta(o), "deletionTimestamp") != "" {
				return "Terminating"
			}
			if r := pathString("status", "reason")(o); r != "" {
				return r
			}
			return pathString("status", "phase")(o)
		}},
		{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted.", Cell: func(o Object, _ time.Time) any {
			var n int64
			cs, _ := pathValue(o, "status", "containerStatuses").([]any)
			for _, c := range cs {
				if cm, ok := c.(map[string]any); ok {
					k, _ := numberInt(cm["restartCount"])
					n += k
				}
			}
			return fmt.Sprint(n)
		}},
		ageColumn,
		{Name: "IP", Type: "string", Priority: 1, Description: "IP address allocated to the pod.", Cell: func(o Object, _ time.Time) any { return orNone(pathString("status", "podIP")(o)) }},
		{Name: "Node", Type: "string", Priority: 1, Description: "Name of the Node on which the Pod is running.", Cell: func(o Object, _ time.Time) any { return orNone(pathString("spec", "nodeName")(o)) }},
		{Name: "Nominated Node", Type: "string", Priority: 1, Description: "Name of the node nominated for scheduling.", Cell: func(o Object, _ time.Time) any {
			return orNone(pathString("status", "nominatedNodeName")(o))
		}},
		{Name: "Readiness Gates", Type: "string", Priority: 1, Description: "The readiness gates of the pod.", Cell: func(o Object, _ time.Time) any { return "<none>" }},
	}
	deploymentColumns = []Column{nameColumn,
		{Name: "Ready", Type: "string", Description: "Number of the pod with ready state", Cell: func(o Object, _ time.Time) any {
			return fmt.Sprintf("%d/%d", intAt(o, "status", "readyReplicas"), intAt(o, "spec", "replicas"))
		}},
		{Name: "Up-to-date", Type: "integer", Description: "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
			Cell: func(o Object, _ time.Time) any { return intAt(o, "status", "updatedReplicas") }},
		{Name: "Available", Type: "integer", Description: "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
			Cell: func(o Object, _ time.Time) any { return intAt(o, "status", "availableReplicas") }},
		ageColumn,
		{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template.", Cell: containerField("name")},
		{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template.", Cell: containerField("image")},
		{Name: "Selector", Type: "string", Priority: 1, Description: "Label selector for pods.", Cell: func(o Object, _ time.Time) any {
			if sel, ok := pathValue(o, "spec", "selector").(map[string]any); ok {
				if ls, err := selectorFromLabelSelector(sel); err == nil {
					return ls.String()
				}
			}
			return "<none>"
		}},
	}
	eventColumns = []Column{
		{Name: "Last Seen", Type: "string", Description: "Time when last this event was observed.", Cell: func(o Object, now time.Time) any {
			for _, f := range []string{"lastTimestamp", "eventTime", "firstTimestamp"} {
				if s, _ := o[f].(string); s != "" {
					return age(f)(o, now)
				}
			}
			return age("metadata", "creationTimestamp")(o, now)
		}},
		{Name: "Type", Type: "string", Description: "Type of this event.", Cell: func(o Object, _ time.Time) any { return pathString("type")(o) }},
		{Name: "Reason", Type: "string", Description: "Why the action was taken.", Cell: func(o Object, _ time.Time) any { return pathString("reason")(o) }},
		{Name: "Object", Type: "string", Description: "The object this event is about.", Cell: func(o Object, _ time.Time) any {
			return strings.ToLower(pathString("involvedObject", "kind")(o)) + "/" + pathString("involvedObject", "name")(o)
		}},
		{Name: "Message", Type: "string", Description: "A human-readable description of the status of this operation.", Cell: func(o Object, _ time.Time) any { return pathString("message")(o) }},
	}
)

func (r *Resource) columns() []Column {
	if len(r.Columns) > 0 {
		return r.Columns
	}
	return []Column{nameColumn, ageColumn}
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func podReady(o Object, _ time.Time) any {
	cs, _ := pathValue(o, "spec", "containers").([]any)
	ready := 0
	st, _ := pathValue(o, "status", "containerStatuses").([]any)
	for _, c := range st {
		if cm, ok := c.(map[string]any); ok && cm["ready"] == true {
			ready++
		}
	}
	return fmt.Sprintf("%d/%d", ready, len(cs))
}

func containerField(f string) func(o Object, _ time.Time) any {
	return func(o Object, _ time.Time) any {
		cs, _ := pathValue(o, "spec", "template", "spec", "containers").([]any)
		var out []string
		for _, c := range cs {
			if cm, ok := c.(map[string]any); ok {
				s, _ := cm[f].(string)
				out = append(out, s)
			}
		}
		return strings.Join(out, ",")
	}
}

// Table renders objects as a meta.k8s.io Table. includeObject is "None",
// "Object" or "Metadata" (the default).
func (r *Resource) Table(objs []Object, lm ListMeta, version, includeObject string, now time.Time) []byte {
	cols := r.columns()
	defs := make([]columnDefinition, len(cols))
	for i, c := range cols {
		defs[i] = columnDefinition{c.Name, c.Type, c.Format, c.Description, c.Priority}
	}
	var b bytes.Buffer
	b.WriteString(`{"kind":"Table","apiVersion":"meta.k8s.io/` + version + `","metadata":`)
	writeJSON(&b, lm)
	b.WriteString(`,"columnDefinitions":`)
	writeJSON(&b, defs)
	b.WriteString(`,"rows":[`)
	for i, o := range objs {
		if i > 0 {
			b.WriteByte(',')
		}
		cells := make([]any, len(cols))
		for j, c := range cols {
			cells[j] = c.Cell(o, now)
		}
		b.WriteString(`{"cells":`)
		writeJSON(&b, cells)
		switch includeObject {
		case "None":
		case "Object":
			o["kind"], o["apiVersion"] = r.Kind, r.GroupVersion()
			b.WriteString(`,"object":`)
			b.Write(r.Encode(o))
		default:
			b.WriteString(`,"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/` + version + `","metadata":`)
			enc := EncodeObject(map[string]any{"metadata": meta(o)}, nil)
			b.Write(enc[len(`{"metadata":`) : len(enc)-1])
			b.WriteString(`}`)
		}
		b.WriteString(`}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}
