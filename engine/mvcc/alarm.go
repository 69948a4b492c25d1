package mvcc

import (
	"context"
	"sort"
)

// Alarms are etcd's: a member raises one when something is wrong with its
// storage, and while it is raised the server refuses what could make it
// worse. NOSPACE is raised by a put beyond the bytes quota (quota.go), or
// by a client; while it is raised every write that may put is refused with
// ErrNoSpace, and deletes, reads and compaction still work, so that an
// operator can make room, defragment and disarm it. CORRUPT is only ever
// raised by a client here (etcd raises it when members' hashes differ);
// while it is raised every write and compaction fails with ErrCorrupt.
//
// Alarms live in memory: a store reopened from its backend (a restart, or
// a session unloaded while idle) starts without any, and a write beyond the
// quota raises NOSPACE again. (etcd keeps them in its backend.)

// AlarmType is etcdserverpb.AlarmType.
type AlarmType int32

const (
	AlarmNone AlarmType = iota
	AlarmNoSpace
	AlarmCorrupt
)

func (t AlarmType) String() string {
	switch t {
	case AlarmNone:
		return "NONE"
	case AlarmNoSpace:
		return "NOSPACE"
	case AlarmCorrupt:
		return "CORRUPT"
	}
	return "UNKNOWN"
}

// AlarmAction is etcdserverpb.AlarmRequest_AlarmAction.
type AlarmAction int32

const (
	AlarmGet AlarmAction = iota
	AlarmActivate
	AlarmDeactivate
)

// AlarmRequest is etcdserverpb.AlarmRequest.
type AlarmRequest struct {
	Action AlarmAction
	// MemberID is the member the alarm is raised for or lifted from.
	MemberID uint64
	// Alarm is the alarm's type; AlarmNone with AlarmGet lists every alarm.
	Alarm AlarmType
}

// AlarmMember is etcdserverpb.AlarmMember: one raised alarm.
type AlarmMember struct {
	MemberID uint64
	Alarm    AlarmType
}

// AlarmResponse is etcdserverpb.AlarmResponse.
type AlarmResponse struct {
	Header ResponseHeader
	Alarms []AlarmMember
}

// Alarm: see Maintenance. Another action than GET, ACTIVATE and
// DEACTIVATE answers nothing.
func (s *Store) Alarm(ctx context.Context, r *AlarmRequest) (*AlarmResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := &AlarmResponse{Header: ResponseHeader{Revision: s.visibleRev.Load()}}
	m := AlarmMember{MemberID: r.MemberID, Alarm: r.Alarm}
	switch r.Action {
	case AlarmGet:
		resp.Alarms = s.alarmsLocked(r.Alarm)
	case AlarmActivate:
		if m == (AlarmMember{}) {
			// etcd stores an alarm under its encoding, empty for member 0
			// and NONE, which makes etcd 3.4 exit; here nothing happens.
			// (differs from etcd)
			break
		}
		s.activateLocked(m)
		resp.Alarms = []AlarmMember{m}
	case AlarmDeactivate:
		for i, a := range s.alarms {
			if a == m {
				s.alarms = append(s.alarms[:i:i], s.alarms[i+1:]...)
				resp.Alarms = []AlarmMember{m}
				break
			}
		}
	}
	return resp, nil
}

// Alarms: see Maintenance.
func (s *Store) Alarms() []AlarmMember {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.alarmsLocked(AlarmNone)
}

func (s *Store) alarmsLocked(t AlarmType) []AlarmMember {
	var out []AlarmMember
	for _, a := range s.alarms {
		if t == AlarmNone || a.Alarm == t {
			out = append(out, a)
		}
	}
	return out
}

// activateLocked raises m unless it is raised already. The list stays
// ordered by type and member: etcd lists them in its maps' random order.
func (s *Store) activateLocked(m AlarmMember) {
	for _, a := range s.alarms {
		if a == m {
			return
		}
	}
	s.alarms = append(s.alarms, m)
	sort.Slice(s.alarms, func(i, j int) bool {
		a, b := s.alarms[i], s.alarms[j]
		return a.Alarm < b.Alarm || (a.Alarm == b.Alarm && a.MemberID < b.MemberID)
	})
}

func (s *Store) raisedLocked(t AlarmType) bool {
	for _, a := range s.alarms {
		if a.Alarm == t {
			return true
		}
	}
	return false
}

// alarmRefusalLocked is etcd's corrupt and capped appliers: under CORRUPT
// every write fails; under NOSPACE a write that may put (cost > 0: etcd's
// quota cost of the request, putCost) fails. The caller holds mu and has
// checked that some alarm is raised.
func (s *Store) alarmRefusalLocked(cost int64) error {
	if s.raisedLocked(AlarmCorrupt) {
		return ErrCorrupt
	}
	if cost > 0 && s.raisedLocked(AlarmNoSpace) {
		return &QuotaError{Quota: QuotaBackendBytes, Requested: cost, Used: s.usage.DBSize,
			Limit: s.opts.QuotaBackendBytes, Alarm: true}
	}
	return nil
}
