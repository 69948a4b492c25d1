package etcdgw

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// The maintenance paths an operator needs when a session runs out of
// space, as etcdctl's `endpoint status`, `alarm list`, `defrag` and `alarm
// disarm` call them: /v3/maintenance/status reports the sizes and the
// raised alarms, /v3/maintenance/alarm lists, raises and lifts alarms, and
// /v3/maintenance/defragment gives the room compactions freed back. etcd's
// maintenance server fills no header in the answers of the last two.

var (
	alarmActionEnum = &enum{"etcdserverpb.AlarmRequest_AlarmAction",
		map[string]int32{"GET": 0, "ACTIVATE": 1, "DEACTIVATE": 2}}
	alarmTypeEnum = &enum{"etcdserverpb.AlarmType",
		map[string]int32{"NONE": 0, "NOSPACE": 1, "CORRUPT": 2}}
)

// uint64Into is int64Into for a uint64 field: jsonpb drops the quotes and
// hands the rest to encoding/json.
func uint64Into(dst *uint64) func([]byte) error {
	return func(raw []byte) error {
		if len(raw) >= 2 && raw[0] == '"' {
			raw = raw[1 : len(raw)-1]
		}
		var v uint64
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		if !isNull(raw) {
			*dst = v
		}
		return nil
	}
}

func decodeAlarm(raw []byte, r *mvcc.AlarmRequest) error {
	return decodeMessage(raw, []field{
		{"action", "action", alarmActionEnum.into((*int32)(&r.Action))},
		{"memberID", "memberID", uint64Into(&r.MemberID)},
		{"alarm", "alarm", alarmTypeEnum.into((*int32)(&r.Alarm))},
	}, nil)
}

func (g *Gateway) serveAlarm(ctx context.Context, body []byte) *api.Response {
	var r mvcc.AlarmRequest
	if err := decodeBody(body, func(raw []byte) error { return decodeAlarm(raw, &r) }); err != nil {
		return decodeError(err)
	}
	out, err := g.Alarm(ctx, &r)
	if err != nil {
		return grpcError(err)
	}
	o := obj{b: []byte{'{'}}
	if len(out.Alarms) > 0 {
		o.name("alarms")
		o.b = append(o.b, '[')
		for i, a := range out.Alarms {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			m := obj{b: append(o.b, '{')}
			m.uint("memberID", a.MemberID)
			if a.Alarm != mvcc.AlarmNone {
				m.raw("alarm", `"`+a.Alarm.String()+`"`)
			}
			o.b = append(m.b, '}')
		}
		o.b = append(o.b, ']')
	}
	return ok(append(o.b, '}'), 0)
}

func (g *Gateway) serveDefragment(ctx context.Context, body []byte) *api.Response {
	if err := decodeBody(body, decodeEmpty); err != nil {
		return decodeError(err)
	}
	if err := g.Defragment(ctx); err != nil {
		return grpcError(err)
	}
	return ok([]byte("{}"), 0)
}

// serveStatus answers /v3/maintenance/status with Status: the 3.4
// gateway's message has no dbSizeQuota.
func (g *Gateway) serveStatus(body []byte) *api.Response {
	if err := decodeBody(body, decodeEmpty); err != nil {
		return decodeError(err)
	}
	st := g.Status(EmulatedVersion)
	return ok(appendStatus(nil, g.Header(st.Header.Revision), statusResponse{
		version:          st.Version,
		dbSize:           st.DBSize,
		leader:           st.Leader,
		raftIndex:        st.RaftIndex,
		raftTerm:         st.RaftTerm,
		raftAppliedIndex: st.RaftAppliedIndex,
		errors:           st.Errors,
		dbSizeInUse:      st.DBSizeInUse,
	}), st.Header.Revision)
}

// alarmText is an AlarmMember in protobuf's text format, which is how etcd
// puts an alarm into StatusResponse.errors: "memberID:7 alarm:NOSPACE ".
func alarmText(a mvcc.AlarmMember) string {
	var b []byte
	if a.MemberID != 0 {
		b = append(b, "memberID:"...)
		b = strconv.AppendUint(b, a.MemberID, 10)
		b = append(b, ' ')
	}
	if a.Alarm != mvcc.AlarmNone {
		b = append(b, "alarm:"...)
		b = append(b, a.Alarm.String()...)
		b = append(b, ' ')
	}
	return string(b)
}
