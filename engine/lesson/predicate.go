package lesson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Predicate is a step's verify condition, written in lesson.json as a JSON
// object with exactly one of these keys:
//
//	{"all": [p, ...]}        every p holds
//	{"any": [p, ...]}        at least one p holds
//	{"not": p}               p does not hold
//	{"key": KeyCheck}        an etcd key's current state (and history)
//	{"object": ObjectCheck}  a Kubernetes object's current state
//	{"compacted": true}      the store has been compacted
//	{"exchange": Match}      the record holds a matching exchange ("count" for more)
//	{"sequence": Sequence}   matching exchanges in this order (by one client)
//	{"detected": Detection}  a detector found this (a mistake, or a good habit)
//
// State predicates read the session's store; exchange predicates read the
// part of the record the verify call scopes (see Scope).
type Predicate struct {
	raw json.RawMessage

	all, any  []*Predicate
	not       *Predicate
	key       *KeyCheck
	object    *ObjectCheck
	compacted *bool
	exchange  *Match
	sequence  *Sequence
	detected  *Detection
}

// KeyCheck is a condition on one etcd key. Unset fields are not checked.
type KeyCheck struct {
	Key     string  `json:"key"`
	Exists  *bool   `json:"exists,omitempty"`
	Value   *string `json:"value,omitempty"`
	Version *int64  `json:"version,omitempty"`
	// MinVersion: version is at least this.
	MinVersion int64 `json:"minVersion,omitempty"`
	// Recreated: the key was deleted and put again (it existed at some
	// revision before its current create_revision).
	Recreated *bool `json:"recreated,omitempty"`
}

// ObjectCheck is a condition on one Kubernetes object, read from its
// etcd key (/registry/<resource>/<namespace>/<name>) with
// metadata.resourceVersion set to the key's mod_revision, as the API
// server answers it.
type ObjectCheck struct {
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Exists    *bool  `json:"exists,omitempty"`
	// Fields maps dotted paths to the JSON value they must have
	// ("spec.replicas": 5); null means the field is absent.
	Fields map[string]any `json:"fields,omitempty"`
	// Same and Differ list pairs of dotted paths whose values must be
	// equal (or differ): ["status.observedGeneration", "metadata.generation"].
	Same   [][2]string `json:"same,omitempty"`
	Differ [][2]string `json:"differ,omitempty"`
	// FieldManager: a managedFields entry of this manager owns
	// ManagesField (a dotted path, "spec.replicas").
	FieldManager string `json:"fieldManager,omitempty"`
	ManagesField string `json:"managesField,omitempty"`
}

// Sequence is exchanges matching Steps, in this order. SameClient asks
// that one client (Exchange.Who) sent them all.
type Sequence struct {
	Steps      []Match `json:"steps"`
	SameClient bool    `json:"sameClient,omitempty"`
}

// Detection holds when the named detector found something in the scoped
// record (sent by Client, when set).
type Detection struct {
	Name   string `json:"name"`
	Client string `json:"client,omitempty"`
}

// UnmarshalJSON parses one predicate, refusing unknown keys and fields so
// that a typo in a lesson is an error and not a predicate that never holds.
func (p *Predicate) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("a predicate is a JSON object: %w", err)
	}
	if len(m) != 1 {
		// The keys it may have, rather than the ones it has: naming
		// those in a stable order would link a string sort into the
		// WebAssembly build (1.3 KB gzip) for an author's message.
		return fmt.Errorf("a predicate has exactly one key (all, any, not, key, object, compacted, exchange, sequence or detected), not %d", len(m))
	}
	*p = Predicate{raw: append(json.RawMessage(nil), data...)}
	for k, v := range m {
		var err error
		switch k {
		case "all":
			err = strict(v, &p.all)
			if err == nil && len(p.all) == 0 {
				err = errors.New("all: needs predicates")
			}
		case "any":
			err = strict(v, &p.any)
			if err == nil && len(p.any) == 0 {
				err = errors.New("any: needs predicates")
			}
		case "not":
			err = strict(v, &p.not)
		case "key":
			err = strict(v, &p.key)
			if err == nil && p.key.Key == "" {
				err = errors.New("key: needs a key")
			}
		case "object":
			err = strict(v, &p.object)
			if err == nil && (p.object.Resource == "" || p.object.Name == "") {
				err = errors.New("object: needs resource and name")
			}
			if err == nil && (p.object.FieldManager == "") != (p.object.ManagesField == "") {
				err = errors.New("object: fieldManager and managesField go together")
			}
		case "compacted":
			err = strict(v, &p.compacted)
		case "exchange":
			err = strict(v, &p.exchange)
			if err == nil {
				err = p.exchange.check()
			}
		case "sequence":
			err = strict(v, &p.sequence)
			if err == nil && len(p.sequence.Steps) == 0 {
				err = errors.New("sequence: needs steps")
			}
			for i := range p.sequence.Steps {
				if err == nil {
					err = p.sequence.Steps[i].check()
				}
			}
		case "detected":
			err = strict(v, &p.detected)
			if err == nil && DetectorNamed(p.detected.Name) == nil {
				err = fmt.Errorf("no detector %q (known: %s)", p.detected.Name, strings.Join(DetectorNames(), ", "))
			}
		default:
			return fmt.Errorf("unknown predicate %q", k)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// MarshalJSON writes the predicate as it was read.
func (p *Predicate) MarshalJSON() ([]byte, error) {
	if p.raw == nil {
		return []byte("null"), nil
	}
	return p.raw, nil
}

func strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// Result is the outcome of evaluating a predicate: Passed, or the first
// part that did not hold (Unmet, a path such as "all[1].exchange").
type Result struct {
	Passed bool   `json:"passed"`
	Unmet  string `json:"unmet,omitempty"`
}

// Eval evaluates p against state.
func (p *Predicate) Eval(st *State) (Result, error) {
	ok, where, err := p.eval(st)
	if err != nil {
		return Result{}, err
	}
	if ok {
		return Result{Passed: true}, nil
	}
	return Result{Unmet: where}, nil
}

func (p *Predicate) eval(st *State) (bool, string, error) {
	switch {
	case p.all != nil:
		for i, q := range p.all {
			ok, where, err := q.eval(st)
			if err != nil || !ok {
				return false, fmt.Sprintf("all[%d].%s", i, where), err
			}
		}
		return true, "", nil
	case p.any != nil:
		for _, q := range p.any {
			ok, _, err := q.eval(st)
			if err != nil {
				return false, "any", err
			}
			if ok {
				return true, "", nil
			}
		}
		return false, "any", nil
	case p.not != nil:
		ok, _, err := p.not.eval(st)
		return !ok && err == nil, "not", err
	case p.key != nil:
		ok, err := p.key.eval(st)
		return ok, "key " + p.key.Key, err
	case p.object != nil:
		ok, err := p.object.eval(st)
		return ok, "object " + p.object.Resource + "/" + p.object.Name, err
	case p.compacted != nil:
		return (st.Store.CompactRev() > 0) == *p.compacted, "compacted", nil
	case p.exchange != nil:
		n := p.exchange.Count
		if n < 1 {
			n = 1
		}
		found := 0
		for i := range st.Exchanges {
			if st.inScope(i) && p.exchange.matches(st, i) {
				found++
			}
		}
		return found >= n, "exchange", nil
	case p.sequence != nil:
		return p.sequence.eval(st), "sequence", nil
	case p.detected != nil:
		for _, f := range DetectorNamed(p.detected.Name).Find(st.Exchanges) {
			if st.inScope(f.Index) && (p.detected.Client == "" || st.Exchanges[f.Index].Client == p.detected.Client) {
				return true, "", nil
			}
		}
		return false, "detected " + p.detected.Name, nil
	}
	return false, "empty predicate", errors.New("empty predicate")
}

func (s *Sequence) eval(st *State) bool {
	var try func(step, from int, who string) bool
	try = func(step, from int, who string) bool {
		if step == len(s.Steps) {
			return true
		}
		for i := from; i < len(st.Exchanges); i++ {
			e := &st.Exchanges[i]
			if !st.inScope(i) || (s.SameClient && who != "" && e.Who() != who) {
				continue
			}
			if !s.Steps[step].matches(st, i) {
				continue
			}
			w := who
			if w == "" {
				w = e.Who()
			}
			if !s.SameClient {
				w = ""
			}
			if try(step+1, i+1, w) {
				return true
			}
		}
		return false
	}
	return try(0, 0, "")
}
