package console

import (
	"context"
	"errors"
	"fmt"
	"net/url"
)

func rolloutFlags() []*flagDef {
	return append(filenameFlags(),
		&flagDef{name: "watch", short: "w", kind: boolFlag, def: "true"},
		&flagDef{name: "timeout", kind: stringFlag, def: "0s"},
		&flagDef{name: "revision", kind: intFlag},
		&flagDef{name: "selector", short: "l", kind: stringFlag},
	)
}

// errRolloutDone ends the watch of kubectl rollout status.
var errRolloutDone = errors.New("rollout done")

// kubectlRollout is `kubectl rollout status`: it prints the deployment's
// progress on every change until the rollout is complete. Without a
// controller writing the status nothing changes, so it waits (Ctrl+C).
func kubectlRollout(k *kubectlRun) int {
	if len(k.pos) == 0 {
		return k.errorf("you must specify a subcommand: the lab has kubectl rollout status")
	}
	sub := k.pos[0]
	k.pos = k.pos[1:]
	if sub != "status" {
		k.note("the console runs kubectl rollout status; %q needs ReplicaSets, which the lab does not serve", sub)
		return k.errorf("unknown command %q for \"kubectl rollout\"", sub)
	}
	ts, err := k.targets(true)
	if err != nil {
		return k.fail(err)
	}
	if d := k.fs.str("timeout"); d != "0s" && d != "0" {
		t, err := parseKubectlTimeout(d)
		if err != nil {
			return k.errorf("invalid argument %q for \"--timeout\" flag: %v", d, err)
		}
		if t > 0 {
			var cancel context.CancelFunc
			k.ctx, cancel = context.WithTimeout(k.ctx, t)
			defer cancel()
		}
	}
	status := 0
	for _, t := range ts {
		if t.r.Kind != "Deployment" {
			k.errorf("no status viewer has been implemented for %s", t.r.Kind)
			status = 1
			continue
		}
		live, err := k.getObject(t.r.path(t.ns, t.name), nil)
		if err != nil {
			k.fail(err)
			status = 1
			continue
		}
		if code := k.rolloutStatus(t, live); code != 0 {
			return code
		}
	}
	return status
}

func (k *kubectlRun) rolloutStatus(t target, live obj) int {
	check := func(o obj) error {
		msg, done, err := deploymentStatus(o, k.fs.int("revision"))
		if err != nil {
			return err
		}
		fmt.Fprint(k.stdout, msg)
		if done || !k.fs.bool("watch") {
			return errRolloutDone
		}
		return nil
	}
	if err := check(live); err != nil {
		if errors.Is(err, errRolloutDone) {
			return 0
		}
		return k.fail(err)
	}
	q := url.Values{"fieldSelector": {"metadata.name=" + t.name}, "resourceVersion": {resourceVersion(live)}, "watch": {"true"}}
	err := k.watchStream(t.r.path(t.ns, ""), q, "application/json", func(typ string, o obj) error {
		switch typ {
		case "ADDED", "MODIFIED":
			return check(o)
		case "DELETED":
			return errors.New("object has been deleted")
		case "BOOKMARK":
			return nil
		}
		return fmt.Errorf("internal error: unexpected event %s", typ)
	})
	switch {
	case errors.Is(err, errRolloutDone):
		return 0
	case k.ctx.Err() == context.DeadlineExceeded:
		return k.errorf("timed out waiting for the condition")
	case k.ctx.Err() != nil:
		return 130
	case err != nil:
		return k.fail(err)
	}
	return 0
}

// deploymentStatus is kubectl's DeploymentStatusViewer.
func deploymentStatus(d obj, revision int64) (string, bool, error) {
	name := metaName(d)
	if revision > 0 {
		rev := nestedString(d, "metadata", "annotations", "deployment.kubernetes.io/revision")
		if rev == "" || rev != fmt.Sprint(revision) {
			return "", false, fmt.Errorf("desired revision (%d) is different from the running revision (%s)", revision, rev)
		}
	}
	gen, _ := nestedInt(d, "metadata", "generation")
	observed, _ := nestedInt(d, "status", "observedGeneration")
	if gen > observed {
		return "Waiting for deployment spec update to be observed...\n", false, nil
	}
	conds, _ := nested(d, "status", "conditions").([]any)
	for _, c := range conds {
		cm, _ := c.(obj)
		if cm["type"] == "Progressing" && cm["reason"] == "ProgressDeadlineExceeded" {
			return "", false, fmt.Errorf("deployment %q exceeded its progress deadline", name)
		}
	}
	updated, _ := nestedInt(d, "status", "updatedReplicas")
	replicas, _ := nestedInt(d, "status", "replicas")
	available, _ := nestedInt(d, "status", "availableReplicas")
	if spec, ok := nestedInt(d, "spec", "replicas"); ok && updated < spec {
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d out of %d new replicas have been updated...\n", name, updated, spec), false, nil
	}
	if replicas > updated {
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d old replicas are pending termination...\n", name, replicas-updated), false, nil
	}
	if available < updated {
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d of %d updated replicas are available...\n", name, available, updated), false, nil
	}
	return fmt.Sprintf("deployment %q successfully rolled out\n", name), true, nil
}
