package mvcctest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// The storage quotas and the NOSPACE alarm, as etcd's --quota-backend-bytes
// behaves (checked against a real etcd in test/etcddiff), and rvplay's key
// cap. Every case restarts the store at least once: usage is rebuilt from
// the backend, so both backends must agree on it.

// withBounds restarts the store with the quotas and member ID of opts,
// which later restarts keep.
func (h *harness) withBounds(opts mvcc.Options) {
	h.t.Helper()
	h.bounds = opts
	h.restart()
}

func (h *harness) quotaErr(what string, err error, q mvcc.Quota) *mvcc.QuotaError {
	h.t.Helper()
	var qe *mvcc.QuotaError
	if !errors.As(err, &qe) || qe.Quota != q || !errors.Is(err, mvcc.ErrNoSpace) || err.Error() != mvcc.ErrNoSpace.Message {
		h.t.Fatalf("%s: got error %v (%#v), want a quota %d error reading %q", what, err, err, q, mvcc.ErrNoSpace.Message)
	}
	return qe
}

func (h *harness) alarms() []mvcc.AlarmMember { return h.s.Alarms() }

func (h *harness) alarm(action mvcc.AlarmAction, member uint64, t mvcc.AlarmType) []mvcc.AlarmMember {
	h.t.Helper()
	resp, err := h.s.Alarm(ctx, &mvcc.AlarmRequest{Action: action, MemberID: member, Alarm: t})
	if err != nil {
		h.t.Fatalf("alarm: %v", err)
	}
	return resp.Alarms
}

// fill puts 100-byte values under fresh keys until the quota refuses one,
// and returns how many were accepted and the refusal.
func (h *harness) fill(prefix string) (int, error) {
	h.t.Helper()
	for i := 0; i < 100000; i++ {
		_, err := h.s.Put(ctx, &mvcc.PutRequest{Key: b(fmt.Sprintf("%s%05d", prefix, i)), Value: []byte(strings.Repeat("v", 100))})
		if err != nil {
			return i, err
		}
	}
	h.t.Fatalf("the quota never refused a put")
	return 0, nil
}

var noSpace = []mvcc.AlarmMember{{MemberID: 7, Alarm: mvcc.AlarmNoSpace}}

func init() {
	storeCases = append(storeCases,
		testCase{"UsageCountsEveryRetainedRecordAndSurvivesARestart", func(h *harness) {
			h.put("a", "12345")
			h.put("a", "1234567890")
			h.put("bb", "x")
			h.del("bb", "")
			want := mvcc.RecordSize(&mvcc.Record{KV: mvcc.KeyValue{Key: b("a"), Value: b("12345")}}) +
				mvcc.RecordSize(&mvcc.Record{KV: mvcc.KeyValue{Key: b("a"), Value: b("1234567890")}}) +
				mvcc.RecordSize(&mvcc.Record{KV: mvcc.KeyValue{Key: b("bb"), Value: b("x")}}) +
				mvcc.RecordSize(&mvcc.Record{Tombstone: true, KV: mvcc.KeyValue{Key: b("bb")}})
			u := h.s.Usage()
			h.equal("in use, size, keys", []int64{u.DBSizeInUse, u.DBSize, u.Keys}, []int64{want, want, 1})
			h.restart()
			u2 := h.s.Usage()
			h.equal("after a restart", u2, u)
			// Compaction frees the superseded put and the deleted key's
			// history; dbSize keeps its high-water mark until defragment.
			if _, err := h.s.Compact(ctx, &mvcc.CompactionRequest{Revision: h.s.Rev(), Physical: true}); err != nil {
				h.t.Fatal(err)
			}
			kept := mvcc.RecordSize(&mvcc.Record{KV: mvcc.KeyValue{Key: b("a"), Value: b("1234567890")}})
			u = h.s.Usage()
			h.equal("after compaction: in use, size, keys", []int64{u.DBSizeInUse, u.DBSize, u.Keys}, []int64{kept, want, 1})
			h.s.Defragment()
			h.equal("after defragment: size", h.s.Usage().DBSize, kept)
			h.restart()
			u = h.s.Usage()
			h.equal("after compaction and restart", []int64{u.DBSizeInUse, u.DBSize, u.Keys}, []int64{kept, kept, 1})
		}},
		testCase{"APutBeyondTheBytesQuotaFailsAndRaisesNoSpace", func(h *harness) {
			h.withBounds(mvcc.Options{QuotaBackendBytes: 2000, MemberID: 7})
			n, err := h.fill("k")
			qe := h.quotaErr("fill", err, mvcc.QuotaBackendBytes)
			size := h.s.Usage().DBSize
			cost := mvcc.RecordSize(&mvcc.Record{KV: mvcc.KeyValue{Key: b("k00000"), Value: make([]byte, 100)}})
			h.equal("accepted puts", int64(n), (2000-1)/cost)
			h.equal("figures", *qe, mvcc.QuotaError{Quota: mvcc.QuotaBackendBytes, Requested: cost, Used: size, Limit: 2000})
			h.equal("alarms", h.alarms(), noSpace)
			rev := h.s.Rev()
			// While NOSPACE is raised, even a put that fits is refused...
			_, err = h.s.Put(ctx, &mvcc.PutRequest{Key: b("small")})
			if qe := h.quotaErr("small put", err, mvcc.QuotaBackendBytes); !qe.Alarm {
				h.t.Fatalf("the small put was not refused by the alarm: %+v", qe)
			}
			// ...and so is a txn that could put on either branch, or in a
			// nested txn (etcd 3.4 lets nested puts through).
			for name, txn := range map[string]*mvcc.TxnRequest{
				"put on the branch not taken": {
					Compare: []mvcc.Compare{{Key: b("k00000"), Target: mvcc.CompareVersion, Version: 9}},
					Success: []mvcc.RequestOp{{Put: &mvcc.PutRequest{Key: b("x")}}},
					Failure: []mvcc.RequestOp{{Range: &mvcc.RangeRequest{Key: b("x")}}},
				},
				"nested put": {Success: []mvcc.RequestOp{{Txn: &mvcc.TxnRequest{Success: []mvcc.RequestOp{{Put: &mvcc.PutRequest{Key: b("x")}}}}}}},
			} {
				_, err := h.s.Txn(ctx, txn)
				h.quotaErr(name, err, mvcc.QuotaBackendBytes)
			}
			h.equal("refused writes took no revision", h.s.Rev(), rev)
			h.equal("nothing of them is there", h.get("small", 0), (*mvcc.KeyValue)(nil))
			// Reads, read-only txns, deletes and compaction still work.
			h.equal("read", string(h.get("k00000", 0).Value), strings.Repeat("v", 100))
			if _, err := h.s.Txn(ctx, &mvcc.TxnRequest{Success: []mvcc.RequestOp{{Range: &mvcc.RangeRequest{Key: b("k00000")}}}}); err != nil {
				h.t.Fatalf("read-only txn: %v", err)
			}
			h.equal("delete", h.del("k", "l").Deleted, int64(n))
			if _, err := h.s.Compact(ctx, &mvcc.CompactionRequest{Revision: h.s.Rev(), Physical: true}); err != nil {
				h.t.Fatalf("compact: %v", err)
			}
			h.equal("compaction freed everything", h.s.Usage().DBSizeInUse, int64(0))
			_, err = h.s.Put(ctx, &mvcc.PutRequest{Key: b("small")})
			h.quotaErr("put before disarm", err, mvcc.QuotaBackendBytes)
			h.s.Defragment()
			h.equal("disarm", h.alarm(mvcc.AlarmDeactivate, 7, mvcc.AlarmNoSpace), noSpace)
			h.equal("alarms after disarm", h.alarms(), []mvcc.AlarmMember(nil))
			h.put("small", "")
			// The cycle repeats: the quota holds again.
			_, err = h.fill("m")
			h.quotaErr("second fill", err, mvcc.QuotaBackendBytes)
		}},
		testCase{"DeletesAreNeverRefusedByTheQuota", func(h *harness) {
			h.withBounds(mvcc.Options{QuotaBackendBytes: 1000, MemberID: 7})
			n, err := h.fill("k")
			h.quotaErr("fill", err, mvcc.QuotaBackendBytes)
			// Tombstones add a little; etcd lets deletes through all the same.
			before := h.s.Usage().DBSizeInUse
			for i := 0; i < n; i++ {
				h.del(fmt.Sprintf("k%05d", i), "")
			}
			if u := h.s.Usage(); u.DBSizeInUse <= before || u.Keys != 0 {
				h.t.Fatalf("usage after deletes %+v (before: %d in use)", u, before)
			}
		}},
		testCase{"TheKeyCapCountsKeysThatExistAndRaisesNoAlarm", func(h *harness) {
			h.withBounds(mvcc.Options{MaxKeys: 3, MemberID: 7})
			h.put("a", "1")
			h.put("b", "1")
			h.put("c", "1")
			h.put("a", "2") // an update creates no key
			_, err := h.s.Put(ctx, &mvcc.PutRequest{Key: b("d")})
			qe := h.quotaErr("fourth key", err, mvcc.QuotaKeys)
			h.equal("figures", *qe, mvcc.QuotaError{Quota: mvcc.QuotaKeys, Requested: 1, Used: 3, Limit: 3})
			h.equal("no alarm", h.alarms(), []mvcc.AlarmMember(nil))
			// A txn that deletes one and creates one fits.
			if _, err := h.s.Txn(ctx, &mvcc.TxnRequest{Success: []mvcc.RequestOp{
				{DeleteRange: &mvcc.DeleteRangeRequest{Key: b("a")}}, {Put: &mvcc.PutRequest{Key: b("d")}},
			}}); err != nil {
				h.t.Fatalf("delete one, create one: %v", err)
			}
			h.restart()
			h.equal("keys after a restart", h.s.Usage().Keys, int64(3))
			_, err = h.s.Put(ctx, &mvcc.PutRequest{Key: b("a")})
			h.quotaErr("still capped after a restart", err, mvcc.QuotaKeys)
			h.del("b", "")
			h.put("a", "back")
		}},
		testCase{"AlarmsAreListedRaisedAndLiftedAsEtcdDoes", func(h *harness) {
			h.withBounds(mvcc.Options{MemberID: 7})
			h.equal("none", h.alarm(mvcc.AlarmGet, 0, mvcc.AlarmNone), []mvcc.AlarmMember(nil))
			h.equal("activate", h.alarm(mvcc.AlarmActivate, 9, mvcc.AlarmNoSpace), []mvcc.AlarmMember{{MemberID: 9, Alarm: mvcc.AlarmNoSpace}})
			h.equal("activate again answers the raised one", h.alarm(mvcc.AlarmActivate, 9, mvcc.AlarmNoSpace), []mvcc.AlarmMember{{MemberID: 9, Alarm: mvcc.AlarmNoSpace}})
			h.alarm(mvcc.AlarmActivate, 7, mvcc.AlarmCorrupt)
			all := []mvcc.AlarmMember{{MemberID: 9, Alarm: mvcc.AlarmNoSpace}, {MemberID: 7, Alarm: mvcc.AlarmCorrupt}}
			h.equal("get all", h.alarm(mvcc.AlarmGet, 0, mvcc.AlarmNone), all)
			h.equal("get by type", h.alarm(mvcc.AlarmGet, 0, mvcc.AlarmCorrupt), all[1:])
			h.equal("an alarm of nobody and nothing is not raised", h.alarm(mvcc.AlarmActivate, 0, mvcc.AlarmNone), []mvcc.AlarmMember(nil))
			h.equal("deactivate another member's", h.alarm(mvcc.AlarmDeactivate, 7, mvcc.AlarmNoSpace), []mvcc.AlarmMember(nil))
			// Under CORRUPT every write and compaction fails; reads work.
			_, err := h.s.Put(ctx, &mvcc.PutRequest{Key: b("a")})
			h.wantErr("put under CORRUPT", err, mvcc.ErrCorrupt)
			_, err = h.s.DeleteRange(ctx, &mvcc.DeleteRangeRequest{Key: b("a")})
			h.wantErr("delete under CORRUPT", err, mvcc.ErrCorrupt)
			_, err = h.s.Compact(ctx, &mvcc.CompactionRequest{Revision: 1})
			h.wantErr("compact under CORRUPT", err, mvcc.ErrCorrupt)
			h.get("a", 0)
			h.equal("lift CORRUPT", h.alarm(mvcc.AlarmDeactivate, 7, mvcc.AlarmCorrupt), all[1:])
			// A NOSPACE raised by a client refuses puts like the quota's.
			_, err = h.s.Put(ctx, &mvcc.PutRequest{Key: b("a")})
			h.quotaErr("put under a client's NOSPACE", err, mvcc.QuotaBackendBytes)
			h.alarm(mvcc.AlarmDeactivate, 9, mvcc.AlarmNoSpace)
			h.put("a", "")
			h.alarm(mvcc.AlarmActivate, 9, mvcc.AlarmNoSpace)
			h.restart()
			h.equal("alarms after a restart", h.alarms(), []mvcc.AlarmMember(nil))
		}},
	)
}
