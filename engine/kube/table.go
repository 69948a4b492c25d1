package kube

import (
	"bytes"
	"cmp"
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
		{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic.", Cell: func(o Object, now time.Time) any {
			return podRow(o, now).ready
		}},
		{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod.", Cell: func(o Object, now time.Time) any {
			return podRow(o, now).status
		}},
		{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.", Cell: func(o Object, now time.Time) any {
			return podRow(o, now).restarts
		}},
		ageColumn,
		{Name: "IP", Type: "string", Priority: 1, Description: "IP address allocated to the pod.", Cell: func(o Object, _ time.Time) any {
			ips, _ := pathValue(o, "status", "podIPs").([]any)
			if len(ips) > 0 {
				ip, _ := ips[0].(map[string]any)
				return orNone(str(ip, "ip"))
			}
			return "<none>"
		}},
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
		{Name: "Selector", Type: "string", Priority: 1, Description: "Label selector for pods.", Cell: selectorCell},
	}
	replicaSetColumns = []Column{nameColumn,
		{Name: "Desired", Type: "integer", Description: "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset",
			Cell: func(o Object, _ time.Time) any { return intAt(o, "spec", "replicas") }},
		{Name: "Current", Type: "integer", Description: "Replicas is the most recently observed number of non-terminating pods. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset",
			Cell: func(o Object, _ time.Time) any { return intAt(o, "status", "replicas") }},
		{Name: "Ready", Type: "integer", Description: "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.",
			Cell: func(o Object, _ time.Time) any { return intAt(o, "status", "readyReplicas") }},
		ageColumn,
		{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template.", Cell: containerField("name")},
		{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template.", Cell: containerField("image")},
		{Name: "Selector", Type: "string", Priority: 1, Description: "Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
			Cell: selectorCell},
	}
	eventColumns = []Column{
		{Name: "Last Seen", Type: "string", Description: "The time at which the most recent occurrence of this event was recorded.",
			Cell: func(o Object, now time.Time) any { return eventRow(o, now).last }},
		{Name: "Type", Type: "string", Description: "Type of this event (Normal, Warning), new types could be added in the future", Cell: cellOf("type")},
		{Name: "Reason", Type: "string", Description: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.", Cell: cellOf("reason")},
		{Name: "Object", Type: "string", Description: "The object that this event is about.", Cell: func(o Object, _ time.Time) any {
			kind := strings.ToLower(pathString("involvedObject", "kind")(o))
			if name := pathString("involvedObject", "name")(o); name != "" {
				return kind + "/" + name
			}
			return kind
		}},
		{Name: "Subobject", Type: "string", Priority: 1, Description: "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.",
			Cell: cellOf("involvedObject", "fieldPath")},
		{Name: "Source", Type: "string", Priority: 1, Description: "The component reporting this event. Should be a short machine understandable string.", Cell: func(o Object, _ time.Time) any {
			// the source, or the reporting controller and instance
			c, i := cmp.Or(pathString("source", "component")(o), str(o, "reportingComponent")), cmp.Or(pathString("source", "host")(o), str(o, "reportingInstance"))
			if i == "" {
				return c
			}
			return c + ", " + i
		}},
		{Name: "Message", Type: "string", Description: "A human-readable description of the status of this operation.", Cell: func(o Object, _ time.Time) any { return strings.TrimSpace(str(o, "message")) }},
		{Name: "First Seen", Type: "string", Priority: 1, Description: "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
			Cell: func(o Object, now time.Time) any { return eventRow(o, now).first }},
		{Name: "Count", Type: "string", Priority: 1, Description: "The number of times this event has occurred.", Cell: func(o Object, now time.Time) any { return eventRow(o, now).count }},
		{Name: "Name", Type: "string", Format: "name", Priority: 1, Description: "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
			Cell: func(o Object, _ time.Time) any { return Name(o) }},
	}
)

func cellOf(path ...string) func(Object, time.Time) any {
	return func(o Object, _ time.Time) any { return pathString(path...)(o) }
}

type eventCells struct {
	first, last string
	count       int64
}

// eventRow is kube's printEvent: first seen is firstTimestamp or else
// eventTime, last seen lastTimestamp or else first seen, or the series'
// last observation, and the count the series' or else count (at least 1).
func eventRow(o Object, now time.Time) eventCells {
	e := eventCells{first: age("firstTimestamp")(o, now).(string)}
	if str(o, "firstTimestamp") == "" {
		e.first = age("eventTime")(o, now).(string)
	}
	e.last = e.first
	if str(o, "lastTimestamp") != "" {
		e.last = age("lastTimestamp")(o, now).(string)
	}
	e.count = intAt(o, "count")
	if _, ok := o["series"].(map[string]any); ok {
		e.last, e.count = age("series", "lastObservedTime")(o, now).(string), intAt(o, "series", "count")
	} else if e.count == 0 {
		e.count = 1
	}
	return e
}

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

// podCells are kube's printPod columns Ready, Status and Restarts: the
// status is the pod's phase or reason, overridden by a container's waiting
// or terminated reason (init containers first), "Terminating" once the pod
// is being deleted; restarts add up the containers' and say how long ago
// the last one finished.
type podCells struct{ ready, status, restarts string }

func podRow(o Object, now time.Time) podCells {
	spec, _ := o["spec"].(map[string]any)
	status, _ := o["status"].(map[string]any)
	containers, _ := spec["containers"].([]any)
	total, ready, restarts := len(containers), 0, int64(0)
	var lastRestart time.Time
	reason := str(status, "phase")
	if r := str(status, "reason"); r != "" {
		reason = r
	}
	noteRestarts := func(c map[string]any) {
		n, _ := numberInt(c["restartCount"])
		restarts += n
		if t, err := time.Parse(time.RFC3339, pathString("lastState", "terminated", "finishedAt")(c)); err == nil && t.After(lastRestart) {
			lastRestart = t
		}
	}
	initializing := false
	inits, _ := status["initContainerStatuses"].([]any)
	initSpecs, _ := spec["initContainers"].([]any)
	for i, c := range inits {
		cm, _ := c.(map[string]any)
		noteRestarts(cm)
		term, _ := pathValue(cm, "state", "terminated").(map[string]any)
		code, _ := numberInt(term["exitCode"])
		switch waiting := pathString("state", "waiting", "reason")(cm); {
		case term != nil && code == 0:
			continue
		case term != nil:
			reason = "Init:" + exitReason(term)
		case waiting != "" && waiting != "PodInitializing":
			reason = "Init:" + waiting
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(initSpecs))
		}
		initializing = true
		break
	}
	if !initializing || podConditionTrue(status, "Initialized") {
		restarts, lastRestart = 0, time.Time{}
		hasRunning, errorReason := false, ""
		cs, _ := status["containerStatuses"].([]any)
		for i := len(cs) - 1; i >= 0; i-- {
			cm, _ := cs[i].(map[string]any)
			noteRestarts(cm)
			term, _ := pathValue(cm, "state", "terminated").(map[string]any)
			switch waiting := pathString("state", "waiting", "reason")(cm); {
			case waiting != "":
				reason = waiting
			case term != nil:
				reason = exitReason(term)
				if code, _ := numberInt(term["exitCode"]); code != 0 {
					errorReason = reason
				}
			case cm["ready"] == true && pathValue(cm, "state", "running") != nil:
				hasRunning = true
				ready++
			}
		}
		if reason == "Completed" {
			switch {
			case hasRunning && podConditionTrue(status, "Ready"):
				reason = "Running"
			case errorReason != "":
				reason = errorReason
			case hasRunning:
				reason = "NotReady"
			}
		}
	}
	if str(meta(o), "deletionTimestamp") != "" && reason != "Succeeded" && reason != "Failed" {
		reason = "Terminating"
	}
	r := fmt.Sprint(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		r = fmt.Sprintf("%d (%s ago)", restarts, duration.HumanDuration(now.Sub(lastRestart)))
	}
	return podCells{ready: fmt.Sprintf("%d/%d", ready, total), status: reason, restarts: r}
}

func exitReason(term map[string]any) string {
	if r := str(term, "reason"); r != "" {
		return r
	}
	if sig, _ := numberInt(term["signal"]); sig != 0 {
		return fmt.Sprintf("Signal:%d", sig)
	}
	code, _ := numberInt(term["exitCode"])
	return fmt.Sprintf("ExitCode:%d", code)
}

func podConditionTrue(status map[string]any, typ string) bool {
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		if cm, ok := c.(map[string]any); ok && cm["type"] == typ {
			return cm["status"] == "True"
		}
	}
	return false
}

func selectorCell(o Object, _ time.Time) any {
	if sel, ok := pathValue(o, "spec", "selector").(map[string]any); ok {
		if ls, err := selectorFromLabelSelector(sel); err == nil {
			return ls.String()
		}
	}
	return "<none>"
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
