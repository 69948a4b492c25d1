package controllers

import (
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/rvplay/rvplay/engine/client"
)

// What the controllers read of a pod (kube's podutil and controller
// utils).

func podPhase(p client.Object) string { return stringAt(p, "status", "phase") }

func isPodReady(p client.Object) bool {
	c := conditionOf(p, "Ready")
	return c != nil && c["status"] == "True"
}

// podReadyTime is when the pod became ready (zero when it is not).
func podReadyTime(p client.Object) time.Time {
	if c := conditionOf(p, "Ready"); c != nil && c["status"] == "True" {
		t, _ := time.Parse(time.RFC3339, stringOf(c["lastTransitionTime"]))
		return t
	}
	return time.Time{}
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

// isPodAvailable: ready for at least minReadySeconds.
func isPodAvailable(p client.Object, minReadySeconds int64, now time.Time) bool {
	if !isPodReady(p) {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	t := podReadyTime(p)
	return !t.IsZero() && t.Add(time.Duration(minReadySeconds)*time.Second).Before(now)
}

// isPodActive: neither finished nor being deleted.
func isPodActive(p client.Object) bool {
	ph := podPhase(p)
	return ph != "Succeeded" && ph != "Failed" && !beingDeleted(p)
}

func maxContainerRestarts(p client.Object) int64 {
	var n int64
	for _, c := range listAt(p, "status", "containerStatuses") {
		m, _ := c.(map[string]any)
		n = max(n, int64At(client.Object(m), "restartCount"))
	}
	return n
}

var podPhaseOrdinal = map[string]int{"Pending": 0, "Unknown": 1, "Running": 2}

// rankPodsForDeletion orders pods as kube's ActivePodsWithRanks does, the
// ones to delete first first: unscheduled before scheduled, Pending before
// Unknown before Running, not ready before ready, lower
// controller.kubernetes.io/pod-deletion-cost first, then (every pod here
// ranking alike, there being no nodes) the most recently ready, the one
// restarted most, the newest, with times compared on a logarithmic scale
// from now and the UID breaking ties.
func rankPodsForDeletion(pods []client.Object, now time.Time) {
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		na, nb := stringAt(a, "spec", "nodeName"), stringAt(b, "spec", "nodeName")
		if na != nb && (na == "" || nb == "") {
			return na == ""
		}
		if pa, pb := podPhaseOrdinal[podPhase(a)], podPhaseOrdinal[podPhase(b)]; pa != pb {
			return pa < pb
		}
		if ra, rb := isPodReady(a), isPodReady(b); ra != rb {
			return !ra
		}
		if ca, cb := deletionCost(a), deletionCost(b); ca != cb {
			return ca < cb
		}
		if isPodReady(a) && isPodReady(b) {
			ta, tb := podReadyTime(a), podReadyTime(b)
			if !ta.Equal(tb) {
				if ta.IsZero() || tb.IsZero() {
					return afterOrZero(ta, tb)
				}
				if d := logRankDiff(ta, tb, now); d != 0 {
					return d < 0
				}
				return a.UID() < b.UID()
			}
		}
		if ra, rb := maxContainerRestarts(a), maxContainerRestarts(b); ra != rb {
			return ra > rb
		}
		ta, tb := timeAt(a, "metadata", "creationTimestamp"), timeAt(b, "metadata", "creationTimestamp")
		if !ta.Equal(tb) {
			if ta.IsZero() || tb.IsZero() {
				return afterOrZero(ta, tb)
			}
			if d := logRankDiff(ta, tb, now); d != 0 {
				return d < 0
			}
			return a.UID() < b.UID()
		}
		return false
	})
}

func deletionCost(p client.Object) int64 {
	v, ok := p.Annotations()["controller.kubernetes.io/pod-deletion-cost"]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0
	}
	return n
}

func afterOrZero(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero()
	}
	return a.After(b)
}

// logRankDiff compares two times by the base-2 logarithm of their age.
func logRankDiff(a, b, now time.Time) int64 {
	r := func(t time.Time) int64 {
		if d := now.Sub(t); d > 0 {
			return int64(math.Log2(float64(d)))
		}
		return -1
	}
	return r(a) - r(b)
}
