package kube

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// ListOptions are metav1.ListOptions (for list and watch).
type ListOptions struct {
	LabelSelector        string
	FieldSelector        string
	ResourceVersion      string
	ResourceVersionMatch string
	Limit                int64
	Continue             string
	Watch                bool
	AllowWatchBookmarks  bool
	SendInitialEvents    *bool
	TimeoutSeconds       *int64
}

const (
	MatchExact        = "Exact"
	MatchNotOlderThan = "NotOlderThan"
)

// ValidateListOptions is kube's ListOptions validation (422).
func ValidateListOptions(lo *ListOptions) error {
	var errs []FieldError
	match := lo.ResourceVersionMatch
	if lo.Watch {
		if lo.SendInitialEvents != nil && match != MatchNotOlderThan {
			errs = append(errs, FieldError{Type: CauseFieldValueForbidden, Field: "resourceVersionMatch", Detail: "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"})
		}
		if match != "" {
			if lo.SendInitialEvents == nil {
				errs = append(errs, FieldError{Type: CauseFieldValueForbidden, Field: "resourceVersionMatch", Detail: "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"})
			}
			if match != MatchNotOlderThan {
				errs = append(errs, FieldError{Type: CauseFieldValueNotSupported, Field: "resourceVersionMatch", Value: match, Detail: `supported values: "NotOlderThan"`})
			}
			if lo.Continue != "" {
				errs = append(errs, FieldError{Type: CauseFieldValueForbidden, Field: "resourceVersionMatch", Detail: "resourceVersionMatch is forbidden when continue is provided"})
			}
		}
	} else {
		if match != "" {
			if lo.ResourceVersion == "" {
				errs = append(errs, FieldError{Type: CauseFieldValueForbidden, Field: "resourceVersionMatch", Detail: "resourceVersionMatch is forbidden unless resourceVersion is provided"})
			}
			if lo.Continue != "" {
				errs = append(errs, FieldError{Type: CauseFieldValueForbidden, Field: "resourceVersionMatch", Detail: "resourceVersionMatch is forbidden when continue is provided"})
			}
			if match != MatchExact && match != MatchNotOlderThan {
				errs = append(errs, FieldError{Type: CauseFieldValueNotSupported, Field: "resourceVersionMatch", Value: match, Detail: `supported values: "Exact", "NotOlderThan", ""`})
			}
			if match == MatchExact && lo.ResourceVersion == "0" {
				errs = append(errs, FieldError{Type: CauseFieldValueForbidden, Field: "resourceVersionMatch", Detail: `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`})
			}
		}
		if lo.SendInitialEvents != nil {
			errs = append(errs, FieldError{Type: CauseFieldValueForbidden, Field: "sendInitialEvents", Detail: "sendInitialEvents is forbidden for list"})
		}
	}
	if len(errs) > 0 {
		return NewInvalid("meta.k8s.io", "ListOptions", "", errs)
	}
	return nil
}

// newMatcher parses the selectors (400 on error). Whether the resource
// supports the selected fields is checked later, by checkFields, after the
// ListOptions validation: kube-apiserver's handler decodes the query, then
// validates it (422), then converts the field labels (400).
func newMatcher(r *Resource, lo *ListOptions) (*matcher, error) {
	m := &matcher{r: r}
	if lo.LabelSelector != "" {
		ls, err := ParseLabelSelector(lo.LabelSelector)
		if err != nil {
			return nil, NewBadRequest(err.Error())
		}
		m.labels = ls
	}
	if lo.FieldSelector != "" {
		fs, err := ParseFieldSelector(lo.FieldSelector)
		if err != nil {
			return nil, NewBadRequest(err.Error())
		}
		m.fields = fs
	}
	return m, nil
}

// admitListOptions checks a list's or watch's options in kube-apiserver's
// order: the selectors' syntax (400), the ListOptions rules (422), then
// whether the resource supports the selected fields (400).
func admitListOptions(r *Resource, lo *ListOptions) (*matcher, error) {
	m, err := newMatcher(r, lo)
	if err != nil {
		return nil, err
	}
	if err := ValidateListOptions(lo); err != nil {
		return nil, err
	}
	if err := m.checkFields(); err != nil {
		return nil, err
	}
	return m, nil
}

// checkFields refuses field selectors the resource does not support (400).
func (m *matcher) checkFields() error {
	if m.fields == nil {
		return nil
	}
	if err := m.r.checkFieldSelector(m.fields); err != nil {
		return NewBadRequest(err.Error())
	}
	return nil
}

// List is a list answer. Items read from storage are kept as JSON (raw)
// until someone asks for Objects.
type List struct {
	Kind       string
	APIVersion string
	Metadata   ListMeta
	Items      []Object
	Resource   *Resource

	raw [][]byte // items as kube encodes them in a list, when read from storage
}

// Len is the number of items.
func (l *List) Len() int {
	if l.raw != nil {
		return len(l.raw)
	}
	return len(l.Items)
}

// Objects returns the items as objects.
func (l *List) Objects() []Object {
	if l.raw != nil && l.Items == nil {
		l.Items = make([]Object, 0, len(l.raw))
		for _, b := range l.raw {
			if o, err := DecodeObject(b); err == nil {
				l.Items = append(l.Items, o)
			}
		}
	}
	return l.Items
}

// Encode renders the list as kube-apiserver does for built-in types:
// items without kind and apiVersion, never a null items.
func (l *List) Encode() []byte {
	if l.Resource != nil && l.Resource.Custom() {
		return l.encodeUnstructured()
	}
	var b bytes.Buffer
	b.WriteString(`{"kind":`)
	writeJSON(&b, l.Kind)
	b.WriteString(`,"apiVersion":`)
	writeJSON(&b, l.APIVersion)
	b.WriteString(`,"metadata":`)
	writeJSON(&b, l.Metadata)
	b.WriteString(`,"items":[`)
	if l.raw != nil {
		for i, it := range l.raw {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(it)
		}
		b.WriteString("]}")
		return b.Bytes()
	}
	for i, it := range l.Items {
		if i > 0 {
			b.WriteByte(',')
		}
		k, a := it["kind"], it["apiVersion"]
		delete(it, "kind")
		delete(it, "apiVersion")
		if l.Resource != nil {
			b.Write(l.Resource.Encode(it))
		} else {
			b.Write(EncodeObject(it, nil))
		}
		if k != nil {
			it["kind"] = k
		}
		if a != nil {
			it["apiVersion"] = a
		}
	}
	b.WriteString("]}")
	return b.Bytes()
}

// encodeUnstructured renders a list of custom resources as kube's
// unstructured lists are: keys in sorted order, items with their kind and
// apiVersion, continue always in the metadata.
func (l *List) encodeUnstructured() []byte {
	var b bytes.Buffer
	b.WriteString(`{"apiVersion":`)
	writeJSON(&b, l.APIVersion)
	b.WriteString(`,"items":[`)
	for i := range max(len(l.raw), len(l.Items)) {
		if i > 0 {
			b.WriteByte(',')
		}
		if l.raw != nil {
			b.Write(l.raw[i])
		} else {
			b.Write(l.Resource.Encode(l.Items[i]))
		}
	}
	b.WriteString(`],"kind":`)
	writeJSON(&b, l.Kind)
	b.WriteString(`,"metadata":{"continue":`)
	writeJSON(&b, l.Metadata.Continue)
	if n := l.Metadata.RemainingItemCount; n != nil {
		b.WriteString(`,"remainingItemCount":`)
		writeJSON(&b, *n)
	}
	b.WriteString(`,"resourceVersion":`)
	writeJSON(&b, l.Metadata.ResourceVersion)
	b.WriteString("}}")
	return b.Bytes()
}

// continueToken is kube's continue token (storage.continueToken).
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

var (
	errInvalidStartRV = errors.New("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	errEmptyStartKey  = errors.New("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)")
)

// decodeContinue is storage.DecodeContinue.
func decodeContinue(token, keyPrefix string) (string, int64, error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, fmt.Errorf("continue key is not valid: %v", err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, fmt.Errorf("continue key is not valid: %v", err)
	}
	switch c.APIVersion {
	case "meta.k8s.io/v1":
		if c.ResourceVersion == 0 {
			return "", 0, errInvalidStartRV
		}
		if len(c.StartKey) == 0 {
			return "", 0, errEmptyStartKey
		}
		key := c.StartKey
		if !strings.HasPrefix(key, "/") {
			key = "/" + key
		}
		cleaned := path.Clean(key)
		if cleaned != key {
			return "", 0, fmt.Errorf("continue key is not valid: %s", c.StartKey)
		}
		return keyPrefix + cleaned[1:], c.ResourceVersion, nil
	default:
		return "", 0, fmt.Errorf("continue key is not valid: server does not recognize this encoded version %q", c.APIVersion)
	}
}

// encodeContinue is storage.EncodeContinue.
func encodeContinue(key, keyPrefix string, rv int64) (string, error) {
	nextKey := strings.TrimPrefix(key, keyPrefix)
	if nextKey == key {
		return "", fmt.Errorf("unable to encode next field: the key and key prefix do not match")
	}
	out, err := json.Marshal(&continueToken{APIVersion: "meta.k8s.io/v1", ResourceVersion: rv, StartKey: nextKey})
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(out), nil
}

const (
	expiredListMsg     = "The resourceVersion for the provided list is too old."
	expiredContinueMsg = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter."
	inconsistentMsg    = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."
)

// List lists a resource in namespace ns ("" for all namespaces or a
// cluster-scoped resource) with kube's resourceVersion semantics. With the
// watch cache on, the lists kube-apiserver's cache serves (resourceVersion
// "0", NotOlderThan, consistent lists, and exact revisions and continue
// tokens it still holds a snapshot of) come from it (cache_read.go); the
// others, and all of them with the cache off, read the store.
func (reg *Registry) List(ctx context.Context, r *Resource, ns string, lo ListOptions) (*List, error) {
	if err := reg.bootstrap(ctx); err != nil {
		return nil, err
	}
	lo.Watch = false
	m, err := admitListOptions(r, &lo)
	if err != nil {
		return nil, err
	}
	prefix := r.Prefix(ns)
	q, err := parseListQuery(lo, prefix)
	if err != nil {
		return nil, err
	}
	name, single := m.singleName()
	single = single && lo.Continue == "" && (ns != "" || !r.Namespaced)
	if c := reg.cacherFor(r); c != nil {
		var l *List
		var served bool
		if single {
			l, served, err = reg.getListCached(ctx, c, r, ns, name, m, q)
		} else {
			l, served, err = reg.listCached(ctx, c, r, prefix, m, q)
		}
		if served {
			return l, err
		}
	}
	if single && !q.any {
		return reg.listOne(ctx, r, ns, name, m, q)
	}
	readRev, limit := q.withRev, q.limit
	if q.any {
		// The cache off: "0" is still read whole, lagging (anyread.go).
		readRev, limit = reg.anyRev(), 0
	}
	cur := reg.kv.Rev()
	if q.withRev > cur {
		return nil, NewTooLargeResourceVersion(q.withRev, cur, 0)
	}
	if q.minRV > cur {
		return nil, NewTooLargeResourceVersion(q.minRV, cur, 0)
	}
	items, rev, next, remaining, err := reg.rangeList(ctx, r, m, prefix, q.startKey, readRev, limit)
	if err != nil && q.any && isCompacted(err) {
		items, rev, next, remaining, err = reg.rangeList(ctx, r, m, prefix, q.startKey, 0, 0)
	}
	if err != nil {
		if isCompacted(err) {
			if lo.Continue != "" {
				tok, terr := encodeContinue(q.startKey, prefix, -1)
				if terr != nil {
					return nil, NewExpired(expiredContinueMsg)
				}
				se := NewExpired(inconsistentMsg)
				se.Status.Metadata.Continue = tok
				return nil, se
			}
			return nil, NewExpired(expiredListMsg)
		}
		if isFutureRev(err) {
			return nil, NewTooLargeResourceVersion(q.withRev, reg.kv.Rev(), 0)
		}
		return nil, err
	}
	return newList(r, m, items, rev, next, remaining), nil
}

// listQuery is what a list's options ask of the store (etcd3's
// ValidateListOptions).
type listQuery struct {
	startKey string
	// withRev is the exact revision to read (Exact, a limit with a
	// resourceVersion, a continue token's), 0 for the latest.
	withRev int64
	// minRV is the revision the answer must not be older than.
	minRV int64
	// consistent: no resourceVersion (or a continue token's -1).
	consistent bool
	// any: resourceVersion "0".
	any bool
	// zero: resourceVersion "0", with a continue token too (tolerated
	// there; the cache then still ignores the limit).
	zero  bool
	exact bool // resourceVersionMatch=Exact
	limit int64
}

func parseListQuery(lo ListOptions, prefix string) (listQuery, error) {
	q := listQuery{startKey: prefix, limit: max(lo.Limit, 0), zero: lo.ResourceVersion == "0"}
	if lo.Continue != "" {
		key, crv, err := decodeContinue(lo.Continue, prefix)
		if err != nil {
			return q, NewBadRequest("invalid continue token: " + err.Error())
		}
		if lo.ResourceVersion != "" && lo.ResourceVersion != "0" {
			return q, NewBadRequest("specifying resource version is not allowed when using continue")
		}
		q.startKey = key
		if crv > 0 {
			q.withRev = crv
		} else {
			q.consistent = true
		}
		return q, nil
	}
	if lo.ResourceVersion == "" {
		q.consistent = true
		return q, nil
	}
	rv, err := parseRV(lo.ResourceVersion)
	if err != nil {
		return q, NewBadRequest("invalid resource version: " + err.Error())
	}
	switch {
	case rv == 0:
		q.any = true
	case lo.ResourceVersionMatch == MatchExact:
		q.withRev, q.exact = rv, true
	case lo.ResourceVersionMatch == "" && q.limit > 0:
		q.withRev = rv
	default:
		q.minRV = rv
	}
	return q, nil
}

// newList is a list answer of items (as list items) read at rev.
func newList(r *Resource, m *matcher, items [][]byte, rev int64, next string, remaining int64) *List {
	l := &List{Kind: r.ListKind, APIVersion: r.GroupVersion(), Resource: r, raw: items}
	l.Metadata.ResourceVersion = formatRV(rev)
	if next != "" {
		l.Metadata.Continue = next
		if m.empty() {
			l.Metadata.RemainingItemCount = &remaining
		}
	}
	return l
}

// singleName is the name a field selector pins the list to, if it does
// (metadata.name=<name>): kube's SelectionPredicate.MatchesSingle.
func (m *matcher) singleName() (string, bool) {
	for _, t := range m.fields {
		if t.Field == "metadata.name" && !t.Not {
			return t.Value, true
		}
	}
	return "", false
}

// listOne answers a list whose field selector names one object the way
// kube's generic registry does: as a read of that one key (a
// non-recursive GetList), so there are no pages, and a resourceVersion
// without resourceVersionMatch=Exact means "not older than", limit or not.
func (reg *Registry) listOne(ctx context.Context, r *Resource, ns, name string, m *matcher, q listQuery) (*List, error) {
	var withRev, minRV int64
	if q.exact {
		withRev = q.withRev
	} else {
		minRV = max(q.minRV, q.withRev)
	}
	if cur := reg.kv.Rev(); withRev > cur {
		return nil, NewTooLargeResourceVersion(withRev, cur, 0)
	}
	resp, err := reg.kv.Range(ctx, &mvcc.RangeRequest{Key: []byte(r.Key(ns, name)), Revision: withRev})
	if err != nil {
		if isCompacted(err) {
			return nil, NewExpired(expiredListMsg)
		}
		if isFutureRev(err) {
			return nil, NewTooLargeResourceVersion(withRev, reg.kv.Rev(), 0)
		}
		return nil, err
	}
	rev := withRev
	if rev == 0 {
		rev = resp.Header.Revision
	}
	if minRV > rev {
		return nil, NewTooLargeResourceVersion(minRV, rev, 0)
	}
	items := [][]byte{}
	for _, kv := range resp.Kvs {
		item, ok, err := listItem(r, m, kv)
		if err != nil {
			return nil, err
		}
		if ok {
			items = append(items, item)
		}
	}
	return newList(r, m, items, rev, "", 0), nil
}

// rangeList reads [startKey, end of prefix) at rev (0: latest), keeping
// objects that match, up to limit (0: all). It returns the items, the
// revision read at, a continue token and the number of keys left.
func (reg *Registry) rangeList(ctx context.Context, r *Resource, m *matcher, prefix, startKey string, rev, limit int64) ([][]byte, int64, string, int64, error) {
	items := [][]byte{}
	end := prefixEnd([]byte(prefix))
	key := []byte(startKey)
	batch := limit
	var count int64 = -1
	var lastKey []byte
	hasMore := false
	for {
		resp, err := reg.kv.Range(ctx, &mvcc.RangeRequest{Key: key, RangeEnd: end, Revision: rev, Limit: batch})
		if err != nil {
			return nil, 0, "", 0, err
		}
		if rev == 0 {
			// pin every further batch to the first one's revision
			rev = resp.Header.Revision
		}
		if count < 0 {
			count = resp.Count
		}
		full := false
		for i, kv := range resp.Kvs {
			lastKey = kv.Key
			item, ok, err := listItem(r, m, kv)
			if err != nil {
				return nil, 0, "", 0, err
			}
			if !ok {
				continue
			}
			items = append(items, item)
			if limit > 0 && int64(len(items)) >= limit {
				hasMore = i < len(resp.Kvs)-1 || resp.More
				full = true
				break
			}
		}
		if full || !resp.More || len(resp.Kvs) == 0 {
			break
		}
		key = append(append([]byte(nil), lastKey...), 0)
		if batch < 10000 {
			batch *= 2
		}
	}
	if !hasMore {
		return items, rev, "", 0, nil
	}
	next, err := encodeContinue(string(lastKey)+"\x00", prefix, rev)
	if err != nil {
		return nil, 0, "", 0, err
	}
	return items, rev, next, count - limit, nil
}

// listItem renders a stored object as a list item (no kind and
// apiVersion) if it matches m.
func listItem(r *Resource, m *matcher, kv *mvcc.KeyValue) ([]byte, bool, error) {
	kv = r.served(kv)
	if m.empty() {
		b, err := itemJSON(r, kv)
		return b, err == nil, err
	}
	o, err := decodeKV(kv)
	if err != nil {
		return nil, false, err
	}
	if !m.matches(o) {
		return nil, false, nil
	}
	b, err := itemJSON(r, kv)
	return b, err == nil, err
}

// itemJSON renders a stored object as a list item: no kind and
// apiVersion (except in the unstructured lists of custom resources), its
// resourceVersion set.
func itemJSON(r *Resource, kv *mvcc.KeyValue) ([]byte, error) {
	dropTypeMeta := !r.Custom()
	if b, ok := spliceRV(kv.Value, formatRV(kv.ModRevision), dropTypeMeta); ok {
		return b, nil
	}
	o, err := decodeKV(kv)
	if err != nil {
		return nil, err
	}
	if dropTypeMeta {
		delete(o, "kind")
		delete(o, "apiVersion")
	}
	return r.Encode(o), nil
}
