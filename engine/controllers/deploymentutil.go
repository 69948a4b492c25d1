package controllers

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/client"
)

// kube's deployment util: annotations, revisions, the rolling update's
// bounds, conditions and the status computed from the ReplicaSets.

const (
	RevisionAnnotation        = "deployment.kubernetes.io/revision"
	RevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	MaxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"
	// ChangeCauseAnnotation is what kubectl's --record wrote (and what
	// `kubectl annotate ... kubernetes.io/change-cause=` writes now); the
	// controller copies it to the ReplicaSet, where `kubectl rollout
	// history` reads it.
	ChangeCauseAnnotation = "kubernetes.io/change-cause"

	lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
	rollbackToAnnotation  = "deprecated.deployment.rollback.to"
)

// Deployment condition types and reasons (kube's deployment util).
const (
	DeploymentAvailable      = "Available"
	DeploymentProgressing    = "Progressing"
	DeploymentReplicaFailure = "ReplicaFailure"

	ReasonReplicaSetUpdated          = "ReplicaSetUpdated"
	ReasonFailedRSCreate             = "ReplicaSetCreateError"
	ReasonNewReplicaSet              = "NewReplicaSetCreated"
	ReasonFoundNewRS                 = "FoundNewReplicaSet"
	ReasonNewRSAvailable             = "NewReplicaSetAvailable"
	ReasonTimedOut                   = "ProgressDeadlineExceeded"
	ReasonPausedDeploy               = "DeploymentPaused"
	ReasonResumedDeploy              = "DeploymentResumed"
	ReasonMinimumReplicasAvailable   = "MinimumReplicasAvailable"
	ReasonMinimumReplicasUnavailable = "MinimumReplicasUnavailable"
)

// annotationsToSkip are not copied from a Deployment to its ReplicaSets
// (nor back on a rollback).
var annotationsToSkip = map[string]bool{lastAppliedAnnotation: true, RevisionAnnotation: true, RevisionHistoryAnnotation: true,
	DesiredReplicasAnnotation: true, MaxReplicasAnnotation: true, rollbackToAnnotation: true}

// maxRevHistoryLengthInChars bounds the revision-history annotation.
const maxRevHistoryLengthInChars = 2000

func annotations(o client.Object) map[string]any {
	md := o.Metadata()
	a, _ := md["annotations"].(map[string]any)
	if a == nil {
		a = map[string]any{}
		md["annotations"] = a
	}
	return a
}

func revisionOf(o client.Object) (int64, bool) {
	v, ok := o.Annotations()[RevisionAnnotation]
	if !ok {
		return 0, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

func maxRevision(rss []client.Object) int64 {
	var m int64
	for _, rs := range rss {
		if v, ok := revisionOf(rs); ok && v > m {
			m = v
		}
	}
	return m
}

// setDeploymentRevision sets the Deployment's revision annotation.
func setDeploymentRevision(d client.Object, revision string) bool {
	a := annotations(d)
	if a[RevisionAnnotation] == revision {
		return false
	}
	a[RevisionAnnotation] = revision
	return true
}

// setNewReplicaSetAnnotations is SetNewReplicaSetAnnotations: the
// Deployment's annotations (but the skipped ones), the new revision when
// it is higher (an older revision goes into revision-history: the
// ReplicaSet is being rolled back to), and for a new ReplicaSet the
// desired and max replicas.
func setNewReplicaSetAnnotations(d, rs client.Object, newRevision string, exists bool) bool {
	changed := copyDeploymentAnnotations(d, rs)
	a := annotations(rs)
	oldRevision, had := a[RevisionAnnotation].(string)
	oldN, err := strconv.ParseInt(oldRevision, 10, 64)
	if err != nil {
		if oldRevision != "" {
			return false
		}
		oldN = 0
	}
	newN, err := strconv.ParseInt(newRevision, 10, 64)
	if err != nil {
		return false
	}
	if oldN < newN {
		a[RevisionAnnotation] = newRevision
		changed = true
	}
	if had && oldN < newN {
		history, _ := a[RevisionHistoryAnnotation].(string)
		old := strings.Split(history, ",")
		if old[0] == "" {
			a[RevisionHistoryAnnotation] = oldRevision
		} else {
			total, start := len(history)+len(oldRevision)+1, 0
			for total > maxRevHistoryLengthInChars && start < len(old) {
				total -= len(old[start]) + 1
				start++
			}
			if total <= maxRevHistoryLengthInChars {
				a[RevisionHistoryAnnotation] = strings.Join(append(old[start:], oldRevision), ",")
			}
		}
	}
	if !exists && setReplicasAnnotations(rs, specReplicas(d), specReplicas(d)+maxSurge(d)) {
		changed = true
	}
	return changed
}

func copyDeploymentAnnotations(d, rs client.Object) bool {
	changed := false
	a := annotations(rs)
	for k, v := range d.Annotations() {
		if cur, ok := a[k]; annotationsToSkip[k] || ok && cur == v {
			continue
		}
		a[k] = v
		changed = true
	}
	return changed
}

func setReplicasAnnotations(rs client.Object, desired, max int64) bool {
	a := annotations(rs)
	changed := false
	if d := itoa(desired); a[DesiredReplicasAnnotation] != d {
		a[DesiredReplicasAnnotation] = d
		changed = true
	}
	if m := itoa(max); a[MaxReplicasAnnotation] != m {
		a[MaxReplicasAnnotation] = m
		changed = true
	}
	return changed
}

func replicasAnnotationsNeedUpdate(rs client.Object, desired, max int64) bool {
	a := rs.Annotations()
	return a == nil || a[DesiredReplicasAnnotation] != itoa(desired) || a[MaxReplicasAnnotation] != itoa(max)
}

func desiredReplicasAnnotation(rs client.Object) (int64, bool) {
	return nonNegativeAnnotation(rs, DesiredReplicasAnnotation)
}

func nonNegativeAnnotation(rs client.Object, key string) (int64, bool) {
	v, ok := rs.Annotations()[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil || n > math.MaxInt32 {
		return 0, false
	}
	return int64(n), true
}

func isRollingUpdate(d client.Object) bool {
	return stringAt(d, "spec", "strategy", "type") == "RollingUpdate"
}

// resolveFenceposts resolves maxSurge (rounded up) and maxUnavailable
// (rounded down); both 0 makes maxUnavailable 1.
func resolveFenceposts(d client.Object, desired int64) (surge, unavailable int64) {
	surge = scaledIntOrPercent(d, "maxSurge", desired, true)
	unavailable = scaledIntOrPercent(d, "maxUnavailable", desired, false)
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable
}

func scaledIntOrPercent(d client.Object, field string, total int64, roundUp bool) int64 {
	v, ok := d.Nested("spec", "strategy", "rollingUpdate", field)
	if !ok || v == nil {
		return 0
	}
	s, isString := v.(string)
	if !isString {
		return toInt64(v)
	}
	pct, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
	if err != nil || !strings.HasSuffix(s, "%") {
		return 0
	}
	f := float64(pct) * float64(total) / 100
	if roundUp {
		return int64(math.Ceil(f))
	}
	return int64(math.Floor(f))
}

func maxUnavailable(d client.Object) int64 {
	replicas := specReplicas(d)
	if !isRollingUpdate(d) || replicas == 0 {
		return 0
	}
	_, u := resolveFenceposts(d, replicas)
	return min(u, replicas)
}

func maxSurge(d client.Object) int64 {
	if !isRollingUpdate(d) {
		return 0
	}
	s, _ := resolveFenceposts(d, specReplicas(d))
	return s
}

// newRSNewReplicas is NewRSNewReplicas: how far the new ReplicaSet may
// grow now (all at once for Recreate; up to maxSurge above the desired
// total for a rolling update).
func newRSNewReplicas(d client.Object, all []client.Object, newRS client.Object) int64 {
	if !isRollingUpdate(d) {
		return specReplicas(d)
	}
	surge := scaledIntOrPercent(d, "maxSurge", specReplicas(d), true)
	current := replicaCount(all)
	maxTotal := specReplicas(d) + surge
	if current >= maxTotal {
		return specReplicas(newRS)
	}
	up := min(maxTotal-current, specReplicas(d)-specReplicas(newRS))
	return specReplicas(newRS) + up
}

// isSaturated: the new ReplicaSet has all the desired replicas, believes
// it, and all are available.
func isSaturated(d, rs client.Object) bool {
	if rs == nil {
		return false
	}
	desired, err := strconv.Atoi(rs.Annotations()[DesiredReplicasAnnotation])
	return err == nil && specReplicas(rs) == specReplicas(d) && int64(desired) == specReplicas(d) &&
		int64At(rs, "status", "availableReplicas") == specReplicas(d)
}

func replicaCount(rss []client.Object) int64 {
	var n int64
	for _, rs := range rss {
		if rs != nil {
			n += specReplicas(rs)
		}
	}
	return n
}

func statusCount(rss []client.Object, field string) int64 {
	var n int64
	for _, rs := range rss {
		if rs != nil {
			n += int64At(rs, "status", field)
		}
	}
	return n
}

// terminatingCount is GetTerminatingReplicaCountForReplicaSets: nil when
// a synced ReplicaSet does not report it.
func terminatingCount(rss []client.Object) (int64, bool) {
	var n int64
	for _, rs := range rss {
		if rs == nil {
			continue
		}
		t, ok := rs.NestedInt64("status", "terminatingReplicas")
		switch {
		case !ok && int64At(rs, "status", "observedGeneration") == 0:
		case !ok:
			return 0, false
		default:
			n += t
		}
	}
	return n, true
}

func activeReplicaSets(rss []client.Object) []client.Object {
	var out []client.Object
	for _, rs := range rss {
		if rs != nil && specReplicas(rs) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

// createdBefore is ReplicaSetsByCreationTimestamp's order: older first,
// the name breaking ties.
func createdBefore(a, b client.Object) bool {
	ta, tb := timeAt(a, "metadata", "creationTimestamp"), timeAt(b, "metadata", "creationTimestamp")
	if ta.Equal(tb) {
		return a.Name() < b.Name()
	}
	return ta.Before(tb)
}

func byCreation(rss []client.Object) {
	sort.SliceStable(rss, func(i, j int) bool { return createdBefore(rss[i], rss[j]) })
}

func deepCopyList(l []any) []any {
	if l == nil {
		return nil
	}
	c, _ := client.Object{"l": l}.DeepCopy()["l"].([]any)
	return c
}

// findNewReplicaSet is FindNewReplicaSet: the oldest ReplicaSet whose
// template is the Deployment's.
func findNewReplicaSet(d client.Object, rss []client.Object) client.Object {
	byCreation(rss)
	tmpl := mapAt(d, "spec", "template")
	for _, rs := range rss {
		if EqualIgnoreHash(mapAt(rs, "spec", "template"), tmpl) {
			return rs
		}
	}
	return nil
}

// findOldReplicaSets: every other ReplicaSet.
func findOldReplicaSets(d client.Object, rss []client.Object) []client.Object {
	newRS := findNewReplicaSet(d, rss)
	var old []client.Object
	for _, rs := range rss {
		if newRS != nil && rs.UID() == newRS.UID() {
			continue
		}
		old = append(old, rs)
	}
	return old
}

func hasProgressDeadline(d client.Object) bool {
	n, ok := d.NestedInt64("spec", "progressDeadlineSeconds")
	return ok && n != math.MaxInt32
}

func hasRevisionHistoryLimit(d client.Object) bool {
	n, ok := d.NestedInt64("spec", "revisionHistoryLimit")
	return ok && n != math.MaxInt32
}

// Conditions, as SetDeploymentCondition keeps them: an unchanged status
// and reason leave the condition alone, a new reason with the same status
// keeps lastTransitionTime, the new condition goes last.

func newCondition(typ, status, reason, message string, now time.Time) map[string]any {
	ts := rfc3339(now)
	return map[string]any{"type": typ, "status": status, "lastUpdateTime": ts, "lastTransitionTime": ts, "reason": reason, "message": message}
}

func findCondition(conds []any, typ string) map[string]any {
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

func setCondition(conds []any, c map[string]any) []any {
	cur := findCondition(conds, stringOf(c["type"]))
	if cur != nil && cur["status"] == c["status"] && cur["reason"] == c["reason"] {
		return conds
	}
	if cur != nil && cur["status"] == c["status"] {
		c["lastTransitionTime"] = cur["lastTransitionTime"]
	}
	return append(withoutCondition(conds, stringOf(c["type"])), c)
}

// deploymentComplete: every desired replica updated and available, no
// old one left, the generation observed.
func deploymentComplete(d client.Object, st map[string]any) bool {
	s := client.Object(st)
	r := specReplicas(d)
	return int64At(s, "updatedReplicas") == r && int64At(s, "replicas") == r && int64At(s, "availableReplicas") == r &&
		int64At(s, "observedGeneration") >= d.Generation()
}

// deploymentProgressing: new pods updated, ready or available, or old
// ones scaled down, since the status the Deployment has.
func deploymentProgressing(d client.Object, st map[string]any) bool {
	s := client.Object(st)
	oldOld := int64At(d, "status", "replicas") - int64At(d, "status", "updatedReplicas")
	newOld := int64At(s, "replicas") - int64At(s, "updatedReplicas")
	return int64At(s, "updatedReplicas") > int64At(d, "status", "updatedReplicas") || newOld < oldOld ||
		int64At(s, "readyReplicas") > int64At(d, "status", "readyReplicas") ||
		int64At(s, "availableReplicas") > int64At(d, "status", "availableReplicas")
}

// deploymentTimedOut: the Progressing condition is older than
// progressDeadlineSeconds (or says so already).
func deploymentTimedOut(d client.Object, st map[string]any, now time.Time) bool {
	if !hasProgressDeadline(d) {
		return false
	}
	c := findCondition(listOf(st["conditions"]), DeploymentProgressing)
	if c == nil || c["reason"] == ReasonNewRSAvailable {
		return false
	}
	if c["reason"] == ReasonTimedOut {
		return true
	}
	from, _ := time.Parse(time.RFC3339, stringOf(c["lastUpdateTime"]))
	return from.Add(time.Duration(int64At(d, "spec", "progressDeadlineSeconds")) * time.Second).Before(now)
}

func listOf(v any) []any {
	l, _ := v.([]any)
	return l
}

// generateReplicaSetName is <deployment>-<hash>, the name cut so that
// the whole is a valid DNS subdomain.
func generateReplicaSetName(name, hash string) string {
	if maxLen := 253 - 1 - len(hash); len(name) > maxLen {
		name = name[:maxLen]
	}
	return name + "-" + hash
}
