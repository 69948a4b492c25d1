package controllers

import (
	"context"
	"runtime"
	"sync"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/client"
	"github.com/rvplay/rvplay/engine/clock"
)

// ControllerManager runs kube-controller-manager's controllers for one
// session: deployment, replicaset, garbage collector and namespace, each
// with a client of its own (kube-controller-manager's User-Agent with the
// controller's service account), over informers they share.
type ControllerManager struct {
	handler api.Handler
	clock   clock.Clock
	version string
}

// NewControllerManager returns a manager whose controllers talk to h, with
// time on clk; version is the Kubernetes version their User-Agents
// carry ("v1.36.3").
func NewControllerManager(h api.Handler, clk clock.Clock, version string) *ControllerManager {
	if clk == nil {
		clk = clock.Real{}
	}
	return &ControllerManager{handler: h, clock: clk, version: version}
}

// UserAgent is kube-controller-manager's for the named client ("shared-informers",
// or a controller's service account).
func (m *ControllerManager) UserAgent(name string) string {
	return "kube-controller-manager/" + m.version + " (" + runtime.GOOS + "/" + runtime.GOARCH + ") kubernetes/rvplay/" + name
}

func (m *ControllerManager) client(name string) *client.Client {
	c := client.New(m.handler)
	c.UserAgent = m.UserAgent(name)
	c.Clock = m.clock
	return c
}

// Run runs the controllers until ctx ends, and returns when they all
// stopped.
func (m *ControllerManager) Run(ctx context.Context) {
	f := client.NewInformerFactory(m.client("shared-informers"))
	mappings, err := client.NewMapper(m.client("system:serviceaccount:kube-system:generic-garbage-collector")).All(ctx)
	if err != nil {
		return
	}
	controllers := []interface{ run() }{
		newDeploymentController(ctx, m.client("system:serviceaccount:kube-system:deployment-controller"), f),
		newReplicaSetController(ctx, m.client("system:serviceaccount:kube-system:replicaset-controller"), f),
		newGarbageCollector(ctx, m.client("system:serviceaccount:kube-system:generic-garbage-collector"), f, mappings),
		newNamespaceController(ctx, m.client("system:serviceaccount:kube-system:namespace-controller"), f),
	}
	f.Start(ctx)
	var wg sync.WaitGroup
	if f.WaitForCacheSync(ctx) {
		for _, c := range controllers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.run()
			}()
		}
	}
	wg.Wait()
	f.Wait()
}

// KubeletUserAgent is a kubelet's User-Agent (its field manager is
// "kubelet").
func KubeletUserAgent(version string) string {
	return "kubelet/" + version + " (" + runtime.GOOS + "/" + runtime.GOARCH + ") kubernetes/rvplay"
}
