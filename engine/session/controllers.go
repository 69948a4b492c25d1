package session

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/client"
	"github.com/rvplay/rvplay/engine/kube"
)

// ControllerManager is who the session's controllers are: their requests
// are recorded under this principal, and their User-Agent makes kube name
// their field manager "kube-controller-manager", as in a cluster.
var ControllerManager = api.Principal{ID: "system:kube-controller-manager", Name: "kube-controller-manager", Role: api.RoleTeacher}

// controllerUserAgent is kube-controller-manager's, for the deployment
// controller's service account.
func controllerUserAgent() string {
	return "kube-controller-manager/" + kubeapi.Version["gitVersion"] + " (" + runtime.GOOS + "/" + runtime.GOARCH +
		") kubernetes/rvplay/system:serviceaccount:kube-system:deployment-controller"
}

// controllers runs the session's deployment controller, a client of the
// session itself, while the session is used as a cluster (from its first
// Kubernetes request: a session used only through the etcd gateway stays
// a plain etcd, revision 1 and all) and the settings let it.
type controllers struct {
	s *Session

	mu      sync.Mutex
	used    bool // a Kubernetes request arrived
	enabled bool // the settings' DeploymentController
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

// stop ends the controller for good (the session is closing).
func (c *controllers) stop() {
	c.mu.Lock()
	c.used = false
	wait := c.reconcileLocked()
	c.mu.Unlock()
	if wait != nil {
		<-wait
	}
}

// reconcileLocked starts or stops the controller to match used and
// enabled; it returns a channel to wait on when it stopped one.
func (c *controllers) reconcileLocked() <-chan struct{} {
	s := c.s
	want := c.used && c.enabled && !s.noCtrl && s.registry != nil && s.ctx.Err() == nil
	switch {
	case want && c.cancel == nil:
		cl := client.New(s)
		cl.UserAgent = controllerUserAgent()
		clock := clientClock{s.clock}
		cl.Clock = clock
		dc := client.NewDeploymentController(cl, "")
		dc.Clock = clock
		ctx, cancel := context.WithCancel(api.WithPrincipal(s.ctx, ControllerManager))
		done := make(chan struct{})
		c.cancel, c.done = cancel, done
		go func() {
			defer close(done)
			dc.Run(ctx)
		}()
	case !want && c.cancel != nil:
		c.cancel()
		done := c.done
		c.cancel, c.done = nil, nil
		return done
	}
	return nil
}

// clientClock lets engine/client's waits run on the session's clock.
type clientClock struct{ c kube.Clock }

func (k clientClock) Now() time.Time { return k.c.Now() }

func (k clientClock) Sleep(ctx context.Context, d time.Duration) error {
	return client.SleepOn(ctx, k, d)
}

func (k clientClock) NewTimer(d time.Duration) client.Timer { return k.c.NewTimer(d) }
