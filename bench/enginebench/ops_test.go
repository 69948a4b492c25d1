package main

import "testing"

func TestEveryOpRuns(t *testing.T) {
	for _, op := range Ops {
		if ns, err := Run(op.Name, 10); err != nil || ns <= 0 {
			t.Fatalf("%s: %v ns/op, %v", op.Name, ns, err)
		}
	}
}
