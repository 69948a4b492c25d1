package kubeapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// Since client-go v0.32 typed clients (and so kubectl create configmap,
// secret, namespace, deployment) send request bodies as
// application/vnd.kubernetes.protobuf and do not fall back to JSON on 415.
// This is a small decoder for the bodies those clients build: a
// runtime.Unknown envelope ("k8s\x00" magic) around the generated
// protobuf of the served types, turned into the JSON the rest of the
// server speaks. The field numbers are those of kube's generated.proto
// files; unknown fields are skipped. Answers are always JSON, which
// client-go accepts because it lists JSON in Accept.

type pbKind int

const (
	pbString pbKind = iota
	pbBytes
	pbInt   // varint, int32/int64
	pbBool  // varint
	pbMsg   // nested message
	pbMap   // map<string, elem>
	pbTime  // metav1.Time (google.protobuf.Timestamp-like)
	pbIntOr // intstr.IntOrString
	pbQuant // resource.Quantity
)

type pbField struct {
	num      int
	name     string
	kind     pbKind
	msg      string // for pbMsg, and the value type of pbMap ("" string, "bytes", "Quantity")
	repeated bool
	pointer  bool // emitted only when set: zero values are meaningful
}

// pbMessageType is a message and its fields as the decoder knows them.
type pbMessageType struct {
	name   string
	fields []pbField
}

// pbTypes is a table, not a map literal: the compiler lays it out as
// static data, where a map literal of maps is 64 KB of initialisation code
// in the WebAssembly build. It is small enough to search.
var pbTypes = []pbMessageType{
	{"ObjectMeta", []pbField{
		{num: 1, name: "name"}, {num: 2, name: "generateName"}, {num: 3, name: "namespace"}, {num: 4, name: "selfLink"},
		{num: 5, name: "uid"}, {num: 6, name: "resourceVersion"}, {num: 7, name: "generation", kind: pbInt},
		{num: 8, name: "creationTimestamp", kind: pbTime}, {num: 9, name: "deletionTimestamp", kind: pbTime},
		{num: 10, name: "deletionGracePeriodSeconds", kind: pbInt, pointer: true},
		{num: 11, name: "labels", kind: pbMap}, {num: 12, name: "annotations", kind: pbMap},
		{num: 13, name: "ownerReferences", kind: pbMsg, msg: "OwnerReference", repeated: true},
		{num: 14, name: "finalizers", repeated: true},
	}},
	{"OwnerReference", []pbField{
		{num: 5, name: "apiVersion"}, {num: 1, name: "kind"}, {num: 3, name: "name"}, {num: 4, name: "uid"},
		{num: 6, name: "controller", kind: pbBool, pointer: true}, {num: 7, name: "blockOwnerDeletion", kind: pbBool, pointer: true},
	}},
	{"ConfigMap", []pbField{
		{num: 1, name: "metadata", kind: pbMsg, msg: "ObjectMeta"}, {num: 2, name: "data", kind: pbMap},
		{num: 3, name: "binaryData", kind: pbMap, msg: "bytes"}, {num: 4, name: "immutable", kind: pbBool, pointer: true},
	}},
	{"Secret", []pbField{
		{num: 1, name: "metadata", kind: pbMsg, msg: "ObjectMeta"}, {num: 2, name: "data", kind: pbMap, msg: "bytes"},
		{num: 3, name: "type"}, {num: 4, name: "stringData", kind: pbMap}, {num: 5, name: "immutable", kind: pbBool, pointer: true},
	}},
	{"Namespace", []pbField{
		{num: 1, name: "metadata", kind: pbMsg, msg: "ObjectMeta"}, {num: 2, name: "spec", kind: pbMsg, msg: "NamespaceSpec"},
		{num: 3, name: "status", kind: pbMsg, msg: "NamespaceStatus"},
	}},
	{"NamespaceStatus", []pbField{{num: 1, name: "phase"}}},
	{"NamespaceSpec", []pbField{{num: 1, name: "finalizers", repeated: true}}},
	{"Deployment", []pbField{
		{num: 1, name: "metadata", kind: pbMsg, msg: "ObjectMeta"}, {num: 2, name: "spec", kind: pbMsg, msg: "DeploymentSpec"},
		{num: 3, name: "status", kind: pbMsg, msg: "DeploymentStatus"},
	}},
	{"DeploymentSpec", []pbField{
		{num: 1, name: "replicas", kind: pbInt, pointer: true}, {num: 2, name: "selector", kind: pbMsg, msg: "LabelSelector"},
		{num: 3, name: "template", kind: pbMsg, msg: "PodTemplateSpec"}, {num: 4, name: "strategy", kind: pbMsg, msg: "DeploymentStrategy"},
		{num: 5, name: "minReadySeconds", kind: pbInt}, {num: 6, name: "revisionHistoryLimit", kind: pbInt, pointer: true},
		{num: 7, name: "paused", kind: pbBool}, {num: 9, name: "progressDeadlineSeconds", kind: pbInt, pointer: true},
	}},
	{"DeploymentStrategy", []pbField{{num: 1, name: "type"}, {num: 2, name: "rollingUpdate", kind: pbMsg, msg: "RollingUpdateDeployment"}}},
	{"RollingUpdateDeployment", []pbField{
		{num: 1, name: "maxUnavailable", kind: pbIntOr, pointer: true}, {num: 2, name: "maxSurge", kind: pbIntOr, pointer: true},
	}},
	{"LabelSelector", []pbField{
		{num: 1, name: "matchLabels", kind: pbMap},
		{num: 2, name: "matchExpressions", kind: pbMsg, msg: "LabelSelectorRequirement", repeated: true},
	}},
	{"LabelSelectorRequirement", []pbField{{num: 1, name: "key"}, {num: 2, name: "operator"}, {num: 3, name: "values", repeated: true}}},
	{"PodTemplateSpec", []pbField{
		{num: 1, name: "metadata", kind: pbMsg, msg: "ObjectMeta"}, {num: 2, name: "spec", kind: pbMsg, msg: "PodSpec"},
	}},
	{"Pod", []pbField{
		{num: 1, name: "metadata", kind: pbMsg, msg: "ObjectMeta"}, {num: 2, name: "spec", kind: pbMsg, msg: "PodSpec"},
		{num: 3, name: "status", kind: pbMsg, msg: "PodStatus"},
	}},
	{"PodSpec", []pbField{
		{num: 2, name: "containers", kind: pbMsg, msg: "Container", repeated: true}, {num: 3, name: "restartPolicy"},
		{num: 4, name: "terminationGracePeriodSeconds", kind: pbInt, pointer: true},
		{num: 5, name: "activeDeadlineSeconds", kind: pbInt, pointer: true}, {num: 6, name: "dnsPolicy"},
		{num: 7, name: "nodeSelector", kind: pbMap}, {num: 8, name: "serviceAccountName"}, {num: 10, name: "nodeName"},
		{num: 11, name: "hostNetwork", kind: pbBool}, {num: 16, name: "hostname"}, {num: 17, name: "subdomain"},
		{num: 19, name: "schedulerName"}, {num: 20, name: "initContainers", kind: pbMsg, msg: "Container", repeated: true},
		{num: 24, name: "priorityClassName"},
	}},
	{"Container", []pbField{
		{num: 1, name: "name"}, {num: 2, name: "image"}, {num: 3, name: "command", repeated: true}, {num: 4, name: "args", repeated: true},
		{num: 5, name: "workingDir"}, {num: 6, name: "ports", kind: pbMsg, msg: "ContainerPort", repeated: true},
		{num: 7, name: "env", kind: pbMsg, msg: "EnvVar", repeated: true},
		{num: 8, name: "resources", kind: pbMsg, msg: "ResourceRequirements"},
		{num: 13, name: "terminationMessagePath"}, {num: 14, name: "imagePullPolicy"}, {num: 16, name: "stdin", kind: pbBool},
		{num: 17, name: "stdinOnce", kind: pbBool}, {num: 18, name: "tty", kind: pbBool}, {num: 20, name: "terminationMessagePolicy"},
	}},
	{"ContainerPort", []pbField{
		{num: 1, name: "name"}, {num: 2, name: "hostPort", kind: pbInt}, {num: 3, name: "containerPort", kind: pbInt},
		{num: 4, name: "protocol"}, {num: 5, name: "hostIP"},
	}},
	{"EnvVar", []pbField{{num: 1, name: "name"}, {num: 2, name: "value"}}},
	{"DeleteOptions", []pbField{
		{num: 1, name: "gracePeriodSeconds", kind: pbInt, pointer: true}, {num: 2, name: "preconditions", kind: pbMsg, msg: "Preconditions"},
		{num: 3, name: "orphanDependents", kind: pbBool, pointer: true}, {num: 4, name: "propagationPolicy", pointer: true},
		{num: 5, name: "dryRun", repeated: true},
	}},
	{"Preconditions", []pbField{{num: 1, name: "uid", pointer: true}, {num: 2, name: "resourceVersion", pointer: true}}},
	{"Scale", []pbField{
		{num: 1, name: "metadata", kind: pbMsg, msg: "ObjectMeta"}, {num: 2, name: "spec", kind: pbMsg, msg: "ScaleSpec"},
		{num: 3, name: "status", kind: pbMsg, msg: "ScaleStatus"},
	}},
	{"ScaleSpec", []pbField{{num: 1, name: "replicas", kind: pbInt}}},
	{"ScaleStatus", []pbField{{num: 1, name: "replicas", kind: pbInt}, {num: 2, name: "selector"}}},
	{"Event", []pbField{
		{num: 1, name: "metadata", kind: pbMsg, msg: "ObjectMeta"}, {num: 2, name: "involvedObject", kind: pbMsg, msg: "ObjectReference"},
		{num: 3, name: "reason"}, {num: 4, name: "message"}, {num: 5, name: "source", kind: pbMsg, msg: "EventSource"},
		{num: 6, name: "firstTimestamp", kind: pbTime}, {num: 7, name: "lastTimestamp", kind: pbTime}, {num: 8, name: "count", kind: pbInt},
		{num: 9, name: "type"}, {num: 12, name: "action"}, {num: 14, name: "reportingComponent"}, {num: 15, name: "reportingInstance"},
	}},
	{"ObjectReference", []pbField{
		{num: 1, name: "kind"}, {num: 2, name: "namespace"}, {num: 3, name: "name"}, {num: 4, name: "uid"}, {num: 5, name: "apiVersion"},
		{num: 6, name: "resourceVersion"}, {num: 7, name: "fieldPath"},
	}},
	{"EventSource", []pbField{{num: 1, name: "component"}, {num: 2, name: "host"}}},
	{"DeploymentStatus", []pbField{
		{num: 1, name: "observedGeneration", kind: pbInt}, {num: 2, name: "replicas", kind: pbInt}, {num: 3, name: "updatedReplicas", kind: pbInt},
		{num: 4, name: "availableReplicas", kind: pbInt}, {num: 5, name: "unavailableReplicas", kind: pbInt}, {num: 7, name: "readyReplicas", kind: pbInt},
		{num: 8, name: "collisionCount", kind: pbInt, pointer: true},
	}},
	{"PodStatus", []pbField{{num: 1, name: "phase"}, {num: 3, name: "message"}, {num: 4, name: "reason"}, {num: 5, name: "hostIP"}, {num: 6, name: "podIP"}, {num: 7, name: "startTime", kind: pbTime}}},
	{"ResourceRequirements", []pbField{{num: 1, name: "limits", kind: pbMap, msg: "Quantity"}, {num: 2, name: "requests", kind: pbMap, msg: "Quantity"}}},
}

// pbFields returns the fields of the message type named typ.
func pbFields(typ string) ([]pbField, bool) {
	for _, t := range pbTypes {
		if t.name == typ {
			return t.fields, true
		}
	}
	return nil, false
}

var errProtobuf = errors.New("invalid protobuf")

func pbVarint(b []byte, i int) (uint64, int, error) {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if i >= len(b) {
			return 0, 0, errProtobuf
		}
		c := b[i]
		i++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, i, nil
		}
	}
	return 0, 0, errProtobuf
}

// pbEach calls fn for every field of a message.
func pbEach(b []byte, fn func(num int, wire int, v uint64, data []byte) error) error {
	for i := 0; i < len(b); {
		tag, j, err := pbVarint(b, i)
		if err != nil {
			return err
		}
		i = j
		num, wire := int(tag>>3), int(tag&7)
		switch wire {
		case 0:
			v, j, err := pbVarint(b, i)
			if err != nil {
				return err
			}
			i = j
			if err := fn(num, wire, v, nil); err != nil {
				return err
			}
		case 2:
			n, j, err := pbVarint(b, i)
			if err != nil || n > uint64(len(b)-j) {
				return errProtobuf
			}
			data := b[j : j+int(n)]
			i = j + int(n)
			if err := fn(num, wire, 0, data); err != nil {
				return err
			}
		case 1:
			i += 8
		case 5:
			i += 4
		default:
			return errProtobuf
		}
		if i > len(b) {
			return errProtobuf
		}
	}
	return nil
}

// pbMessage decodes a message of type typ. Fields the table does not
// name are skipped, or with raw kept under their field number (pbRaw).
func pbMessage(typ string, b []byte, depth int, raw bool) (map[string]any, error) {
	fields, _ := pbFields(typ)
	return pbFieldsOf(fields, b, depth, raw)
}

func pbFieldsOf(fields []pbField, b []byte, depth int, raw bool) (map[string]any, error) {
	if depth > 32 {
		return nil, errProtobuf
	}
	out := map[string]any{}
	err := pbEach(b, func(num, wire int, v uint64, data []byte) error {
		i := slices.IndexFunc(fields, func(f pbField) bool { return f.num == num })
		if i < 0 {
			if raw {
				pbKeepRaw(out, num, pbRaw(wire, v, data, depth+1))
			}
			return nil
		}
		f := fields[i]
		val, keep, err := pbValue(f, wire, v, data, depth, raw)
		if err != nil || !keep {
			return err
		}
		switch {
		case f.kind == pbMap:
			m, _ := out[f.name].(map[string]any)
			if m == nil {
				m = map[string]any{}
				out[f.name] = m
			}
			kv := val.([2]any)
			m[kv[0].(string)] = kv[1]
		case f.repeated:
			l, _ := out[f.name].([]any)
			out[f.name] = append(l, val)
		default:
			out[f.name] = val
		}
		return nil
	})
	return out, err
}

// pbValue decodes one field value; keep is false for zero values of
// fields that are not pointers (Go's protobuf writes them always; JSON
// omits them).
func pbValue(f pbField, wire int, v uint64, data []byte, depth int, raw bool) (any, bool, error) {
	switch f.kind {
	case pbString:
		if wire != 2 {
			return nil, false, errProtobuf
		}
		return string(data), len(data) > 0 || f.repeated || f.pointer, nil
	case pbBytes:
		return base64.StdEncoding.EncodeToString(data), true, nil
	case pbInt:
		if wire != 0 {
			return nil, false, errProtobuf
		}
		return int64(v), v != 0 || f.pointer, nil
	case pbBool:
		if wire != 0 {
			return nil, false, errProtobuf
		}
		return v != 0, v != 0 || f.pointer, nil
	case pbMsg:
		if wire != 2 {
			return nil, false, errProtobuf
		}
		m, err := pbMessage(f.msg, data, depth+1, raw)
		return m, true, err
	case pbTime:
		var secs int64
		err := pbEach(data, func(num, wire int, v uint64, _ []byte) error {
			if num == 1 && wire == 0 {
				secs = int64(v)
			}
			return nil
		})
		if err != nil || secs == 0 {
			return nil, false, err
		}
		return time.Unix(secs, 0).UTC().Format(time.RFC3339), true, nil
	case pbIntOr:
		var typ, iv int64
		var sv string
		err := pbEach(data, func(num, wire int, v uint64, d []byte) error {
			switch num {
			case 1:
				typ = int64(v)
			case 2:
				iv = int64(int32(v))
			case 3:
				sv = string(d)
			}
			return nil
		})
		if typ == 1 {
			return sv, true, err
		}
		return iv, true, err
	case pbMap:
		var key string
		var val any = ""
		if f.msg == "bytes" {
			val = ""
		}
		err := pbEach(data, func(num, wire int, v uint64, d []byte) error {
			switch num {
			case 1:
				key = string(d)
			case 2:
				switch f.msg {
				case "bytes":
					val = base64.StdEncoding.EncodeToString(d)
				case "Quantity":
					q := ""
					_ = pbEach(d, func(n, w int, _ uint64, s []byte) error {
						if n == 1 {
							q = string(s)
						}
						return nil
					})
					val = q
				default:
					val = string(d)
				}
			}
			return nil
		})
		return [2]any{key, val}, true, err
	}
	return nil, false, nil
}

var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// protobufEnvelope opens kube's protobuf envelope (runtime.Unknown after
// the "k8s\x00" magic): the object's apiVersion and kind and its message.
func protobufEnvelope(body []byte) (apiVersion, kind string, raw []byte, err error) {
	if len(body) < 4 || string(body[:4]) != string(protobufMagic) {
		return "", "", nil, fmt.Errorf("provided data does not appear to be a protobuf message, expected prefix %v", protobufMagic)
	}
	err = pbEach(body[4:], func(num, wire int, v uint64, data []byte) error {
		switch num {
		case 1:
			return pbEach(data, func(n, w int, _ uint64, d []byte) error {
				switch n {
				case 1:
					apiVersion = string(d)
				case 2:
					kind = string(d)
				}
				return nil
			})
		case 2:
			raw = data
		}
		return nil
	})
	return apiVersion, kind, raw, err
}

// protobufToJSON converts a kube protobuf body of the given kind to an
// object. An unknown kind or malformed data is an error.
func protobufToJSON(body []byte) (map[string]any, error) {
	apiVersion, kind, raw, err := protobufEnvelope(body)
	if err != nil {
		return nil, err
	}
	if _, ok := pbFields(kind); !ok || kind == "ObjectMeta" {
		return nil, fmt.Errorf("no kind %q is registered for the protobuf encoding of version %q", kind, apiVersion)
	}
	o, err := pbMessage(kind, raw, 0, false)
	if err != nil {
		return nil, err
	}
	o["apiVersion"], o["kind"] = apiVersion, kind
	return o, nil
}

// IsStoredProtobuf reports whether an etcd value is an object a
// kube-apiserver stored in protobuf: the "k8s\x00" envelope.
func IsStoredProtobuf(value []byte) bool { return bytes.HasPrefix(value, protobufMagic) }

// StoredProtobufJSON shows an object a kube-apiserver stored in etcd in
// protobuf as JSON, for the lab's etcd view (as it would read had it been
// stored in JSON): the fields of the
// kinds the request decoder knows by name (and the metadata of any kind),
// every other field under its field number, the way
// `protoc --decode_raw` shows a message it has no schema for. It is for
// reading only: a field shown by number is a number, or bytes shown as
// text when printable, else as a nested message when they parse as one,
// else in base64; the bytes alone cannot say which it was.
func StoredProtobufJSON(value []byte) ([]byte, error) {
	apiVersion, kind, raw, err := protobufEnvelope(value)
	if err != nil {
		return nil, err
	}
	fields, ok := pbFields(kind)
	if !ok {
		fields = storedObjectFields
	}
	o, err := pbFieldsOf(fields, raw, 0, true)
	if err != nil {
		return nil, err
	}
	o["apiVersion"], o["kind"] = apiVersion, kind
	return json.Marshal(o)
}

// storedObjectFields are what every kind kube stores has in common: its
// metadata is field 1 (each type's generated.proto).
var storedObjectFields = []pbField{{num: 1, name: "metadata", kind: pbMsg, msg: "ObjectMeta"}}

// pbKeepRaw adds a field kept by number to a message; a number seen again
// is a repeated field, a list (pbRaw's values are never lists).
func pbKeepRaw(out map[string]any, num int, v any) {
	key := strconv.Itoa(num)
	switch prev := out[key].(type) {
	case nil:
		out[key] = v
	case []any:
		out[key] = append(prev, v)
	default:
		out[key] = []any{prev, v}
	}
}

// pbRaw decodes a field without a schema: a varint is a number; bytes are
// text when they are printable UTF-8, else a nested message when they
// parse as one, else base64. Printable bytes that begin with a newline
// are tried as a message first: that is field 1's tag, and a message
// whose field 1 is a string of 32 to 126 printable bytes is printable
// (text seldom starts with a newline).
func pbRaw(wire int, v uint64, data []byte, depth int) any {
	if wire == 0 {
		return v
	}
	printable := pbPrintable(data)
	if printable && (len(data) == 0 || data[0] != '\n') {
		return string(data)
	}
	if depth <= 32 {
		if m, err := pbMessage("", data, depth, true); err == nil && len(m) > 0 {
			return m
		}
	}
	if printable {
		return string(data)
	}
	return base64.StdEncoding.EncodeToString(data)
}

func pbPrintable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 && r != '\n' && r != '\t' && r != '\r' || r == 0x7f {
			return false
		}
	}
	return true
}
