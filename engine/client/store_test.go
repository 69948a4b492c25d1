package client

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"testing"
)

func cm(ns, name, rv string) Object {
	return Object{"kind": "ConfigMap", "apiVersion": "v1",
		"metadata": map[string]any{"namespace": ns, "name": name, "resourceVersion": rv}}
}

type handlerLog []string

func (l *handlerLog) handler() Handler {
	return Handler{
		OnAdd: func(o Object) { *l = append(*l, "add "+o.Key()+"@"+o.ResourceVersion()) },
		OnUpdate: func(old, o Object) {
			*l = append(*l, "update "+o.Key()+"@"+old.ResourceVersion()+"->"+o.ResourceVersion())
		},
		OnDelete: func(obj any) {
			switch o := obj.(type) {
			case Object:
				*l = append(*l, "delete "+o.Key()+"@"+o.ResourceVersion())
			case DeletedFinalStateUnknown:
				*l = append(*l, "DeletedFinalStateUnknown "+o.Key+"@"+o.Obj.ResourceVersion())
			default:
				*l = append(*l, fmt.Sprintf("OnDelete(%T)", obj))
			}
		},
	}
}

// A relist is not a watch: Replace sees only the new state, so it
// announces the difference as client-go's informer does. A new object is
// an add, one whose resourceVersion changed an update from the last known
// state, an unchanged one nothing, and one that is gone a delete whose
// final state is unknown: OnDelete gets a DeletedFinalStateUnknown with
// the key and the last state the store knew (its old resourceVersion),
// after the adds and updates, as DeltaFIFO.Replace queues them.
func TestStoreReplaceAnnouncesOnlyTheDifference(t *testing.T) {
	s := NewStore()
	var log handlerLog
	s.AddHandler(log.handler())
	if s.HasSynced() {
		t.Fatal("synced before the first Replace")
	}
	s.Replace([]Object{cm("ns", "a", "1"), cm("ns", "b", "2")}, "5")
	if !s.HasSynced() || s.ResourceVersion() != "5" {
		t.Fatalf("synced=%v rv=%s", s.HasSynced(), s.ResourceVersion())
	}
	s.Replace([]Object{cm("ns", "b", "6"), cm("ns", "c", "7"), cm("ns", "a", "1")}, "8")
	want := handlerLog{"add ns/a@1", "add ns/b@2", "update ns/b@2->6", "add ns/c@7"}
	if !reflect.DeepEqual(log, want) {
		t.Fatalf("got %q want %q", log, want)
	}
	log = nil
	gone := s.Replace([]Object{cm("ns", "d", "9"), cm("ns", "c", "7")}, "9")
	if want := (handlerLog{"add ns/d@9", "DeletedFinalStateUnknown ns/a@1", "DeletedFinalStateUnknown ns/b@6"}); !reflect.DeepEqual(log, want) {
		t.Fatalf("got %q want %q", log, want)
	}
	if len(gone) != 2 || gone[0].Key != "ns/a" || gone[1].Key != "ns/b" || gone[1].Obj.ResourceVersion() != "6" {
		t.Fatalf("Replace returned %v", gone)
	}
	if _, ok := s.Get("ns/b"); ok || s.Len() != 2 {
		t.Fatalf("the store still holds ns/b (%d items)", s.Len())
	}
}

func TestStoreAddUpdateDeleteByNamespaceNameKey(t *testing.T) {
	s := NewStore()
	var log handlerLog
	s.AddHandler(log.handler())
	s.Add(cm("x", "a", "1"))
	s.Update(cm("x", "a", "2"))
	s.Add(cm("y", "a", "3"))
	if o, ok := s.Get("x/a"); !ok || o.ResourceVersion() != "2" {
		t.Fatalf("x/a = %v %v", o, ok)
	}
	s.Delete(cm("x", "a", "4"))
	s.Delete(cm("x", "zz", "5")) // unknown: no event
	if s.Len() != 1 {
		t.Fatalf("len %d", s.Len())
	}
	want := handlerLog{"add x/a@1", "update x/a@1->2", "add y/a@3", "delete x/a@4"}
	if !reflect.DeepEqual(log, want) {
		t.Fatalf("got %q want %q", log, want)
	}
}

func TestLateHandlerSeesExistingObjectsAsAdds(t *testing.T) {
	s := NewStore()
	s.Replace([]Object{cm("ns", "a", "1")}, "1")
	var log handlerLog
	s.AddHandler(log.handler())
	if want := (handlerLog{"add ns/a@1"}); !reflect.DeepEqual(log, want) {
		t.Fatalf("got %q", log)
	}
	if !s.WaitForSync(context.Background()) {
		t.Fatal("WaitForSync")
	}
}

func TestReflectorStepLogKeepsTheLatestMaxSteps(t *testing.T) {
	r := NewReflector(New(nil).Resource(ConfigMaps), NewStore())
	r.MaxSteps = 3
	for i := 0; i < 10; i++ {
		r.step(Step{Kind: StepBookmark, RV: strconv.Itoa(i)})
	}
	steps := r.Steps()
	if len(steps) != 3 || steps[0].RV != "7" || steps[2].RV != "9" || steps[2].Seq != 10 {
		t.Fatalf("steps %v", steps)
	}
}
