package controllers

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/client"
)

// Kubelet plays the kubelet for a session that has no nodes: it runs
// every pod. A new pod is admitted at once (Pending, its containers
// ContainerCreating, startTime set) and its containers run and are ready
// ReadyDelay later (Running, the Ready and ContainersReady conditions
// True); init containers complete in between. Each change is a write of
// the pod's status subresource, as a kubelet's, so the pod's
// resourceVersion moves and watchers see it.
//
// Fail makes a pod's containers exit with an error, as a crash would: with
// restartPolicy Never the pod fails (phase Failed, and its ReplicaSet
// replaces it); otherwise the containers are restarted ReadyDelay later
// (restartCount 1), or, in a crash loop, keep failing with kube's
// CrashLoopBackOff (10 s doubling to 5 minutes) until the pod is deleted.
//
// There is no scheduler: pods keep an empty spec.nodeName (which is also
// why kube-apiserver deletes them at once, without a grace period) and
// have no IP.
type Kubelet struct {
	c          *client.Client
	pods       *client.Store
	factory    *client.InformerFactory
	queue      *client.WorkQueue
	readyDelay func() time.Duration

	mu     sync.Mutex
	faults map[string]*fault // by pod key
}

type fault struct {
	crashLoop bool
	pending   bool // not yet written
}

// Kubelet's restart back-off (kubelet's initial and maximum container
// back-off).
const (
	crashLoopBackOffInitial = 10 * time.Second
	crashLoopBackOffMax     = 5 * time.Minute
)

// NewKubelet returns a kubelet that talks to the API through c;
// readyDelay is read for each pod (it is a session setting).
func NewKubelet(ctx context.Context, c *client.Client, readyDelay func() time.Duration) *Kubelet {
	f := client.NewInformerFactory(c)
	k := &Kubelet{c: c, factory: f, pods: f.ForResource(client.Pods).Store, queue: client.NewWorkQueue(ctx, c.Clock),
		readyDelay: readyDelay, faults: map[string]*fault{}}
	k.pods.AddHandler(client.Handler{
		OnAdd:    func(o client.Object) { k.queue.Add(o.Key()) },
		OnUpdate: func(_, o client.Object) { k.queue.Add(o.Key()) },
		OnDelete: func(o client.Object) {
			k.mu.Lock()
			delete(k.faults, o.Key())
			k.mu.Unlock()
		},
	})
	return k
}

// Run runs the kubelet until its context ends.
func (k *Kubelet) Run() {
	ctx := k.queue.Context()
	k.factory.Start(ctx)
	if k.factory.WaitForCacheSync(ctx) {
		k.queue.Work(k.sync)
	}
	k.factory.Wait()
}

// ErrPodNotFound is Fail's answer for a pod the kubelet does not run.
var ErrPodNotFound = errors.New("pod not found")

// Fail makes the pod's containers crash (crashLoop: again at every
// restart).
func (k *Kubelet) Fail(namespace, name string, crashLoop bool) error {
	key := namespace + "/" + name
	p, ok := k.pods.Get(key)
	if !ok {
		return ErrPodNotFound
	}
	if ph := podPhase(p); ph == "Succeeded" || ph == "Failed" || beingDeleted(p) {
		return fmt.Errorf("pod %q is not running (%s)", name, ph)
	}
	k.mu.Lock()
	k.faults[key] = &fault{crashLoop: crashLoop, pending: true}
	k.mu.Unlock()
	k.queue.Add(key)
	return nil
}

func (k *Kubelet) delay() time.Duration { return max(k.readyDelay(), 0) }

// sync brings one pod's status one step on, and schedules the next.
func (k *Kubelet) sync(key string) error {
	p, ok := k.pods.Get(key)
	if !ok || beingDeleted(p) {
		return nil
	}
	phase := podPhase(p)
	if phase == "Succeeded" || phase == "Failed" {
		return nil
	}
	now := k.c.Clock.Now()
	k.mu.Lock()
	f := k.faults[key]
	k.mu.Unlock()
	switch {
	case f != nil && f.pending:
		k.mu.Lock()
		f.pending = false
		k.mu.Unlock()
		return k.write(p, k.crashed(p, now))
	case stringAt(p, "status", "startTime") == "":
		return k.write(p, k.admitted(p, now))
	case phase == "Pending":
		at := timeAt(p, "status", "startTime").Add(k.delay())
		if now.Before(at) {
			k.queue.AddAfter(key, at.Sub(now))
			return nil
		}
		return k.write(p, k.running(p, now, 0))
	}
	// Running: a crashed container restarts a delay after it stopped.
	cs := containerStatus(p)
	term := mapOf(mapOf(cs["state"])["terminated"])
	waiting := mapOf(mapOf(cs["state"])["waiting"])
	if term == nil && waiting == nil {
		return nil
	}
	restarts := int64At(client.Object(cs), "restartCount")
	var at time.Time
	if term != nil {
		finished, _ := time.Parse(time.RFC3339, stringOf(term["finishedAt"]))
		at = finished.Add(k.delay())
	} else {
		finished, _ := time.Parse(time.RFC3339, stringOf(mapOf(mapOf(cs["lastState"])["terminated"])["finishedAt"]))
		at = finished.Add(backOff(restarts))
	}
	if now.Before(at) {
		k.queue.AddAfter(key, at.Sub(now))
		return nil
	}
	if f != nil && f.crashLoop {
		return k.write(p, k.backingOff(p, now, restarts+1))
	}
	return k.write(p, k.running(p, now, restarts+1))
}

// backOff is the kubelet's wait before the next restart of a container
// that keeps crashing.
func backOff(restarts int64) time.Duration {
	d := crashLoopBackOffInitial
	for i := int64(1); i < restarts && d < crashLoopBackOffMax; i++ {
		d *= 2
	}
	return min(d, crashLoopBackOffMax)
}

func (k *Kubelet) write(p client.Object, status map[string]any) error {
	cp := p.DeepCopy()
	cp.SetNested(status, "status")
	_, err := k.c.Resource(client.Pods).Namespace(p.Namespace()).UpdateStatus(k.queue.Context(), cp, client.WriteOptions{})
	if client.IsNotFound(err) {
		return nil
	}
	return err
}

func containerStatus(p client.Object) map[string]any {
	l := listAt(p, "status", "containerStatuses")
	if len(l) == 0 {
		return nil
	}
	return mapOf(l[0])
}

func containerNames(p client.Object, list string) []string {
	var out []string
	for _, c := range listAt(p, "spec", list) {
		out = append(out, stringOf(mapOf(c)["name"]))
	}
	return out
}

func podCondition(typ, status string, gen int64, at, reason, message string) map[string]any {
	c := map[string]any{"type": typ, "observedGeneration": gen, "status": status, "lastProbeTime": nil, "lastTransitionTime": at}
	if reason != "" {
		c["reason"], c["message"] = reason, message
	}
	return c
}

// baseStatus is the status fields every write has.
func baseStatus(p client.Object, phase string) map[string]any {
	st := map[string]any{"observedGeneration": p.Generation(), "phase": phase}
	if q := stringAt(p, "status", "qosClass"); q != "" {
		st["qosClass"] = q
	}
	if t := stringAt(p, "status", "startTime"); t != "" {
		st["startTime"] = t
	}
	return st
}

// admitted: Pending, containers being created.
func (k *Kubelet) admitted(p client.Object, now time.Time) map[string]any {
	ts := rfc3339(now)
	gen := p.Generation()
	st := baseStatus(p, "Pending")
	st["startTime"] = ts
	inits, containers := containerNames(p, "initContainers"), containerNames(p, "containers")
	notReady := "containers with unready status: [" + strings.Join(containers, " ") + "]"
	initialized := podCondition("Initialized", "True", gen, ts, "", "")
	if len(inits) > 0 {
		initialized = podCondition("Initialized", "False", gen, ts, "ContainersNotInitialized", "containers with incomplete status: ["+strings.Join(inits, " ")+"]")
	}
	st["conditions"] = []any{
		podCondition("PodReadyToStartContainers", "False", gen, ts, "", ""),
		initialized,
		podCondition("Ready", "False", gen, ts, "ContainersNotReady", notReady),
		podCondition("ContainersReady", "False", gen, ts, "ContainersNotReady", notReady),
	}
	reason := "ContainerCreating"
	if len(inits) > 0 {
		reason = "PodInitializing"
		st["initContainerStatuses"] = k.statuses(p, "initContainers", func(string) map[string]any {
			return map[string]any{"waiting": map[string]any{"reason": "PodInitializing"}}
		}, false, 0, nil)
	}
	st["containerStatuses"] = k.statuses(p, "containers", func(string) map[string]any {
		return map[string]any{"waiting": map[string]any{"reason": reason}}
	}, false, 0, nil)
	return st
}

// running: init containers completed, containers running and ready.
func (k *Kubelet) running(p client.Object, now time.Time, restarts int64) map[string]any {
	ts := rfc3339(now)
	gen := p.Generation()
	st := baseStatus(p, "Running")
	start := stringAt(p, "status", "startTime")
	if start == "" {
		start = ts
		st["startTime"] = ts
	}
	old := conditionTimes(p)
	at := func(typ, status string) string {
		if t, ok := old[typ+"="+status]; ok {
			return t
		}
		return ts
	}
	st["conditions"] = []any{
		podCondition("PodReadyToStartContainers", "True", gen, at("PodReadyToStartContainers", "True"), "", ""),
		podCondition("Initialized", "True", gen, at("Initialized", "True"), "", ""),
		podCondition("Ready", "True", gen, ts, "", ""),
		podCondition("ContainersReady", "True", gen, ts, "", ""),
	}
	if len(listAt(p, "spec", "initContainers")) > 0 {
		st["initContainerStatuses"] = k.statuses(p, "initContainers", func(string) map[string]any {
			return map[string]any{"terminated": map[string]any{"exitCode": int64(0), "reason": "Completed", "startedAt": start, "finishedAt": start}}
		}, false, 0, nil)
	}
	var last map[string]any
	if restarts > 0 {
		if cs := containerStatus(p); cs != nil {
			last = mapOf(mapOf(cs["state"])["terminated"])
			if last == nil {
				last = mapOf(mapOf(cs["lastState"])["terminated"])
			}
		}
	}
	st["containerStatuses"] = k.statuses(p, "containers", func(string) map[string]any {
		return map[string]any{"running": map[string]any{"startedAt": ts}}
	}, true, restarts, last)
	return st
}

// crashed: the containers exited with an error; Never ends the pod.
func (k *Kubelet) crashed(p client.Object, now time.Time) map[string]any {
	ts := rfc3339(now)
	gen := p.Generation()
	phase := "Running"
	if stringAt(p, "spec", "restartPolicy") == "Never" {
		phase = "Failed"
	}
	st := baseStatus(p, phase)
	if stringAt(p, "status", "startTime") == "" {
		st["startTime"] = ts
	}
	containers := containerNames(p, "containers")
	notReady := "containers with unready status: [" + strings.Join(containers, " ") + "]"
	reason := "ContainersNotReady"
	if phase == "Failed" {
		reason = "PodFailed"
		notReady = ""
	}
	old := conditionTimes(p)
	keep := func(typ, status string) string {
		if t, ok := old[typ+"="+status]; ok {
			return t
		}
		return ts
	}
	st["conditions"] = []any{
		podCondition("PodReadyToStartContainers", "True", gen, keep("PodReadyToStartContainers", "True"), "", ""),
		podCondition("Initialized", "True", gen, keep("Initialized", "True"), "", ""),
		podCondition("Ready", "False", gen, keep("Ready", "False"), reason, notReady),
		podCondition("ContainersReady", "False", gen, keep("ContainersReady", "False"), reason, notReady),
	}
	if is := listAt(p, "status", "initContainerStatuses"); len(is) > 0 {
		st["initContainerStatuses"] = is
	}
	restarts := int64At(client.Object(containerStatus(p)), "restartCount")
	started := stringOf(mapOf(mapOf(containerStatus(p)["state"])["running"])["startedAt"])
	if started == "" {
		started = ts
	}
	st["containerStatuses"] = k.statuses(p, "containers", func(string) map[string]any {
		return map[string]any{"terminated": map[string]any{"exitCode": int64(1), "reason": "Error", "startedAt": started, "finishedAt": ts}}
	}, false, restarts, mapOf(mapOf(containerStatus(p)["lastState"])["terminated"]))
	return st
}

// backingOff: a container of a crash loop failed again and waits.
func (k *Kubelet) backingOff(p client.Object, now time.Time, restarts int64) map[string]any {
	ts := rfc3339(now)
	st := baseStatus(p, "Running")
	st["conditions"] = listAt(p, "status", "conditions")
	if is := listAt(p, "status", "initContainerStatuses"); len(is) > 0 {
		st["initContainerStatuses"] = is
	}
	last := map[string]any{"exitCode": int64(1), "reason": "Error", "startedAt": ts, "finishedAt": ts}
	st["containerStatuses"] = k.statuses(p, "containers", func(name string) map[string]any {
		return map[string]any{"waiting": map[string]any{"reason": "CrashLoopBackOff",
			"message": fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", backOff(restarts), name, p.Name(), p.Namespace(), p.UID())}}
	}, false, restarts, last)
	return st
}

// conditionTimes are the lastTransitionTimes of the pod's conditions by
// "type=status", kept while a condition does not change.
func conditionTimes(p client.Object) map[string]string {
	out := map[string]string{}
	for _, c := range listAt(p, "status", "conditions") {
		m := mapOf(c)
		out[stringOf(m["type"])+"="+stringOf(m["status"])] = stringOf(m["lastTransitionTime"])
	}
	return out
}

// statuses are the container statuses of one list of the pod's spec.
func (k *Kubelet) statuses(p client.Object, list string, state func(name string) map[string]any, ready bool, restarts int64, last map[string]any) []any {
	var out []any
	for _, c := range listAt(p, "spec", list) {
		cm := mapOf(c)
		name, image := stringOf(cm["name"]), stringOf(cm["image"])
		s := state(name)
		_, isRunning := s["running"]
		lastState := map[string]any{}
		if last != nil {
			lastState["terminated"] = last
		}
		cs := map[string]any{"name": name, "state": s, "lastState": lastState, "ready": ready, "restartCount": restarts,
			"image": normalizeImage(image), "imageID": "", "started": isRunning}
		if _, waiting := s["waiting"]; !waiting || restarts > 0 {
			cs["imageID"] = imageID(image)
			cs["containerID"] = containerID(p.UID(), name, restarts)
		}
		out = append(out, cs)
	}
	return out
}

// normalizeImage is the name a container runtime reports: the registry
// docker.io and the library/ namespace made explicit, :latest when no tag
// or digest is given.
func normalizeImage(image string) string {
	name, domain := image, "docker.io"
	if i := strings.IndexByte(image, '/'); i >= 0 {
		first := image[:i]
		if strings.ContainsAny(first, ".:") || first == "localhost" {
			domain, name = first, image[i+1:]
		}
	}
	if domain == "docker.io" && !strings.Contains(name, "/") {
		name = "library/" + name
	}
	if !strings.Contains(name, "@") && !strings.Contains(name[strings.LastIndexByte(name, '/')+1:], ":") {
		name += ":latest"
	}
	return domain + "/" + name
}

// imageID is a digest reference; no image is pulled, so the digest is
// derived from the name (the same image, the same digest).
func imageID(image string) string {
	full := normalizeImage(image)
	repo := full
	if i := strings.IndexByte(full, '@'); i >= 0 {
		return full
	}
	if i := strings.LastIndexByte(full, ':'); i > strings.LastIndexByte(full, '/') {
		repo = full[:i]
	}
	return repo + "@sha256:" + hexDigest(full)
}

func containerID(podUID, name string, restarts int64) string {
	return "containerd://" + hexDigest(podUID+"/"+name+"/"+itoa(restarts))
}

// hexDigest is 64 hex digits derived from s (FNV-64a, four rounds).
func hexDigest(s string) string {
	var b strings.Builder
	for i := 0; i < 4; i++ {
		h := fnv.New64a()
		h.Write([]byte{byte(i)})
		h.Write([]byte(s))
		fmt.Fprintf(&b, "%016x", h.Sum64())
	}
	return b.String()
}
