//go:build !unix

package kubeapi

func processCPU() int64 { return 0 }
