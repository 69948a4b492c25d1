//go:build !js

package controllers

// definitionsServed: CustomResourceDefinitions may add resources while
// the controllers run, so the garbage collector reads discovery again
// when one changes (definitions_js.go: the browser build serves none).
const definitionsServed = true
