package etcdgw

import (
	"math"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// Every answer is written into one buffer made at its size: the encoder's
// appends never grow it, whatever the pairs' lengths, with every number at
// its widest.
func TestAnAnswerIsWrittenIntoOneBuffer(t *testing.T) {
	wide := Header{ClusterID: math.MaxUint64, MemberID: math.MaxUint64, Revision: math.MaxInt64, RaftTerm: math.MaxUint64}
	pair := func(key, value int) *mvcc.KeyValue {
		return &mvcc.KeyValue{Key: []byte(strings.Repeat("k", key)), Value: []byte(strings.Repeat("<", value)),
			CreateRevision: math.MaxInt64, ModRevision: math.MaxInt64, Version: math.MaxInt64, Lease: math.MaxInt64}
	}
	var kvs []*mvcc.KeyValue
	for i := range 20 {
		kvs = append(kvs, pair(i, 3*i+1))
	}
	fits := func(what string, b, out []byte) {
		t.Helper()
		if cap(out) != cap(b) || len(out) == 0 || &out[0] != &b[:1][0] {
			t.Errorf("%s: the answer (%d bytes) outgrew its buffer of %d", what, len(out), cap(b))
		}
	}
	for _, n := range []int{0, 1, 20} {
		r := &mvcc.RangeResponse{Kvs: kvs[:n], More: true, Count: math.MaxInt64}
		b := answerBuffer(r.Kvs...)
		fits("range", b, appendRange(b, wide, r))
	}
	for _, prev := range []*mvcc.KeyValue{nil, pair(300, 1000)} {
		b := answerBuffer(prev)
		fits("put", b, appendPut(b, wide, &mvcc.PutResponse{PrevKv: prev}))
	}
	d := &mvcc.DeleteRangeResponse{Deleted: math.MaxInt64, PrevKvs: kvs}
	b := answerBuffer(d.PrevKvs...)
	fits("delete", b, appendDeleteRange(b, wide, d))
	b = answerBuffer()
	fits("txn", b, appendTxn(b, wide, &mvcc.TxnResponse{Succeeded: true}))
}
