package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/client"
	ctrl "github.com/rvplay/rvplay/engine/controllers"
)

// ControllerManager is who the session's controllers are: their requests
// are recorded under this principal, and their User-Agent makes kube name
// their field manager "kube-controller-manager", as in a cluster.
var ControllerManager = api.Principal{ID: "system:kube-controller-manager", Name: "kube-controller-manager", Role: api.RoleTeacher}

// Kubelet is who the session's kubelet is (field manager "kubelet").
var Kubelet = api.Principal{ID: "system:node:rvplay", Name: "kubelet", Role: api.RoleTeacher}

// controllers runs what a cluster runs beside its API server, as clients
// of the session itself: kube-controller-manager's controllers
// (engine/controllers) and a kubelet that runs the pods. They run while
// the session is used as a cluster (from its first Kubernetes request: a
// session used only through the etcd gateway stays a plain etcd, revision
// 1 and all) and the settings let them.
type controllers struct {
	s *Session

	mu      sync.Mutex
	used    bool // a Kubernetes request arrived
	enabled bool // the settings' controllers: running
	kubelet *ctrl.Kubelet
	cancel  context.CancelFunc
	done    chan struct{}
}

func (c *controllers) kubeUsed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.used {
		c.used = true
		c.reconcileLocked()
	}
}

func (c *controllers) enable(on bool) {
	c.mu.Lock()
	c.enabled = on
	wait := c.reconcileLocked()
	c.mu.Unlock()
	if wait != nil {
		<-wait
	}
}

// stop ends the controllers for good (the session is closing).
func (c *controllers) stop() {
	c.mu.Lock()
	c.used = false
	wait := c.reconcileLocked()
	c.mu.Unlock()
	if wait != nil {
		<-wait
	}
}

// reconcileLocked starts or stops the controllers to match used and
// enabled; it returns a channel to wait on when it stopped them.
func (c *controllers) reconcileLocked() <-chan struct{} {
	s := c.s
	want := c.used && c.enabled && !s.noCtrl && s.registry != nil && s.ctx.Err() == nil
	switch {
	case want && c.cancel == nil:
		version := kubeapi.Version["gitVersion"]
		ctx, cancel := context.WithCancel(s.ctx)
		kc := client.New(s)
		kc.UserAgent, kc.Clock = ctrl.KubeletUserAgent(version), s.clock
		kubelet := ctrl.NewKubelet(api.WithPrincipal(ctx, Kubelet), kc, func() time.Duration { return s.Settings().PodReadyDelay })
		kcm := ctrl.NewControllerManager(s, s.clock, version)
		done := make(chan struct{})
		c.cancel, c.done, c.kubelet = cancel, done, kubelet
		go func() {
			defer close(done)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				kubelet.Run()
			}()
			kcm.Run(api.WithPrincipal(ctx, ControllerManager))
			wg.Wait()
		}()
	case !want && c.cancel != nil:
		c.cancel()
		done := c.done
		c.cancel, c.done, c.kubelet = nil, nil, nil
		return done
	}
	return nil
}

// FailPodPath is where the lab fails a pod: POST
// /rvplay/v1/pods/<namespace>/<name>/fail, with an optional body
// {"crashLoop": true}.
const FailPodPath = ControlPrefix + "/pods"

// serveFailPod makes the kubelet crash a pod's containers. Anyone who may
// write to the session may (a crash is what happens to pods, as a delete
// is something anyone may do); the kubelet's status writes that follow
// are its own.
func (s *Session) serveFailPod(ctx context.Context, req *api.Request) *api.Response {
	parts := strings.Split(strings.TrimPrefix(strings.TrimSuffix(req.Path, "/"), FailPodPath+"/"), "/")
	if len(parts) != 3 || parts[2] != "fail" {
		return ControlStatus(404, "NotFound", "the session serves no "+req.Path+" (fail a pod with POST "+FailPodPath+"/<namespace>/<name>/fail)")
	}
	if req.Method != "POST" {
		return methodNotAllowed(req, "POST")
	}
	if p := api.PrincipalFrom(ctx); p.Role == api.RoleAnonymous {
		return ControlStatus(401, "Unauthorized", "Unauthorized")
	}
	var body struct {
		CrashLoop bool `json:"crashLoop"`
	}
	if len(strings.TrimSpace(string(req.Body))) > 0 {
		if err := decodeStrict(req.Body, &body); err != nil {
			return ControlStatus(400, "BadRequest", `the body is {"crashLoop": true|false}: `+err.Error())
		}
	}
	s.ctrl.mu.Lock()
	k := s.ctrl.kubelet
	s.ctrl.mu.Unlock()
	if k == nil {
		return ControlStatus(409, "Conflict", "the session's kubelet is not running (the controllers are paused, or the session has not been used as a cluster yet)")
	}
	ns, name := parts[0], parts[1]
	switch err := k.Fail(ns, name, body.CrashLoop); {
	case errors.Is(err, ctrl.ErrPodNotFound):
		return ControlStatus(404, "NotFound", `pods "`+name+`" not found`)
	case err != nil:
		return ControlStatus(409, "Conflict", err.Error())
	}
	return controlJSON(200, map[string]any{"namespace": ns, "name": name, "crashLoop": body.CrashLoop})
}

func decodeStrict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(v)
}
