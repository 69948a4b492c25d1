// Package controllers is what kube-controller-manager (and, for the
// pods, a kubelet) would do in a session.
package controllers
