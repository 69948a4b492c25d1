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
		OnDelete: onDeleted(func(o client.Object) {
			k.mu.Lock()
			delete(k.faults, o.Key())
			k.mu.Unlock()
		}),
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

// The kubelet's view of a pod: what it reads of the spec, and the status
// it owns and writes whole (as kube's, its status manager writes every
// field of the status it keeps). Decoded once per sync with encoding/json:
// under WebAssembly typed fields cost far less code than walks of
// decoded JSON.
type kubeletPod struct {
	Metadata struct {
		Name              string `json:"name"`
		Namespace         string `json:"namespace"`
		UID               string `json:"uid"`
		Generation        int64  `json:"generation"`
		DeletionTimestamp string `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		RestartPolicy  string          `json:"restartPolicy"`
		InitContainers []specContainer `json:"initContainers"`
		Containers     []specContainer `json:"containers"`
	} `json:"spec"`
	Status podStatus `json:"status"`
}

type specContainer struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

type podStatus struct {
	ObservedGeneration    int64             `json:"observedGeneration"`
	Phase                 string            `json:"phase"`
	QOSClass              string            `json:"qosClass,omitempty"`
	StartTime             string            `json:"startTime,omitempty"`
	Conditions            []podCondition    `json:"conditions,omitempty"`
	InitContainerStatuses []containerStatus `json:"initContainerStatuses,omitempty"`
	ContainerStatuses     []containerStatus `json:"containerStatuses,omitempty"`
}

type podCondition struct {
	Type               string  `json:"type"`
	ObservedGeneration int64   `json:"observedGeneration"`
	Status             string  `json:"status"`
	LastProbeTime      *string `json:"lastProbeTime"`
	LastTransitionTime string  `json:"lastTransitionTime"`
	Reason             string  `json:"reason,omitempty"`
	Message            string  `json:"message,omitempty"`
}

type containerStatus struct {
	Name         string         `json:"name"`
	State        containerState `json:"state"`
	LastState    containerState `json:"lastState"`
	Ready        bool           `json:"ready"`
	RestartCount int64          `json:"restartCount"`
	Image        string         `json:"image"`
	ImageID      string         `json:"imageID"`
	ContainerID  string         `json:"containerID,omitempty"`
	Started      bool           `json:"started"`
}

type containerState struct {
	Waiting    *waitingState    `json:"waiting,omitempty"`
	Running    *runningState    `json:"running,omitempty"`
	Terminated *terminatedState `json:"terminated,omitempty"`
}

type waitingState struct {
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

type runningState struct {
	StartedAt string `json:"startedAt"`
}

type terminatedState struct {
	ExitCode   int64  `json:"exitCode"`
	Reason     string `json:"reason"`
	StartedAt  string `json:"startedAt"`
	FinishedAt string `json:"finishedAt"`
}

// container is the first container's status (the zero one when none).
func (p *kubeletPod) container() containerStatus {
	if len(p.Status.ContainerStatuses) == 0 {
		return containerStatus{}
	}
	return p.Status.ContainerStatuses[0]
}

// sync brings one pod's status one step on, and schedules the next.
func (k *Kubelet) sync(key string) error {
	o, ok := k.pods.Get(key)
	if !ok {
		return nil
	}
	var p kubeletPod
	if decodeInto(o, &p) != nil || p.Metadata.DeletionTimestamp != "" {
		return nil
	}
	phase := p.Status.Phase
	if phase == "Succeeded" || phase == "Failed" {
		return nil
	}
	now := k.c.Clock.Now()
	k.mu.Lock()
	f := k.faults[key]
	pending := f != nil && f.pending
	if pending {
		f.pending = false
	}
	k.mu.Unlock()
	switch {
	case pending:
		return k.write(o, k.crashed(&p, now))
	case p.Status.StartTime == "":
		return k.write(o, k.admitted(&p, now))
	case phase == "Pending":
		at := parseTime(p.Status.StartTime).Add(k.delay())
		if now.Before(at) {
			k.queue.AddAfter(key, at.Sub(now))
			return nil
		}
		return k.write(o, k.running(&p, now, 0))
	}
	// Running: a crashed container restarts a delay after it stopped.
	cs := p.container()
	if cs.State.Terminated == nil && cs.State.Waiting == nil {
		return nil
	}
	var at time.Time
	if t := cs.State.Terminated; t != nil {
		at = parseTime(t.FinishedAt).Add(k.delay())
	} else if t := cs.LastState.Terminated; t != nil {
		at = parseTime(t.FinishedAt).Add(backOff(cs.RestartCount))
	}
	if now.Before(at) {
		k.queue.AddAfter(key, at.Sub(now))
		return nil
	}
	if f != nil && f.crashLoop {
		return k.write(o, k.backingOff(&p, now, cs.RestartCount+1))
	}
	return k.write(o, k.running(&p, now, cs.RestartCount+1))
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

// write replaces the status of the pod as read from the informer (its
// other fields sent back as they were).
func (k *Kubelet) write(p client.Object, status *podStatus) error {
	cp := p.DeepCopy()
	cp["status"] = toJSONValue(status)
	_, err := k.c.Resource(client.Pods).Namespace(p.Namespace()).UpdateStatus(k.queue.Context(), cp, client.WriteOptions{})
	if client.IsNotFound(err) {
		return nil
	}
	return err
}

func newPodCondition(typ, status string, gen int64, at, reason, message string) podCondition {
	return podCondition{Type: typ, ObservedGeneration: gen, Status: status, LastTransitionTime: at, Reason: reason, Message: message}
}

// baseStatus is the status fields every write has.
func baseStatus(p *kubeletPod, phase string) *podStatus {
	return &podStatus{ObservedGeneration: p.Metadata.Generation, Phase: phase, QOSClass: p.Status.QOSClass, StartTime: p.Status.StartTime}
}

func names(cs []specContainer) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return strings.Join(out, " ")
}

// conditions are the four pod conditions, in kube's order, each given
// as its status, reason and message.
func (st *podStatus) setConditions(gen int64, at func(typ, status string) string, c [4][3]string) {
	st.Conditions = nil
	for i, typ := range [4]string{"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady"} {
		st.Conditions = append(st.Conditions, newPodCondition(typ, c[i][0], gen, at(typ, c[i][0]), c[i][1], c[i][2]))
	}
}

// admitted: Pending, containers being created.
func (k *Kubelet) admitted(p *kubeletPod, now time.Time) *podStatus {
	ts := rfc3339(now)
	st := baseStatus(p, "Pending")
	st.StartTime = ts
	notReady := "containers with unready status: [" + names(p.Spec.Containers) + "]"
	initialized := [3]string{"True"}
	reason := "ContainerCreating"
	if len(p.Spec.InitContainers) > 0 {
		initialized = [3]string{"False", "ContainersNotInitialized", "containers with incomplete status: [" + names(p.Spec.InitContainers) + "]"}
		reason = "PodInitializing"
		st.InitContainerStatuses = k.statuses(p, p.Spec.InitContainers, containerState{Waiting: &waitingState{Reason: "PodInitializing"}}, false, 0, nil)
	}
	st.setConditions(p.Metadata.Generation, func(string, string) string { return ts }, [4][3]string{
		{"False"}, initialized, {"False", "ContainersNotReady", notReady}, {"False", "ContainersNotReady", notReady}})
	st.ContainerStatuses = k.statuses(p, p.Spec.Containers, containerState{Waiting: &waitingState{Reason: reason}}, false, 0, nil)
	return st
}

// keptTimes: a condition's lastTransitionTime stays while its status
// does not change.
func keptTimes(p *kubeletPod, now string, changes ...string) func(typ, status string) string {
	return func(typ, status string) string {
		for _, c := range changes {
			if c == typ {
				return now
			}
		}
		for _, c := range p.Status.Conditions {
			if c.Type == typ && c.Status == status {
				return c.LastTransitionTime
			}
		}
		return now
	}
}

// running: init containers completed, containers running and ready.
func (k *Kubelet) running(p *kubeletPod, now time.Time, restarts int64) *podStatus {
	ts := rfc3339(now)
	st := baseStatus(p, "Running")
	if st.StartTime == "" {
		st.StartTime = ts
	}
	st.setConditions(p.Metadata.Generation, keptTimes(p, ts, "Ready", "ContainersReady"), [4][3]string{{"True"}, {"True"}, {"True"}, {"True"}})
	if len(p.Spec.InitContainers) > 0 {
		st.InitContainerStatuses = k.statuses(p, p.Spec.InitContainers, containerState{Terminated: &terminatedState{Reason: "Completed", StartedAt: st.StartTime, FinishedAt: st.StartTime}}, false, 0, nil)
	}
	var last *terminatedState
	if restarts > 0 {
		cs := p.container()
		if last = cs.State.Terminated; last == nil {
			last = cs.LastState.Terminated
		}
	}
	st.ContainerStatuses = k.statuses(p, p.Spec.Containers, containerState{Running: &runningState{StartedAt: ts}}, true, restarts, last)
	return st
}

// crashed: the containers exited with an error; Never ends the pod.
func (k *Kubelet) crashed(p *kubeletPod, now time.Time) *podStatus {
	ts := rfc3339(now)
	phase := "Running"
	if p.Spec.RestartPolicy == "Never" {
		phase = "Failed"
	}
	st := baseStatus(p, phase)
	if st.StartTime == "" {
		st.StartTime = ts
	}
	notReady := "containers with unready status: [" + names(p.Spec.Containers) + "]"
	reason := "ContainersNotReady"
	if phase == "Failed" {
		reason = "PodFailed"
		notReady = ""
	}
	st.setConditions(p.Metadata.Generation, keptTimes(p, ts), [4][3]string{{"True"}, {"True"}, {"False", reason, notReady}, {"False", reason, notReady}})
	st.InitContainerStatuses = p.Status.InitContainerStatuses
	cs := p.container()
	started := ts
	if r := cs.State.Running; r != nil && r.StartedAt != "" {
		started = r.StartedAt
	}
	st.ContainerStatuses = k.statuses(p, p.Spec.Containers, containerState{Terminated: &terminatedState{ExitCode: 1, Reason: "Error", StartedAt: started, FinishedAt: ts}},
		false, cs.RestartCount, cs.LastState.Terminated)
	return st
}

// backingOff: a container of a crash loop failed again and waits.
func (k *Kubelet) backingOff(p *kubeletPod, now time.Time, restarts int64) *podStatus {
	ts := rfc3339(now)
	st := baseStatus(p, "Running")
	st.Conditions = p.Status.Conditions
	st.InitContainerStatuses = p.Status.InitContainerStatuses
	last := &terminatedState{ExitCode: 1, Reason: "Error", StartedAt: ts, FinishedAt: ts}
	st.ContainerStatuses = k.statuses(p, p.Spec.Containers, containerState{}, false, restarts, last)
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		cs.State.Waiting = &waitingState{Reason: "CrashLoopBackOff",
			Message: "back-off " + backOff(restarts).String() + " restarting failed container=" + cs.Name + " pod=" + p.Metadata.Name + "_" + p.Metadata.Namespace + "(" + p.Metadata.UID + ")"}
	}
	return st
}

// statuses are the container statuses of one list of the pod's spec, each
// in the given state.
func (k *Kubelet) statuses(p *kubeletPod, list []specContainer, state containerState, ready bool, restarts int64, last *terminatedState) []containerStatus {
	var out []containerStatus
	for _, c := range list {
		cs := containerStatus{Name: c.Name, State: state, LastState: containerState{Terminated: last}, Ready: ready, RestartCount: restarts,
			Image: normalizeImage(c.Image), Started: state.Running != nil}
		if state.Waiting == nil || restarts > 0 {
			cs.ImageID = imageID(c.Image)
			cs.ContainerID = containerID(p.Metadata.UID, c.Name, restarts)
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
