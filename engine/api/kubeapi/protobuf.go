package kubeapi

import (
	"encoding/base64"
	"errors"
	"fmt"
	"time"
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
	name     string
	kind     pbKind
	msg      string // for pbMsg, and the value type of pbMap ("" string, "bytes", "Quantity")
	repeated bool
	pointer  bool // emitted only when set: zero values are meaningful
}

var pbTypes = map[string]map[int]pbField{
	"ObjectMeta": {
		1: {name: "name"}, 2: {name: "generateName"}, 3: {name: "namespace"}, 4: {name: "selfLink"},
		5: {name: "uid"}, 6: {name: "resourceVersion"}, 7: {name: "generation", kind: pbInt},
		8: {name: "creationTimestamp", kind: pbTime}, 9: {name: "deletionTimestamp", kind: pbTime},
		10: {name: "deletionGracePeriodSeconds", kind: pbInt, pointer: true},
		11: {name: "labels", kind: pbMap}, 12: {name: "annotations", kind: pbMap},
		13: {name: "ownerReferences", kind: pbMsg, msg: "OwnerReference", repeated: true},
		14: {name: "finalizers", repeated: true},
	},
	"OwnerReference": {
		5: {name: "apiVersion"}, 1: {name: "kind"}, 3: {name: "name"}, 4: {name: "uid"},
		6: {name: "controller", kind: pbBool, pointer: true}, 7: {name: "blockOwnerDeletion", kind: pbBool, pointer: true},
	},
	"ConfigMap": {
		1: {name: "metadata", kind: pbMsg, msg: "ObjectMeta"}, 2: {name: "data", kind: pbMap},
		3: {name: "binaryData", kind: pbMap, msg: "bytes"}, 4: {name: "immutable", kind: pbBool, pointer: true},
	},
	"Secret": {
		1: {name: "metadata", kind: pbMsg, msg: "ObjectMeta"}, 2: {name: "data", kind: pbMap, msg: "bytes"},
		3: {name: "type"}, 4: {name: "stringData", kind: pbMap}, 5: {name: "immutable", kind: pbBool, pointer: true},
	},
	"Namespace": {
		1: {name: "metadata", kind: pbMsg, msg: "ObjectMeta"}, 2: {name: "spec", kind: pbMsg, msg: "NamespaceSpec"},
		3: {name: "status", kind: pbMsg, msg: "NamespaceStatus"},
	},
	"NamespaceStatus": {1: {name: "phase"}},
	"NamespaceSpec":   {1: {name: "finalizers", repeated: true}},
	"Deployment": {
		1: {name: "metadata", kind: pbMsg, msg: "ObjectMeta"}, 2: {name: "spec", kind: pbMsg, msg: "DeploymentSpec"},
		3: {name: "status", kind: pbMsg, msg: "DeploymentStatus"},
	},
	"DeploymentSpec": {
		1: {name: "replicas", kind: pbInt, pointer: true}, 2: {name: "selector", kind: pbMsg, msg: "LabelSelector"},
		3: {name: "template", kind: pbMsg, msg: "PodTemplateSpec"}, 4: {name: "strategy", kind: pbMsg, msg: "DeploymentStrategy"},
		5: {name: "minReadySeconds", kind: pbInt}, 6: {name: "revisionHistoryLimit", kind: pbInt, pointer: true},
		7: {name: "paused", kind: pbBool}, 9: {name: "progressDeadlineSeconds", kind: pbInt, pointer: true},
	},
	"DeploymentStrategy": {1: {name: "type"}, 2: {name: "rollingUpdate", kind: pbMsg, msg: "RollingUpdateDeployment"}},
	"RollingUpdateDeployment": {
		1: {name: "maxUnavailable", kind: pbIntOr, pointer: true}, 2: {name: "maxSurge", kind: pbIntOr, pointer: true},
	},
	"LabelSelector": {
		1: {name: "matchLabels", kind: pbMap},
		2: {name: "matchExpressions", kind: pbMsg, msg: "LabelSelectorRequirement", repeated: true},
	},
	"LabelSelectorRequirement": {1: {name: "key"}, 2: {name: "operator"}, 3: {name: "values", repeated: true}},
	"PodTemplateSpec": {
		1: {name: "metadata", kind: pbMsg, msg: "ObjectMeta"}, 2: {name: "spec", kind: pbMsg, msg: "PodSpec"},
	},
	"Pod": {
		1: {name: "metadata", kind: pbMsg, msg: "ObjectMeta"}, 2: {name: "spec", kind: pbMsg, msg: "PodSpec"},
		3: {name: "status", kind: pbMsg, msg: "PodStatus"},
	},
	"PodSpec": {
		2: {name: "containers", kind: pbMsg, msg: "Container", repeated: true}, 3: {name: "restartPolicy"},
		4: {name: "terminationGracePeriodSeconds", kind: pbInt, pointer: true},
		5: {name: "activeDeadlineSeconds", kind: pbInt, pointer: true}, 6: {name: "dnsPolicy"},
		7: {name: "nodeSelector", kind: pbMap}, 8: {name: "serviceAccountName"}, 10: {name: "nodeName"},
		11: {name: "hostNetwork", kind: pbBool}, 16: {name: "hostname"}, 17: {name: "subdomain"},
		19: {name: "schedulerName"}, 20: {name: "initContainers", kind: pbMsg, msg: "Container", repeated: true},
		24: {name: "priorityClassName"},
	},
	"Container": {
		1: {name: "name"}, 2: {name: "image"}, 3: {name: "command", repeated: true}, 4: {name: "args", repeated: true},
		5: {name: "workingDir"}, 6: {name: "ports", kind: pbMsg, msg: "ContainerPort", repeated: true},
		7:  {name: "env", kind: pbMsg, msg: "EnvVar", repeated: true},
		8:  {name: "resources", kind: pbMsg, msg: "ResourceRequirements"},
		13: {name: "terminationMessagePath"}, 14: {name: "imagePullPolicy"}, 16: {name: "stdin", kind: pbBool},
		17: {name: "stdinOnce", kind: pbBool}, 18: {name: "tty", kind: pbBool}, 20: {name: "terminationMessagePolicy"},
	},
	"ContainerPort": {
		1: {name: "name"}, 2: {name: "hostPort", kind: pbInt}, 3: {name: "containerPort", kind: pbInt},
		4: {name: "protocol"}, 5: {name: "hostIP"},
	},
	"EnvVar": {1: {name: "name"}, 2: {name: "value"}},
	"DeleteOptions": {
		1: {name: "gracePeriodSeconds", kind: pbInt, pointer: true}, 2: {name: "preconditions", kind: pbMsg, msg: "Preconditions"},
		3: {name: "orphanDependents", kind: pbBool, pointer: true}, 4: {name: "propagationPolicy", pointer: true},
		5: {name: "dryRun", repeated: true},
	},
	"Preconditions": {1: {name: "uid", pointer: true}, 2: {name: "resourceVersion", pointer: true}},
	"Scale": {
		1: {name: "metadata", kind: pbMsg, msg: "ObjectMeta"}, 2: {name: "spec", kind: pbMsg, msg: "ScaleSpec"},
		3: {name: "status", kind: pbMsg, msg: "ScaleStatus"},
	},
	"ScaleSpec":   {1: {name: "replicas", kind: pbInt}},
	"ScaleStatus": {1: {name: "replicas", kind: pbInt}, 2: {name: "selector"}},
	"Event": {
		1: {name: "metadata", kind: pbMsg, msg: "ObjectMeta"}, 2: {name: "involvedObject", kind: pbMsg, msg: "ObjectReference"},
		3: {name: "reason"}, 4: {name: "message"}, 5: {name: "source", kind: pbMsg, msg: "EventSource"},
		6: {name: "firstTimestamp", kind: pbTime}, 7: {name: "lastTimestamp", kind: pbTime}, 8: {name: "count", kind: pbInt},
		9: {name: "type"}, 12: {name: "action"}, 14: {name: "reportingComponent"}, 15: {name: "reportingInstance"},
	},
	"ObjectReference": {
		1: {name: "kind"}, 2: {name: "namespace"}, 3: {name: "name"}, 4: {name: "uid"}, 5: {name: "apiVersion"},
		6: {name: "resourceVersion"}, 7: {name: "fieldPath"},
	},
	"EventSource": {1: {name: "component"}, 2: {name: "host"}},
	"DeploymentStatus": {
		1: {name: "observedGeneration", kind: pbInt}, 2: {name: "replicas", kind: pbInt}, 3: {name: "updatedReplicas", kind: pbInt},
		4: {name: "availableReplicas", kind: pbInt}, 5: {name: "unavailableReplicas", kind: pbInt}, 7: {name: "readyReplicas", kind: pbInt},
		8: {name: "collisionCount", kind: pbInt, pointer: true},
	},
	"PodStatus":            {1: {name: "phase"}, 3: {name: "message"}, 4: {name: "reason"}, 5: {name: "hostIP"}, 6: {name: "podIP"}, 7: {name: "startTime", kind: pbTime}},
	"ResourceRequirements": {1: {name: "limits", kind: pbMap, msg: "Quantity"}, 2: {name: "requests", kind: pbMap, msg: "Quantity"}},
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

func pbMessage(typ string, b []byte, depth int) (map[string]any, error) {
	if depth > 32 {
		return nil, errProtobuf
	}
	fields := pbTypes[typ]
	out := map[string]any{}
	err := pbEach(b, func(num, wire int, v uint64, data []byte) error {
		f, ok := fields[num]
		if !ok {
			return nil
		}
		val, keep, err := pbValue(f, wire, v, data, depth)
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
func pbValue(f pbField, wire int, v uint64, data []byte, depth int) (any, bool, error) {
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
		m, err := pbMessage(f.msg, data, depth+1)
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

// protobufToJSON converts a kube protobuf body of the given kind to an
// object. An unknown kind or malformed data is an error.
func protobufToJSON(body []byte) (map[string]any, error) {
	if len(body) < 4 || string(body[:4]) != string(protobufMagic) {
		return nil, fmt.Errorf("provided data does not appear to be a protobuf message, expected prefix %v", protobufMagic)
	}
	var apiVersion, kind string
	var raw []byte
	err := pbEach(body[4:], func(num, wire int, v uint64, data []byte) error {
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
	if err != nil {
		return nil, err
	}
	if _, ok := pbTypes[kind]; !ok || kind == "ObjectMeta" {
		return nil, fmt.Errorf("no kind %q is registered for the protobuf encoding of version %q", kind, apiVersion)
	}
	o, err := pbMessage(kind, raw, 0)
	if err != nil {
		return nil, err
	}
	o["apiVersion"], o["kind"] = apiVersion, kind
	return o, nil
}
