package classroom

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// kubeconfig is a kubectl configuration for one person in session name at
// server (the session's base URL, trusting ca when the server's certificate
// needs it): a cluster, a user with the person's
// bearer token (none for an open session), and two contexts, the shared
// "default" namespace (current) and, for a student, their own namespace.
// Every value is written as a double-quoted YAML scalar (Go's quoting
// uses only escapes YAML knows): no value can break the document.
func kubeconfig(name, server string, ca []byte, user, token, ownNamespace string) string {
	q := strconv.Quote
	cluster := "rvplay-" + name
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\n")
	b.WriteString("clusters:\n- name: " + q(cluster) + "\n  cluster:\n    server: " + q(server) + "\n")
	if len(ca) > 0 {
		b.WriteString("    certificate-authority-data: " + q(base64.StdEncoding.EncodeToString(ca)) + "\n")
	}
	b.WriteString("users:\n- name: " + q(user+"@"+cluster) + "\n  user:")
	if token != "" {
		b.WriteString("\n    token: " + q(token) + "\n")
	} else {
		b.WriteString(" {}\n")
	}
	b.WriteString("contexts:\n")
	writeContext := func(ctxName, ns string) {
		b.WriteString("- name: " + q(ctxName) + "\n  context:\n    cluster: " + q(cluster) +
			"\n    user: " + q(user+"@"+cluster) + "\n    namespace: " + q(ns) + "\n")
	}
	writeContext(cluster, "default")
	if ownNamespace != "" {
		writeContext(cluster+"-"+ownNamespace, ownNamespace)
	}
	b.WriteString("current-context: " + q(cluster) + "\npreferences: {}\n")
	return b.String()
}
