package kube

// immortalNamespaces are the namespaces kube-apiserver's NamespaceLifecycle
// admission plugin never lets anyone delete: without them a cluster, and a
// class sharing a session, stops working (every create in "default" would
// fail with 404 namespaces "default" not found).
var immortalNamespaces = map[string]bool{"default": true, "kube-system": true, "kube-public": true}

// admitNamespaceDelete is NamespaceLifecycle's rule for a delete of the
// namespace called name: refused for an immortal one, whoever asks, before
// the namespace is even read (a missing "default" is still forbidden, not
// not found), as the plugin runs before the storage does.
func admitNamespaceDelete(r *Resource, name string) error {
	if r.Group == "" && r.Resource == "namespaces" && immortalNamespaces[name] {
		return NewForbidden("", "namespaces", name, "this namespace may not be deleted")
	}
	return nil
}
