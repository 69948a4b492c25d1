package kube

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// Options configure a Registry.
type Options struct {
	// Clock is the time source (default: the wall clock).
	Clock Clock
	// NewUID makes metadata.uid values (default: random UUIDv4).
	NewUID func() string
	// FieldManager keeps managedFields for Update operations (default:
	// the built-in one).
	FieldManager FieldManager
	// Applier is server-side apply (default: SchemaApplier).
	Applier Applier
	// Patcher applies json, merge and strategic patches (default:
	// SchemaPatcher).
	Patcher Patcher
	// WatchCacheDelay makes resourceVersion "0" reads see the store as it
	// was this long ago (a lagging watch cache). 0: no lag.
	WatchCacheDelay time.Duration
	// BookmarkInterval is how often a watch with allowWatchBookmarks gets a
	// BOOKMARK (default one minute, as kube-apiserver).
	BookmarkInterval time.Duration
	// MinRequestTimeout bounds watches without timeoutSeconds (default
	// 1800 s).
	MinRequestTimeout time.Duration
	// SystemNamespaces are created before the first Kubernetes request;
	// nil means default, kube-system, kube-public and kube-node-lease.
	SystemNamespaces []string
}

// Registry is a session's registry of resources: what kube-apiserver's
// storage registry (genericregistry.Store) does for each resource of the
// table, over one KV store. The HTTP side is package kubeapi's. It is safe
// for concurrent use.
type Registry struct {
	kv      KV
	clock   Clock
	newUID  func() string
	fm      FieldManager
	applier Applier
	patcher Patcher

	cacheDelay       atomic.Int64 // time.Duration
	bookmarkInterval atomic.Int64 // time.Duration
	minTimeout       time.Duration
	systemNS         []string

	bootMu sync.Mutex
	booted atomic.Bool

	revMu   sync.Mutex
	revLog  *revisionLog
	revStop context.CancelFunc

	events eventLines
}

// New returns a Registry over kv.
func New(kv KV, o Options) *Registry {
	s := &Registry{kv: kv, clock: o.Clock, newUID: o.NewUID, fm: o.FieldManager,
		applier: o.Applier, patcher: o.Patcher, minTimeout: o.MinRequestTimeout, systemNS: o.SystemNamespaces}
	if s.clock == nil {
		s.clock = RealClock{}
	}
	if s.applier == nil {
		s.applier = SchemaApplier{}
	}
	if s.patcher == nil {
		s.patcher = SchemaPatcher{}
	}
	if s.newUID == nil {
		s.newUID = randomUID
	}
	if s.fm == nil {
		s.fm = SchemaFieldManager{}
	}
	if s.minTimeout == 0 {
		s.minTimeout = 1800 * time.Second
	}
	if s.systemNS == nil {
		s.systemNS = []string{"default", "kube-system", "kube-public", "kube-node-lease"}
	}
	bi := o.BookmarkInterval
	if bi == 0 {
		bi = time.Minute
	}
	s.bookmarkInterval.Store(int64(bi))
	if o.WatchCacheDelay > 0 {
		s.SetWatchCacheDelay(o.WatchCacheDelay)
	}
	return s
}

// KV is the store the registry runs over.
func (reg *Registry) KV() KV { return reg.kv }

// Clock is the registry's time source.
func (reg *Registry) Clock() Clock { return reg.clock }

// SetPatcher and SetApplier plug in the patch and apply implementations.
func (reg *Registry) SetPatcher(p Patcher) { reg.patcher = p }
func (reg *Registry) SetApplier(a Applier) { reg.applier = a }

// SetFieldManager replaces the field manager for Update operations.
func (reg *Registry) SetFieldManager(f FieldManager) { reg.fm = f }

// CanPatch reports whether a patch type ("json", "merge", "strategic",
// "apply") is implemented.
func (reg *Registry) CanPatch(patchType string) bool {
	if patchType == "apply" {
		return reg.applier != nil
	}
	return reg.patcher != nil
}

// SetBookmarkInterval changes the interval of watch bookmarks.
func (reg *Registry) SetBookmarkInterval(d time.Duration) {
	if d > 0 {
		reg.bookmarkInterval.Store(int64(d))
	}
}

// BookmarkInterval is the interval of watch bookmarks.
func (reg *Registry) BookmarkInterval() time.Duration {
	return time.Duration(reg.bookmarkInterval.Load())
}

// WatchCacheDelay is the lag of resourceVersion "0" reads.
func (reg *Registry) WatchCacheDelay() time.Duration { return time.Duration(reg.cacheDelay.Load()) }

func randomUID() string {
	// math/rand/v2's generator is seeded from the OS and is unpredictable
	// enough for UIDs; crypto/rand would add 55 KB gzip to the browser build.
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], mrand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], mrand.Uint64())
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (reg *Registry) now() time.Time { return reg.clock.Now().UTC().Truncate(time.Second) }

func (reg *Registry) timestamp() string { return reg.now().Format(time.RFC3339) }

// Bootstrap creates the system namespaces, as kube-apiserver does when it
// starts; it is idempotent and cheap once done. The registry calls it before
// every operation, and the REST layer before any Kubernetes request
// (discovery included), so that a session used only through the etcd
// gateway stays an empty etcd while one used as a cluster has them before
// its first answer.
func (reg *Registry) Bootstrap(ctx context.Context) error { return reg.bootstrap(ctx) }

func (reg *Registry) bootstrap(ctx context.Context) error {
	if reg.booted.Load() {
		return nil
	}
	reg.bootMu.Lock()
	defer reg.bootMu.Unlock()
	if reg.booted.Load() {
		return nil
	}
	ns := Lookup("", "v1", "namespaces")
	for _, name := range reg.systemNS {
		o := Object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}
		if _, err := reg.create(ctx, ns, "", o, WriteOptions{FieldManager: "kube-apiserver"}); err != nil {
			var se *StatusError
			if errors.As(err, &se) && se.Status.Reason == ReasonAlreadyExists {
				continue
			}
			return err
		}
	}
	reg.booted.Store(true)
	return nil
}

// WriteOptions are the options of create, update and patch.
type WriteOptions struct {
	// FieldManager names the writer in managedFields (kubeapi fills it
	// from ?fieldManager or the User-Agent).
	FieldManager string
	// DryRun validates without storing.
	DryRun bool

	// Encoded, when set, receives the JSON of the answer (the stored bytes
	// with their resourceVersion), which saves the REST layer encoding the
	// object again. It is left nil when the answer must be encoded.
	Encoded *[]byte

	// keepManagedFields: the object's managedFields were computed by
	// server-side apply.
	keepManagedFields bool
}

// --- storage helpers ------------------------------------------------------

// decodeKV turns a stored key-value into an object whose resourceVersion
// is the key's mod_revision.
func decodeKV(kv *mvcc.KeyValue) (Object, error) {
	o, err := DecodeObject(kv.Value)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %v", kv.Key, err)
	}
	meta(o)["resourceVersion"] = formatRV(kv.ModRevision)
	return o, nil
}

// storageBytes is what is stored: the object without resourceVersion.
func storageBytes(r *Resource, o Object) []byte {
	m := meta(o)
	rv, had := m["resourceVersion"]
	delete(m, "resourceVersion")
	b := r.Encode(o)
	if had {
		m["resourceVersion"] = rv
	}
	return b
}

func (reg *Registry) get(ctx context.Context, key string, rev int64) (*mvcc.KeyValue, int64, error) {
	resp, err := reg.kv.Range(ctx, &mvcc.RangeRequest{Key: []byte(key), Revision: rev})
	if err != nil {
		return nil, 0, err
	}
	if len(resp.Kvs) == 0 {
		return nil, resp.Header.Revision, nil
	}
	return resp.Kvs[0], resp.Header.Revision, nil
}

func (reg *Registry) namespaceExists(ctx context.Context, ns string) (bool, error) {
	kv, _, err := reg.get(ctx, "/registry/namespaces/"+ns, 0)
	return kv != nil, err
}

// --- create ---------------------------------------------------------------

const generateNameChars = "bcdfghjklmnpqrstvwxz2456789"

func generateName(base string) string {
	if len(base) > 58 {
		base = base[:58]
	}
	b := make([]byte, 5)
	for i := range b {
		b[i] = generateNameChars[mrand.IntN(len(generateNameChars))]
	}
	return base + string(b)
}

// Create stores a new object (POST on a collection).
func (reg *Registry) Create(ctx context.Context, r *Resource, ns string, obj Object, o WriteOptions) (Object, error) {
	if err := reg.bootstrap(ctx); err != nil {
		return nil, err
	}
	return reg.create(ctx, r, ns, obj, o)
}

func (reg *Registry) create(ctx context.Context, r *Resource, ns string, obj Object, o WriteOptions) (Object, error) {
	obj = copyObject(obj)
	m := meta(obj)
	if r.Namespaced {
		if bns := str(m, "namespace"); bns != "" && bns != ns {
			return nil, NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		m["namespace"] = ns
		if ok, err := reg.namespaceExists(ctx, ns); err != nil {
			return nil, err
		} else if !ok {
			return nil, NewNotFound("", "namespaces", ns)
		}
	} else {
		delete(m, "namespace")
	}
	obj["kind"], obj["apiVersion"] = r.Kind, r.GroupVersion()
	generated := str(m, "name") == "" && str(m, "generateName") != ""
	for attempt := 0; ; attempt++ {
		if generated {
			m["name"] = generateName(str(m, "generateName"))
		}
		out, err := reg.createOnce(ctx, r, obj, o)
		var se *StatusError
		if generated && attempt < 7 && errors.As(err, &se) && se.Status.Reason == ReasonAlreadyExists {
			continue
		}
		return out, err
	}
}

func (reg *Registry) createOnce(ctx context.Context, r *Resource, obj Object, o WriteOptions) (Object, error) {
	obj = copyObject(obj)
	m := meta(obj)
	name := str(m, "name")
	ns := str(m, "namespace")
	if r.Default != nil {
		r.Default(obj)
	}
	// rest.BeforeCreate: system fields are the server's.
	m["uid"] = reg.newUID()
	now := reg.now()
	m["creationTimestamp"] = now.Format(time.RFC3339)
	for _, k := range []string{"deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"} {
		delete(m, k)
	}
	if r.Generation != NoGeneration {
		m["generation"] = jsonInt(1)
	} else {
		delete(m, "generation")
	}
	if r.PrepareForCreate != nil {
		r.PrepareForCreate(obj)
	}
	r.normalize(obj)
	errs := validateObjectMeta(obj, r.validateName)
	if r.Validate != nil {
		errs = append(errs, r.Validate(obj)...)
	}
	if len(errs) > 0 {
		return nil, NewInvalid(r.Group, r.Kind, name, errs)
	}
	// etcd3 store.Create: a numeric non-zero resourceVersion is refused
	// with a plain (500) error; "0" and unparsable values pass.
	if rv := str(m, "resourceVersion"); rv != "" {
		if v, err := strconv.ParseUint(rv, 10, 64); err == nil && v != 0 {
			return nil, errors.New("resourceVersion should not be set on objects to be created")
		}
	}
	delete(m, "resourceVersion")
	if !o.keepManagedFields {
		if err := reg.updateManagedFields(r, nil, obj, o.FieldManager, "", byCreate, now); err != nil {
			return nil, err
		}
	}
	key := r.Key(ns, name)
	if o.DryRun {
		kv, _, err := reg.get(ctx, key, 0)
		if err != nil {
			return nil, err
		}
		if kv != nil {
			return nil, NewAlreadyExists(r.Group, r.Resource, name)
		}
		return obj, nil
	}
	data := storageBytes(r, obj)
	if err := checkEtcdRequest(key, data); err != nil {
		// kube-apiserver's create tries once more without managedFields;
		// an apply's create does not.
		if _, had := m["managedFields"]; !had || o.keepManagedFields {
			return nil, err
		}
		delete(m, "managedFields")
		if data = storageBytes(r, obj); checkEtcdRequest(key, data) != nil {
			return nil, err
		}
	}
	resp, err := reg.kv.Txn(ctx, &mvcc.TxnRequest{
		Compare: []mvcc.Compare{{Target: mvcc.CompareCreate, Result: mvcc.CompareEqual, Key: []byte(key), CreateRevision: 0}},
		Success: []mvcc.RequestOp{{Put: &mvcc.PutRequest{Key: []byte(key), Value: data}}},
	})
	if err != nil {
		return nil, quotaExceeded(r, name, err)
	}
	if !resp.Succeeded {
		return nil, NewAlreadyExists(r.Group, r.Resource, name)
	}
	m["resourceVersion"] = formatRV(resp.Header.Revision)
	reg.wrote(resp.Header.Revision)
	setEncoded(o.Encoded, data, resp.Header.Revision)
	return obj, nil
}

func jsonInt(i int64) any { return jsonNumber(strconv.FormatInt(i, 10)) }

// --- get ------------------------------------------------------------------

// Get reads one object. rv "" reads the latest state, "0" the watch cache
// (possibly stale), "N" the latest state provided the store is at N or
// later (else 504).
func (reg *Registry) Get(ctx context.Context, r *Resource, ns, name, rv string) (Object, error) {
	kv, err := reg.getKV(ctx, r, ns, name, rv)
	if err != nil {
		return nil, err
	}
	return decodeKV(kv)
}

// getKV is the read of Get and GetJSON.
func (reg *Registry) getKV(ctx context.Context, r *Resource, ns, name, rv string) (*mvcc.KeyValue, error) {
	if err := reg.bootstrap(ctx); err != nil {
		return nil, err
	}
	minRV, err := parseRV(rv)
	if err != nil {
		return nil, NewBadRequest("invalid resource version: " + err.Error())
	}
	readRev := int64(0)
	if rv == "0" {
		readRev = reg.cacheRev()
	}
	kv, cur, err := reg.getCached(ctx, r.Key(ns, name), readRev)
	if err != nil {
		return nil, err
	}
	if minRV > cur {
		return nil, NewTooLargeResourceVersion(minRV, cur, 0)
	}
	if kv == nil {
		return nil, NewNotFound(r.Group, r.Resource, name)
	}
	return kv, nil
}

// GetJSON is Get answering the object's JSON as kube-apiserver encodes it.
func (reg *Registry) GetJSON(ctx context.Context, r *Resource, ns, name, rv string) ([]byte, error) {
	kv, err := reg.getKV(ctx, r, ns, name, rv)
	if err != nil {
		return nil, err
	}
	if b, ok := spliceRV(kv.Value, formatRV(kv.ModRevision), false); ok {
		return b, nil
	}
	o, err := decodeKV(kv)
	if err != nil {
		return nil, err
	}
	return r.Encode(o), nil
}

// getCached reads at rev, falling back to the latest revision when rev
// was compacted (a cache keeps its own copy).
func (reg *Registry) getCached(ctx context.Context, key string, rev int64) (*mvcc.KeyValue, int64, error) {
	kv, cur, err := reg.get(ctx, key, rev)
	if err != nil && rev != 0 && isCompacted(err) {
		return reg.get(ctx, key, 0)
	}
	return kv, cur, err
}

func isCompacted(err error) bool {
	var me *mvcc.Error
	return errors.As(err, &me) && me.Message == mvcc.ErrCompacted.Message
}

func isFutureRev(err error) bool {
	var me *mvcc.Error
	return errors.As(err, &me) && me.Message == mvcc.ErrFutureRev.Message
}

// --- update ---------------------------------------------------------------

// guaranteedUpdate is etcd3's GuaranteedUpdate: read, transform, write
// with a mod_revision compare, and retry on a concurrent write. A
// transform result identical to what is stored is a no-op (no write, same
// resourceVersion). An object left with a deletionTimestamp and no
// finalizers is deleted.
//
// A put above etcd's request limit fails as etcd fails it; with shed (a
// non-apply patch) it is tried once more without managedFields, as
// kube-apiserver does.
func (reg *Registry) guaranteedUpdate(ctx context.Context, r *Resource, ns, name string, dryRun, shed bool, enc *[]byte,
	notFound func() (Object, error), transform func(cur Object) (Object, error)) (Object, bool, error) {
	key := r.Key(ns, name)
	for {
		kv, _, err := reg.get(ctx, key, 0)
		if err != nil {
			return nil, false, err
		}
		if kv == nil {
			if notFound != nil {
				o, err := notFound()
				return o, err == nil, err
			}
			return nil, false, NewNotFound(r.Group, r.Resource, name)
		}
		cur, err := decodeKV(kv)
		if err != nil {
			return nil, false, err
		}
		// transform must not modify cur (it is the answer of a no-op)
		nobj, err := transform(cur)
		if err != nil {
			return nil, false, err
		}
		data := storageBytes(r, nobj)
		if bytes.Equal(data, kv.Value) {
			setEncoded(enc, kv.Value, kv.ModRevision)
			return cur, false, nil
		}
		if dryRun {
			return nobj, false, nil
		}
		finalized := str(meta(nobj), "deletionTimestamp") != "" && len(finalizers(nobj)) == 0
		if !finalized {
			if err := checkEtcdRequest(key, data); err != nil {
				m := meta(nobj)
				if _, had := m["managedFields"]; !had || !shed {
					return nil, false, err
				}
				delete(m, "managedFields")
				if data = storageBytes(r, nobj); checkEtcdRequest(key, data) != nil {
					return nil, false, err
				}
			}
		}
		op := mvcc.RequestOp{Put: &mvcc.PutRequest{Key: []byte(key), Value: data}}
		if finalized {
			op = mvcc.RequestOp{DeleteRange: &mvcc.DeleteRangeRequest{Key: []byte(key)}}
		}
		resp, err := reg.kv.Txn(ctx, &mvcc.TxnRequest{
			Compare: []mvcc.Compare{{Target: mvcc.CompareMod, Result: mvcc.CompareEqual, Key: []byte(key), ModRevision: kv.ModRevision}},
			Success: []mvcc.RequestOp{op},
		})
		if err != nil {
			return nil, false, quotaExceeded(r, name, err)
		}
		if !resp.Succeeded {
			continue
		}
		meta(nobj)["resourceVersion"] = formatRV(resp.Header.Revision)
		reg.wrote(resp.Header.Revision)
		if !finalized {
			setEncoded(enc, data, resp.Header.Revision)
		}
		return nobj, false, nil
	}
}

func setEncoded(enc *[]byte, stored []byte, rev int64) {
	if enc == nil {
		return
	}
	if b, ok := spliceRV(stored, formatRV(rev), false); ok {
		*enc = b
	}
}

func finalizers(o Object) []any {
	l, _ := meta(o)["finalizers"].([]any)
	return l
}

// Update replaces an object (PUT), on the main endpoint (sub "") or the
// status subresource (sub "status").
func (reg *Registry) Update(ctx context.Context, r *Resource, ns, name, sub string, obj Object, o WriteOptions) (Object, error) {
	if err := reg.bootstrap(ctx); err != nil {
		return nil, err
	}
	// obj is the caller's: it is only read here, and each attempt of the
	// transform below works on its own copy.
	m, _ := obj["metadata"].(map[string]any)
	if n := str(m, "name"); n != name {
		return nil, NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
	}
	if r.Namespaced {
		if bns := str(m, "namespace"); bns != "" && bns != ns {
			return nil, NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	}
	clientRV, err := parseRV(str(m, "resourceVersion"))
	if err != nil {
		return nil, err
	}
	bodyUID := str(m, "uid")
	out, _, err := reg.guaranteedUpdate(ctx, r, ns, name, o.DryRun, false, o.Encoded, nil, func(cur Object) (Object, error) {
		if err := reg.checkUpdatePreconditions(r, cur, name, bodyUID, clientRV); err != nil {
			return nil, err
		}
		nobj := copyObject(obj)
		nm := meta(nobj)
		if r.Namespaced {
			nm["namespace"] = ns
		} else {
			delete(nm, "namespace")
		}
		nobj["kind"], nobj["apiVersion"] = r.Kind, r.GroupVersion()
		if r.Default != nil && sub == "" {
			r.Default(nobj)
		}
		return reg.prepareUpdate(r, cur, nobj, sub, o.FieldManager, byUpdate)
	})
	return out, err
}

// checkUpdatePreconditions is the storage UID precondition and the
// registry's resourceVersion rule.
func (reg *Registry) checkUpdatePreconditions(r *Resource, cur Object, name, bodyUID string, clientRV int64) error {
	if bodyUID != "" && bodyUID != UID(cur) {
		return NewConflict(r.Group, r.Resource, name, fmt.Sprintf(
			"StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s",
			r.Key(Namespace(cur), name), bodyUID, UID(cur)))
	}
	if clientRV == 0 {
		if !r.AllowUnconditionalUpdate {
			return NewInvalid(r.Group, r.Resource, name, []FieldError{{Type: CauseFieldValueInvalid,
				Field: "metadata.resourceVersion", Value: jsonInt(0), Detail: "must be specified for an update"}})
		}
		return nil
	}
	if formatRV(clientRV) != ResourceVersion(cur) {
		return NewConflict(r.Group, r.Resource, name, OptimisticLockErrorMsg)
	}
	return nil
}

// prepareUpdate is rest.BeforeUpdate with the type's strategy: system
// fields come from the stored object, status (main endpoint) or everything
// but status (status endpoint) is kept, generation moves on spec changes,
// the result is validated and managedFields updated.
func (reg *Registry) prepareUpdate(r *Resource, cur, nobj Object, sub, manager string, by managedBy) (Object, error) {
	cm, nm := meta(cur), meta(nobj)
	if sub == "status" {
		st, has := nobj["status"]
		managed, hasManaged := nm["managedFields"]
		nobj = copyObject(cur)
		if has {
			nobj["status"] = st
		} else {
			delete(nobj, "status")
		}
		nm = meta(nobj)
		if by == byApplier && hasManaged {
			nm["managedFields"] = managed // apply computed them
		}
	} else {
		for _, k := range []string{"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"} {
			if v, ok := cm[k]; ok {
				nm[k] = v
			} else {
				delete(nm, k)
			}
		}
		delete(nm, "selfLink")
		if r.Status {
			if st, ok := cur["status"]; ok {
				nobj["status"] = st
			} else {
				delete(nobj, "status")
			}
		}
	}
	nm["resourceVersion"] = cm["resourceVersion"]
	r.normalize(nobj)
	if sub == "" && r.Generation != NoGeneration {
		g, _ := numberInt(cm["generation"])
		if !jsonEqual(cur["spec"], nobj["spec"]) ||
			r.Generation == SpecAnnotationsGeneration && !jsonEqual(cm["annotations"], nm["annotations"]) {
			nm["generation"] = jsonInt(g + 1)
		}
	}
	errs := validateObjectMeta(nobj, r.validateName)
	if r.Validate != nil {
		errs = append(errs, r.Validate(nobj)...)
	}
	if len(errs) > 0 {
		return nil, NewInvalid(r.Group, r.Kind, Name(nobj), errs)
	}
	if by != byApplier {
		if err := reg.updateManagedFields(r, cur, nobj, manager, sub, by, reg.now()); err != nil {
			return nil, err
		}
	}
	return nobj, nil
}

// --- delete ---------------------------------------------------------------

// Preconditions are DeleteOptions.preconditions.
type Preconditions struct {
	UID             *string `json:"uid,omitempty"`
	ResourceVersion *string `json:"resourceVersion,omitempty"`
}

// DeleteOptions are the options of delete.
type DeleteOptions struct {
	Preconditions      *Preconditions
	GracePeriodSeconds *int64
	PropagationPolicy  string
	DryRun             bool
}

// Delete removes an object. The answer is the deleted object (types that
// return it, or an object kept by finalizers) or a success *Status.
func (reg *Registry) Delete(ctx context.Context, r *Resource, ns, name string, o DeleteOptions) (any, error) {
	if err := reg.bootstrap(ctx); err != nil {
		return nil, err
	}
	if err := admitNamespaceDelete(r, name); err != nil {
		return nil, err
	}
	key := r.Key(ns, name)
	for {
		kv, _, err := reg.get(ctx, key, 0)
		if err != nil {
			return nil, err
		}
		if kv == nil {
			return nil, NewNotFound(r.Group, r.Resource, name)
		}
		cur, err := decodeKV(kv)
		if err != nil {
			return nil, err
		}
		if p := o.Preconditions; p != nil {
			// rest.BeforeDelete names the Kind, not the resource.
			if p.UID != nil && *p.UID != UID(cur) {
				return nil, NewConflict(r.Group, r.Kind, name, fmt.Sprintf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, UID(cur)))
			}
			if p.ResourceVersion != nil && *p.ResourceVersion != ResourceVersion(cur) {
				return nil, NewConflict(r.Group, r.Kind, name, fmt.Sprintf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, ResourceVersion(cur)))
			}
		}
		if len(finalizers(cur)) > 0 {
			// graceful: mark for deletion, the last finalizer removal deletes
			out, _, err := reg.guaranteedUpdate(ctx, r, ns, name, o.DryRun, false, nil, nil, func(c Object) (Object, error) {
				if ResourceVersion(c) != ResourceVersion(cur) {
					return nil, errRetryDelete
				}
				c = copyObject(c)
				cm := meta(c)
				if str(cm, "deletionTimestamp") == "" {
					cm["deletionTimestamp"] = reg.timestamp()
					cm["deletionGracePeriodSeconds"] = jsonInt(0)
					if g, ok := numberInt(cm["generation"]); ok && g > 0 {
						cm["generation"] = jsonInt(g + 1)
					}
				}
				return c, nil
			})
			if err == errRetryDelete {
				continue
			}
			return out, err
		}
		if o.DryRun {
			return reg.deleteAnswer(r, cur), nil
		}
		var ops []mvcc.RequestOp
		ops = append(ops, mvcc.RequestOp{DeleteRange: &mvcc.DeleteRangeRequest{Key: []byte(key)}})
		if r.Resource == "namespaces" {
			// the namespace controller's work, done at once: everything in
			// the namespace goes with it.
			for _, rr := range Resources {
				if rr.Namespaced {
					p := rr.Prefix(name)
					ops = append(ops, mvcc.RequestOp{DeleteRange: &mvcc.DeleteRangeRequest{Key: []byte(p), RangeEnd: prefixEnd([]byte(p))}})
				}
			}
		}
		resp, err := reg.kv.Txn(ctx, &mvcc.TxnRequest{
			Compare: []mvcc.Compare{{Target: mvcc.CompareMod, Result: mvcc.CompareEqual, Key: []byte(key), ModRevision: kv.ModRevision}},
			Success: ops,
		})
		if err != nil {
			return nil, err
		}
		if !resp.Succeeded {
			continue
		}
		meta(cur)["resourceVersion"] = formatRV(resp.Header.Revision)
		reg.wrote(resp.Header.Revision)
		return reg.deleteAnswer(r, cur), nil
	}
}

var errRetryDelete = errors.New("retry delete")

func (reg *Registry) deleteAnswer(r *Resource, cur Object) any {
	if r.ReturnDeletedObject {
		return cur
	}
	return SuccessStatus(r.Group, r.Resource, Name(cur), UID(cur))
}

// DeleteCollection deletes every object the list options select and
// answers with the list of deleted objects.
func (reg *Registry) DeleteCollection(ctx context.Context, r *Resource, ns string, lo ListOptions, o DeleteOptions) (*List, error) {
	l, err := reg.List(ctx, r, ns, lo)
	if err != nil {
		return nil, err
	}
	out := &List{Kind: l.Kind, APIVersion: l.APIVersion, Resource: r, Items: []Object{}}
	for _, it := range l.Objects() {
		d, err := reg.Delete(ctx, r, Namespace(it), Name(it), DeleteOptions{DryRun: o.DryRun, GracePeriodSeconds: o.GracePeriodSeconds})
		if err != nil {
			var se *StatusError
			if errors.As(err, &se) && se.Status.Reason == ReasonNotFound {
				continue
			}
			return nil, err
		}
		if obj, ok := d.(Object); ok {
			out.Items = append(out.Items, obj)
		} else {
			out.Items = append(out.Items, it)
		}
	}
	out.Metadata.ResourceVersion = formatRV(reg.kv.Rev())
	return out, nil
}

// --- scale ----------------------------------------------------------------

// GetScale reads the scale subresource.
func (reg *Registry) GetScale(ctx context.Context, r *Resource, ns, name string) (Object, error) {
	o, err := reg.Get(ctx, r, ns, name, "")
	if err != nil {
		return nil, err
	}
	return scaleOf(o), nil
}

func scaleOf(o Object) Object {
	m := meta(o)
	sm := map[string]any{}
	for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp"} {
		if v, ok := m[k]; ok {
			sm[k] = v
		}
	}
	replicas := pathValue(o, "spec", "replicas")
	if replicas == nil {
		replicas = jsonInt(0)
	}
	statusReplicas := pathValue(o, "status", "replicas")
	if statusReplicas == nil {
		statusReplicas = jsonInt(0)
	}
	st := map[string]any{"replicas": statusReplicas}
	if sel, ok := pathValue(o, "spec", "selector").(map[string]any); ok {
		if ls, err := selectorFromLabelSelector(sel); err == nil {
			st["selector"] = ls.String()
		}
	}
	return Object{"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": sm,
		"spec": map[string]any{"replicas": replicas}, "status": st}
}

// UpdateScale writes spec.replicas through the scale subresource.
func (reg *Registry) UpdateScale(ctx context.Context, r *Resource, ns, name string, scale Object, o WriteOptions) (Object, error) {
	if err := reg.bootstrap(ctx); err != nil {
		return nil, err
	}
	m := meta(scale)
	if n := str(m, "name"); n != name {
		return nil, NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
	}
	clientRV, err := parseRV(str(m, "resourceVersion"))
	if err != nil {
		return nil, err
	}
	replicas, ok := numberInt(pathValue(scale, "spec", "replicas"))
	if !ok {
		replicas = 0
	}
	if replicas < 0 {
		return nil, NewInvalid("autoscaling", "Scale", name, []FieldError{{Type: CauseFieldValueInvalid,
			Field: "spec.replicas", Value: jsonInt(replicas), Detail: "must be greater than or equal to 0"}})
	}
	out, _, err := reg.guaranteedUpdate(ctx, r, ns, name, o.DryRun, false, nil, nil, func(cur Object) (Object, error) {
		if clientRV != 0 && formatRV(clientRV) != ResourceVersion(cur) {
			return nil, NewConflict(r.Group, r.Resource, name, OptimisticLockErrorMsg)
		}
		nobj := copyObject(cur)
		spec, _ := nobj["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
			nobj["spec"] = spec
		}
		spec["replicas"] = jsonInt(replicas)
		if !jsonEqual(cur["spec"], nobj["spec"]) {
			g, _ := numberInt(meta(cur)["generation"])
			meta(nobj)["generation"] = jsonInt(g + 1)
		}
		if err := reg.fm.Update(r, cur, nobj, o.FieldManager, "scale", reg.now()); err != nil {
			return nil, err
		}
		return nobj, nil
	})
	if err != nil {
		return nil, err
	}
	return scaleOf(out), nil
}

func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return []byte{0}
}
