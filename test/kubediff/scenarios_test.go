package kubediff

import (
	"testing"
	"time"
)

// TestEmptiedLabels runs, without the keep label and annotation the seeded
// sequences add, writes that empty an object's labels and with them its
// managed fields (by merge patch, by an apply that gives up every field),
// then writes more: once an object has no managed fields, later non-apply
// writes record none (kube's skipNonAppliedManager), on both servers.
func TestEmptiedLabels(t *testing.T) {
	buildAll(t)
	seq := []op{
		{Verb: "create", Name: "a", Labels: map[string]string{"x": "1"}},
		{Verb: "merge", Name: "a", Labels: map[string]string{"x": ""}},
		{Verb: "update", Name: "a", Labels: map[string]string{"y": "3"}, Pre: "current"},
		{Verb: "get", Name: "a"},
		{Verb: "apply", Name: "b", Manager: "m1", Labels: map[string]string{"x": "1"}},
		{Verb: "apply", Name: "b", Manager: "m1", Labels: map[string]string{}},
		{Verb: "update", Name: "b", Labels: map[string]string{"y": "1"}, Pre: "current"},
		{Verb: "get", Name: "b"},
		{Verb: "create", Name: "c", Labels: map[string]string{"x": "1"}},
		{Verb: "apply", Name: "c", Manager: "m1", Labels: map[string]string{"y": "1"}},
		{Verb: "merge", Name: "c", Labels: map[string]string{"x": "", "y": ""}},
		{Verb: "get", Name: "c"},
		{Verb: "apply", Name: "d", Manager: "m1", Labels: map[string]string{"x": "1"}},
		{Verb: "apply", Name: "d", Manager: "m2", Labels: map[string]string{"y": "1"}},
		{Verb: "merge", Name: "d", Labels: map[string]string{"x": "", "y": "", "z": ""}},
		{Verb: "update", Name: "d", Labels: map[string]string{"z": "1"}, Pre: "current"},
		{Verb: "list"},
	}
	i := 0
	runSequence(t, 0, len(seq)+1, false, func(genState) op { i++; return seq[i-1] })
}

// TestForcedApplyLoserTime has m1 take a label from m3 by a forced apply
// in a later second than m3's apply, and checks that m3's managedFields
// time is kept on both servers (times have one-second resolution, and in
// the seeded sequences two writes usually share a second; the pause is for
// the clock, not to wait for an event).
func TestForcedApplyLoserTime(t *testing.T) {
	buildAll(t)
	seq := []op{
		{Verb: "apply", Name: "a", Manager: "m3", Labels: map[string]string{"y": "1"}},
		{Verb: "apply", Name: "a", Manager: "m1", Labels: map[string]string{"y": "2"}, Force: true},
		{Verb: "get", Name: "a"},
	}
	i := 0
	runSequence(t, 0, len(seq)+1, true, func(genState) op {
		i++
		if i == 2 {
			time.Sleep(1100 * time.Millisecond)
		}
		return seq[i-1]
	})
}
