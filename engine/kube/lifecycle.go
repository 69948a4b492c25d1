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

// NamespaceTerminatingCause is the cause kube's NamespaceLifecycle adds to
// its refusal of content for a terminating namespace
// (v1.NamespaceTerminatingCause); controllers recognise it.
const NamespaceTerminatingCause = "NamespaceTerminating"

// forbidTerminatingNamespace is NamespaceLifecycle's refusal of a create
// in a namespace being deleted, named after the object (its generateName
// when it has no name yet, as admission runs before names are generated).
func forbidTerminatingNamespace(r *Resource, obj Object, ns string) error {
	name := Name(obj)
	if name == "" {
		name = str(meta(obj), "generateName")
	}
	if name == "" {
		name = "Unknown"
	}
	err := NewForbidden(r.Group, r.Resource, name, "unable to create new content in namespace "+ns+" because it is being terminated")
	err.Status.Details.Causes = append(err.Status.Details.Causes, StatusCause{Type: NamespaceTerminatingCause,
		Message: "namespace " + ns + " is being terminated", Field: "metadata.namespace"})
	return err
}
