// Package controllers is what kube-controller-manager (and, for the
// pods, a kubelet) would do in a session: the deployment, ReplicaSet,
// garbage-collector and namespace controllers (ControllerManager) and a
// kubelet that runs, readies, fails and restarts pods. Each is an ordinary
// engine/client client of the session, over shared informers, with
// kube-controller-manager's User-Agent for its controller's service
// account (the kubelet with a kubelet's), so its requests, conflicts and retries are recorded like anyone's; time
// is the session's engine/clock Clock. engine/session starts them with the
// session's first Kubernetes request and pauses them with the setting
// controllers. Like the rest of the engine it runs in the browser too, so
// it must not import net/http, syscall/js or SQLite.
package controllers
