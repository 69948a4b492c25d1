package mvcc_test

import (
	"testing"

	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/mvcc/mvcctest"
)

func TestStoreOnMemoryBackend(t *testing.T) {
	mvcctest.Run(t, func(t *testing.T) func() mvcc.Backend {
		b := mvcc.NewMemoryBackend()
		return func() mvcc.Backend { return b }
	})
}

func BenchmarkMemory(b *testing.B) {
	mvcctest.Bench(b, func(b *testing.B) mvcc.Backend { return mvcc.NewMemoryBackend() })
}
