package controllers

import (
	"context"
	"fmt"

	"github.com/rvplay/rvplay/engine/client"
)

// The two strategies of a rollout (kube's rolling.go and recreate.go).

// rolloutRolling scales the new ReplicaSet up while the total stays
// within replicas+maxSurge, and old ones down while the available stay at
// least replicas-maxUnavailable (unhealthy old pods first), one step per
// sync; each step's ReplicaSet updates bring the next sync.
func (dc *deploymentController) rolloutRolling(ctx context.Context, d client.Object, rsList []client.Object) error {
	newRS, oldRSs, err := dc.allReplicaSetsAndSyncRevision(ctx, d, rsList, true)
	if err != nil {
		return err
	}
	all := append(append([]client.Object(nil), oldRSs...), newRS)
	scaledUp, err := dc.reconcileNewReplicaSet(ctx, all, newRS, d)
	if err != nil {
		return err
	}
	if scaledUp {
		return dc.syncRolloutStatus(ctx, all, newRS, d)
	}
	scaledDown, err := dc.reconcileOldReplicaSets(ctx, all, activeReplicaSets(oldRSs), newRS, d)
	if err != nil {
		return err
	}
	if scaledDown {
		return dc.syncRolloutStatus(ctx, all, newRS, d)
	}
	if deploymentComplete(d, mapAt(d, "status")) {
		if err := dc.cleanup(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return dc.syncRolloutStatus(ctx, all, newRS, d)
}

func (dc *deploymentController) reconcileNewReplicaSet(ctx context.Context, all []client.Object, newRS, d client.Object) (bool, error) {
	switch want := specReplicas(d); {
	case specReplicas(newRS) == want:
		return false, nil
	case specReplicas(newRS) > want:
		scaled, _, err := dc.scaleReplicaSet(ctx, newRS, want, d, false)
		return scaled, err
	}
	scaled, _, err := dc.scaleReplicaSet(ctx, newRS, newRSNewReplicas(d, all, newRS), d, false)
	return scaled, err
}

func (dc *deploymentController) reconcileOldReplicaSets(ctx context.Context, all, oldRSs []client.Object, newRS, d client.Object) (bool, error) {
	if replicaCount(oldRSs) == 0 {
		return false, nil
	}
	minAvailable := specReplicas(d) - maxUnavailable(d)
	newUnavailable := specReplicas(newRS) - int64At(newRS, "status", "availableReplicas")
	maxScaledDown := replicaCount(all) - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return false, nil
	}
	oldRSs, cleaned, err := dc.cleanupUnhealthyReplicas(ctx, oldRSs, d, maxScaledDown)
	if err != nil {
		return false, nil
	}
	scaledDown, err := dc.scaleDownOldReplicaSets(ctx, append(append([]client.Object(nil), oldRSs...), newRS), oldRSs, d)
	if err != nil {
		return false, nil
	}
	return cleaned+scaledDown > 0, nil
}

// cleanupUnhealthyReplicas scales old ReplicaSets down by their
// unavailable pods first: removing those costs no availability.
func (dc *deploymentController) cleanupUnhealthyReplicas(ctx context.Context, oldRSs []client.Object, d client.Object, maxCleanup int64) ([]client.Object, int64, error) {
	byCreation(oldRSs)
	var total int64
	for i, rs := range oldRSs {
		if total >= maxCleanup {
			break
		}
		replicas, avail := specReplicas(rs), int64At(rs, "status", "availableReplicas")
		if replicas == 0 || replicas == avail {
			continue
		}
		down := min(maxCleanup-total, replicas-avail)
		if replicas-down > replicas {
			return nil, 0, fmt.Errorf("when cleaning up unhealthy replicas, got invalid request to scale down %s/%s %d -> %d", rs.Namespace(), rs.Name(), replicas, replicas-down)
		}
		_, updated, err := dc.scaleReplicaSet(ctx, rs, replicas-down, d, false)
		if err != nil {
			return nil, total, err
		}
		total += down
		oldRSs[i] = updated
	}
	return oldRSs, total, nil
}

// scaleDownOldReplicaSets removes old pods while the available ones stay
// above replicas-maxUnavailable, oldest ReplicaSet first.
func (dc *deploymentController) scaleDownOldReplicaSets(ctx context.Context, all, oldRSs []client.Object, d client.Object) (int64, error) {
	minAvailable := specReplicas(d) - maxUnavailable(d)
	available := statusCount(all, "availableReplicas")
	if available <= minAvailable {
		return 0, nil
	}
	byCreation(oldRSs)
	var total int64
	want := available - minAvailable
	for _, rs := range oldRSs {
		if total >= want {
			break
		}
		if specReplicas(rs) == 0 {
			continue
		}
		down := min(specReplicas(rs), want-total)
		if _, _, err := dc.scaleReplicaSet(ctx, rs, specReplicas(rs)-down, d, false); err != nil {
			return total, err
		}
		total += down
	}
	return total, nil
}

// rolloutRecreate scales every old ReplicaSet to zero, waits until their
// pods are gone, then creates (or scales up) the new one.
func (dc *deploymentController) rolloutRecreate(ctx context.Context, d client.Object, rsList []client.Object) error {
	newRS, oldRSs, err := dc.allReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	all := append(append([]client.Object(nil), oldRSs...), newRS)
	scaledDown := false
	for _, rs := range activeReplicaSets(oldRSs) {
		scaled, _, err := dc.scaleReplicaSet(ctx, rs, 0, d, false)
		if err != nil {
			return err
		}
		scaledDown = scaledDown || scaled
	}
	if scaledDown {
		return dc.syncRolloutStatus(ctx, all, newRS, d)
	}
	if dc.oldPodsRunning(newRS, oldRSs) {
		return dc.syncRolloutStatus(ctx, all, newRS, d)
	}
	if newRS == nil {
		if newRS, oldRSs, err = dc.allReplicaSetsAndSyncRevision(ctx, d, rsList, true); err != nil {
			return err
		}
		all = append(append([]client.Object(nil), oldRSs...), newRS)
	}
	if _, _, err := dc.scaleReplicaSet(ctx, newRS, specReplicas(d), d, false); err != nil {
		return err
	}
	if deploymentComplete(d, mapAt(d, "status")) {
		if err := dc.cleanup(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return dc.syncRolloutStatus(ctx, all, newRS, d)
}

// oldPodsRunning: an old ReplicaSet still reports pods, or an old pod not
// finished remains.
func (dc *deploymentController) oldPodsRunning(newRS client.Object, oldRSs []client.Object) bool {
	if statusCount(oldRSs, "replicas") > 0 {
		return true
	}
	old := map[string]bool{}
	for _, rs := range oldRSs {
		if newRS == nil || rs.UID() != newRS.UID() {
			old[rs.UID()] = true
		}
	}
	for _, p := range dc.pods.List() {
		ref := controllerOf(p)
		if ref == nil || !old[ref.UID] {
			continue
		}
		if ph := podPhase(p); ph != "Failed" && ph != "Succeeded" {
			return true
		}
	}
	return false
}
