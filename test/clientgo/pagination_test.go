package clientgo

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"
)

// Pages are pinned to the first page's revision: later writes do not show
// up in later pages, and every page reports the same resourceVersion.
func TestListPaginationIsPinnedToTheFirstPage(t *testing.T) {
	base := startServer(t)
	cs := clientset(t, base)
	ctx := testContext(t)
	ensureNamespace(t, cs, "page")
	cms := cs.CoreV1().ConfigMaps("page")
	for i := 0; i < 7; i++ {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"v": "0"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p1, err := cms.List(ctx, metav1.ListOptions{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(p1.Items) != 3 || p1.Continue == "" || p1.RemainingItemCount == nil || *p1.RemainingItemCount != 4 {
		t.Fatalf("page 1: %d items, continue %q, remaining %v", len(p1.Items), p1.Continue, p1.RemainingItemCount)
	}
	// Writes between pages: invisible to the rest of this list.
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-9"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	last, _ := cms.Get(ctx, "cm-6", metav1.GetOptions{})
	last.Data["v"] = "changed"
	if _, err := cms.Update(ctx, last, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	p2, err := cms.List(ctx, metav1.ListOptions{Limit: 3, Continue: p1.Continue})
	if err != nil {
		t.Fatal(err)
	}
	p3, err := cms.List(ctx, metav1.ListOptions{Limit: 3, Continue: p2.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if len(p2.Items) != 3 || len(p3.Items) != 1 || p3.Continue != "" || p3.RemainingItemCount != nil {
		t.Fatalf("pages 2/3: %d/%d items, last continue %q remaining %v", len(p2.Items), len(p3.Items), p3.Continue, p3.RemainingItemCount)
	}
	if p2.ResourceVersion != p1.ResourceVersion || p3.ResourceVersion != p1.ResourceVersion {
		t.Fatalf("page RVs %s %s %s: want all equal", p1.ResourceVersion, p2.ResourceVersion, p3.ResourceVersion)
	}
	var names []string
	for _, p := range [][]corev1.ConfigMap{p1.Items, p2.Items, p3.Items} {
		for _, it := range p {
			names = append(names, it.Name)
		}
	}
	if fmt.Sprint(names) != "[cm-0 cm-1 cm-2 cm-3 cm-4 cm-5 cm-6]" {
		t.Fatalf("names across pages %v", names)
	}
	if p3.Items[0].Data["v"] != "0" {
		t.Fatalf("cm-6 on page 3 shows %q: pages must show the state at the first page's revision", p3.Items[0].Data["v"])
	}

	// client-go's pager walks all pages.
	pg := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return cms.List(ctx, opts)
	})
	pg.PageSize = 2
	count := 0
	if err := pg.EachListItem(ctx, metav1.ListOptions{}, func(runtime.Object) error { count++; return nil }); err != nil {
		t.Fatal(err)
	}
	if count != 8 {
		t.Fatalf("pager saw %d items, want 8", count)
	}
}
