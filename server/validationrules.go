package main

import "github.com/rvplay/rvplay/server/crdrules"

// The server's sessions evaluate the CEL rules of their
// CustomResourceDefinitions with kube-apiserver's code (the engine
// alone, and so the browser's build, does not: package crdrules says
// why).
func init() { crdrules.Use() }
