package classload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Namespace is where the class writes and watches: the namespace every
// student shares.
const Namespace = "default"

// updatesPerLife is how many updates an object gets between its creation
// and its deletion, so that the watchers see every kind of event.
const updatesPerLife = 8

type opKind uint8

const (
	opCreate opKind = iota + 1
	opUpdate
	opDelete
)

// eventType is the watch event a write makes.
func (k opKind) eventType() string {
	switch k {
	case opCreate:
		return "ADDED"
	case opUpdate:
		return "MODIFIED"
	}
	return "DELETED"
}

// write is one write a writer sent, acknowledged or not.
type write struct {
	kind opKind
	name string
	// rv is the revision it made: from the answer of a create or update;
	// a delete's (kube answers it with a Status) from the history.
	rv int64
	// sent is when the writer sent it; answered when its answer reached
	// the writer's socket, acked when the writer's goroutine had it.
	sent, answered, acked time.Time
	// uncertain: no answer came (the server died) or a 5xx did, so the
	// write may or may not have been made.
	uncertain bool
}

// object is the state of one of a writer's ConfigMaps as the writer knows it.
type object struct {
	name    string
	exists  bool
	rv      int64
	updates int
}

// writer is a student who writes their own ConfigMaps in the shared
// namespace, one write at a time at a steady pace, each update with the
// resourceVersion of the writer's last write (as kubectl edit does), each
// delete with it as a precondition.
type writer struct {
	// inFlight counts the writes of every writer sent and not yet
	// answered, for a crash that wants some.
	inFlight *atomic.Int64

	cl      *Class
	student Student
	// c is the writer's own client: the arrival of an answer on its
	// connections is this writer's answer's.
	c        *client
	interval time.Duration
	pad      string
	objects  []object

	writes []write
	// unreachable counts the writes never sent: the server was down.
	unreachable int
	// problems are refusals a correct server would not answer.
	problems []string
}

func newWriter(cl *Class, idx int, st Student, objects int, rate float64, valueBytes int, inFlight *atomic.Int64) *writer {
	w := &writer{inFlight: inFlight, cl: cl, student: st, c: newClient(1), interval: time.Duration(float64(time.Second) / rate), pad: strings.Repeat("x", valueBytes)}
	for k := range objects {
		w.objects = append(w.objects, object{name: fmt.Sprintf("w%03d-%d", idx, k)})
	}
	return w
}

// run writes until stop is closed or ctx ends, finishing the write in
// flight.
func (w *writer) run(ctx context.Context, stop <-chan struct{}) {
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w.step(ctx, &w.objects[n%len(w.objects)])
	}
}

// step makes the next write of o: create it, update it or delete it.
func (w *writer) step(ctx context.Context, o *object) {
	wr := write{name: o.name}
	var method, url string
	var body []byte
	var want int
	switch {
	case !o.exists:
		wr.kind, method, url, want = opCreate, http.MethodPost, w.cl.URL(collectionPath), http.StatusCreated
		body = w.configMap(o, len(w.writes))
	case o.updates < updatesPerLife:
		wr.kind, method, url, want = opUpdate, http.MethodPut, w.cl.URL(collectionPath+"/"+o.name), http.StatusOK
		body = w.configMap(o, len(w.writes))
	default:
		wr.kind, method, url, want = opDelete, http.MethodDelete, w.cl.URL(collectionPath+"/"+o.name), http.StatusOK
		body = fmt.Appendf(nil, `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"resourceVersion":"%d"}}`, o.rv)
	}
	wr.sent = time.Now()
	w.inFlight.Add(1)
	status, answer, arrived, err := w.c.send(ctx, method, url, w.student.Token, body)
	w.inFlight.Add(-1)
	switch {
	case err == nil && status == want:
		wr.answered, wr.acked = time.Unix(0, arrived), time.Now()
		if wr.kind == opDelete {
			*o = object{name: o.name}
			break
		}
		rv, err := resourceVersionOf(answer)
		if err != nil {
			w.problems = append(w.problems, fmt.Sprintf("%s %s: %v", method, o.name, err))
			return
		}
		wr.rv = rv
		o.exists, o.rv = true, rv
		if wr.kind == opUpdate {
			o.updates++
		}
	case isDialError(err):
		// Never sent: the server was down. Read o again once it is back.
		w.unreachable++
		w.resync(ctx, o)
		return
	case err == nil && status < 500:
		// Refused: nothing was written, but a correct server had no
		// reason to refuse it.
		w.problems = append(w.problems, fmt.Sprintf("%s %s: %d %s", method, o.name, status, answer))
		w.resync(ctx, o)
		return
	default:
		if ctx.Err() != nil {
			return // the load was called off: nothing to know
		}
		// Made or not: the history will tell.
		wr.uncertain = true
		w.writes = append(w.writes, wr)
		w.resync(ctx, o)
		return
	}
	w.writes = append(w.writes, wr)
}

// resync reads o again until the server answers, after a write whose fate
// the writer does not know.
func (w *writer) resync(ctx context.Context, o *object) {
	for ctx.Err() == nil {
		status, answer, err := w.c.do(ctx, http.MethodGet, w.cl.URL(collectionPath+"/"+o.name), w.student.Token, nil)
		switch {
		case err == nil && status == http.StatusOK:
			rv, err := resourceVersionOf(answer)
			if err == nil {
				*o = object{name: o.name, exists: true, rv: rv}
				return
			}
		case err == nil && status == http.StatusNotFound:
			*o = object{name: o.name}
			return
		}
		if sleep(ctx, retryInterval) != nil {
			return
		}
	}
}

// isDialError says whether err is a request's failure to connect: the
// request was never sent.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// retryInterval is how often a client tries a server that does not answer.
const retryInterval = 50 * time.Millisecond

// collectionPath is the shared namespace's ConfigMaps.
const collectionPath = "/api/v1/namespaces/" + Namespace + "/configmaps"

// configMap is o's next content: the writer and the write's number in its
// data, and the resourceVersion of the writer's last write of o (an
// update's precondition).
func (w *writer) configMap(o *object, seq int) []byte {
	meta := map[string]string{"name": o.name, "namespace": Namespace}
	if o.exists {
		meta["resourceVersion"] = strconv.FormatInt(o.rv, 10)
	}
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
		"data": map[string]string{"writer": w.student.ID, "seq": strconv.Itoa(seq), "pad": w.pad},
	})
	return b
}

// resourceVersionOf reads metadata.resourceVersion of an object.
func resourceVersionOf(b []byte) (int64, error) {
	var obj struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return 0, err
	}
	return strconv.ParseInt(obj.Metadata.ResourceVersion, 10, 64)
}
