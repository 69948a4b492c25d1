package clientgo

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

func clientset(t *testing.T, base string) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(restConfig(base))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// ensureNamespace creates ns as kube-apiserver requires before namespaced
// objects can be created in it.
func ensureNamespace(t *testing.T, cs *kubernetes.Clientset, ns string) {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(testContext(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
}

func TestTypedClientCreateGetUpdateAndConflict(t *testing.T) {
	base := startServer(t)
	cs := clientset(t, base)
	ctx := testContext(t)
	ensureNamespace(t, cs, "typed")
	cms := cs.CoreV1().ConfigMaps("typed")

	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.ResourceVersion == "" || created.UID == "" || created.CreationTimestamp.IsZero() {
		t.Fatalf("create did not fill metadata: %+v", created.ObjectMeta)
	}
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: want AlreadyExists, got %v", err)
	}
	if want := `configmaps "a" already exists`; err.Error() != want {
		t.Errorf("AlreadyExists message %q, want %q", err.Error(), want)
	}

	got, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != created.ResourceVersion || got.Data["k"] != "1" {
		t.Fatalf("get: %v %+v", err, got)
	}
	_, err = cms.Get(ctx, "missing", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `configmaps "missing" not found` {
		t.Fatalf("get missing: %v", err)
	}

	got.Data["k"] = "2"
	updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update with current RV: %v", err)
	}
	if updated.ResourceVersion == got.ResourceVersion {
		t.Fatalf("update did not move resourceVersion (%s)", updated.ResourceVersion)
	}

	// got still carries the old resourceVersion: a stale write.
	got.Data["k"] = "3"
	_, err = cms.Update(ctx, got, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("stale update: want Conflict, got %v", err)
	}
	if want := `Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again`; err.Error() != want {
		t.Errorf("conflict message %q, want %q", err.Error(), want)
	}

	// RetryOnConflict: the first attempt uses the stale copy, the retry
	// re-reads and wins.
	attempts := 0
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		attempts++
		cur := got
		if attempts > 1 {
			var err error
			if cur, err = cms.Get(ctx, "a", metav1.GetOptions{}); err != nil {
				return err
			}
		}
		cur.Data["k"] = "4"
		_, err := cms.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil || attempts != 2 {
		t.Fatalf("RetryOnConflict: err=%v attempts=%d (want nil, 2)", err, attempts)
	}
	final, _ := cms.Get(ctx, "a", metav1.GetOptions{})
	if final.Data["k"] != "4" {
		t.Fatalf("final data %v", final.Data)
	}

	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := cms.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
}

// Concurrent read-modify-write loops each retry on conflict until every
// increment lands exactly once.
func TestRetryOnConflictSerialisesConcurrentIncrements(t *testing.T) {
	base := startServer(t)
	cs := clientset(t, base)
	ctx := testContext(t)
	ensureNamespace(t, cs, "retry")
	cms := cs.CoreV1().ConfigMaps("retry")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "counter"}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 5
	backoff := wait.Backoff{Steps: 100, Duration: retry.DefaultRetry.Duration, Factor: 1.0, Jitter: 1.0}
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				errs <- retry.RetryOnConflict(backoff, func() error {
					cur, err := cms.Get(ctx, "counter", metav1.GetOptions{})
					if err != nil {
						return err
					}
					n, _ := strconv.Atoi(cur.Data["n"])
					cur.Data["n"] = strconv.Itoa(n + 1)
					_, err = cms.Update(ctx, cur, metav1.UpdateOptions{})
					return err
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("increment failed: %v", err)
		}
	}
	final, err := cms.Get(ctx, "counter", metav1.GetOptions{})
	if err != nil || final.Data["n"] != fmt.Sprint(workers*each) {
		t.Fatalf("counter = %v (%v), want %d", final.Data["n"], err, workers*each)
	}
}

// A deployment's generation moves with spec changes; the status
// subresource persists only status.
func TestTypedDeploymentStatusSubresource(t *testing.T) {
	base := startServer(t)
	// The test plays the deployment controller: the session's own one,
	// which would write status too, is switched off.
	req, _ := http.NewRequest("PATCH", base+"/rvplay/v1/settings", strings.NewReader(`{"controllers":"paused"}`))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("switching the session's deployment controller off: %v %v", resp, err)
	}
	cs := clientset(t, base)
	ctx := testContext(t)
	ensureNamespace(t, cs, "apps")
	deps := cs.AppsV1().Deployments("apps")
	replicas := int32(2)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	created, err := deps.Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.Generation != 1 {
		t.Fatalf("generation after create = %d, want 1", created.Generation)
	}
	st := created.DeepCopy()
	st.Status.ObservedGeneration = created.Generation
	st.Status.Replicas = 2
	st.Spec.Replicas = new(int32) // ignored by /status
	afterStatus, err := deps.UpdateStatus(ctx, st, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if afterStatus.Status.ObservedGeneration != 1 || afterStatus.Status.Replicas != 2 || *afterStatus.Spec.Replicas != 2 || afterStatus.Generation != 1 {
		t.Fatalf("status update: generation %d spec.replicas %d status %+v", afterStatus.Generation, *afterStatus.Spec.Replicas, afterStatus.Status)
	}
	three := int32(3)
	afterStatus.Spec.Replicas = &three
	afterStatus.Status.Replicas = 99 // ignored by the main resource
	scaled, err := deps.Update(ctx, afterStatus, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update spec: %v", err)
	}
	if scaled.Generation != 2 || scaled.Status.Replicas != 2 {
		t.Fatalf("spec update: generation %d (want 2), status.replicas %d (want 2)", scaled.Generation, scaled.Status.Replicas)
	}
	// A stale status write conflicts like any other.
	_, err = deps.UpdateStatus(ctx, afterStatus, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("stale status update: want Conflict, got %v", err)
	}
}
