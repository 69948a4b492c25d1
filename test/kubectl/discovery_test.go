package kubectl

import (
	"regexp"
	"sort"
	"strings"
	"testing"
)

// aggregatedContentType is what kube-apiserver answers a discovery
// request that asks for the aggregated document.
const aggregatedContentType = "Content-Type: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// TestKubectlAggregatedDiscovery: every kubectl under test discovers the
// session's resources from /api and /apis. Those that ask for
// apidiscovery.k8s.io/v2 (1.30 on) get the aggregated documents (200, the
// v2 Content-Type) and fetch no group-version's resource list; those that
// ask for v2beta1 first (1.27 to 1.29) get the legacy documents, as from a
// kube-apiserver 1.36, and then each group-version's list. kubectl
// api-resources lists the built-in resources, and a custom resource while
// its definition exists.
func TestKubectlAggregatedDiscovery(t *testing.T) {
	bins := kubectlBinaries(t)
	names := make([]string, 0, len(bins))
	for n := range bins {
		names = append(names, n)
	}
	sort.Strings(names)
	base := startServer(t)
	groupVersionList := regexp.MustCompile(`/(api/v1|apis/apps/v1)\?timeout=`)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			k := newKubectl(t, bins[name], base)
			_, log, err := k.run(nil, "get", "configmaps", "-v=8")
			if err != nil {
				t.Fatalf("kubectl get configmaps -v=8: %v\n%s", err, log)
			}
			mustContain(t, "get -v=8", log, "/api?timeout=", "/apis?timeout=", "200 OK")
			if strings.Contains(log, "v=v2;as=APIGroupDiscoveryList,") {
				mustContain(t, "aggregated discovery", log, aggregatedContentType)
				if m := groupVersionList.FindString(log); m != "" {
					t.Errorf("kubectl fetched %s besides the aggregated documents:\n%s", m, log)
				}
			} else {
				if strings.Contains(log, aggregatedContentType) {
					t.Errorf("kubectl did not ask for apidiscovery.k8s.io/v2 but got it:\n%s", log)
				}
				mustContain(t, "legacy discovery", log, "/api/v1?timeout=", "/apis/apps/v1?timeout=")
			}
			if strings.Contains(log, "406 Not Acceptable") {
				t.Errorf("a 406 in kubectl's log:\n%s", log)
			}
			resources := k.ok("api-resources", "--cache-dir", t.TempDir())
			for _, row := range []*regexp.Regexp{
				regexp.MustCompile(`(?m)^configmaps +cm +v1 +true +ConfigMap$`),
				regexp.MustCompile(`(?m)^namespaces +ns +v1 +false +Namespace$`),
				regexp.MustCompile(`(?m)^deployments +deploy +apps/v1 +true +Deployment$`),
				regexp.MustCompile(`(?m)^customresourcedefinitions +crd,crds +apiextensions.k8s.io/v1 +false +CustomResourceDefinition$`),
			} {
				if !row.MatchString(resources) {
					t.Errorf("kubectl api-resources: no row %s in\n%s", row, resources)
				}
			}
		})
	}
	t.Run("custom resources", func(t *testing.T) {
		k := newKubectl(t, bins[names[len(names)-1]], base)
		mustContain(t, "create the definition", k.ok("create", "-f", k.write("crd.yaml", cronTabCRDYAML)), "created")
		for _, name := range names {
			k := newKubectl(t, bins[name], base)
			mustContain(t, name+" api-resources", k.ok("api-resources", "--cache-dir", t.TempDir()),
				"crontabs", "stable.example.com/v1", "CronTab")
			k.ok("get", "crontabs", "--cache-dir", t.TempDir())
		}
		k.ok("delete", "crd", "crontabs.stable.example.com")
		for _, name := range names {
			k := newKubectl(t, bins[name], base)
			if out := k.ok("api-resources", "--cache-dir", t.TempDir()); strings.Contains(out, "crontabs") {
				t.Errorf("%s api-resources: crontabs still listed after its definition was deleted:\n%s", name, out)
			}
		}
	})
}
