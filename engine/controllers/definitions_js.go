//go:build js

package controllers

// definitionsServed: the browser build serves no CustomResourceDefinitions
// (engine/kube's custom_js.go), so the resources the garbage collector
// watches never change and its rediscovery is not linked.
const definitionsServed = false
