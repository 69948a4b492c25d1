package classload

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gorilla/websocket"
)

// A class's 200 watchers take 20,000 events a second, and the load tool
// shares the server's cores: decoding each event in full with
// encoding/json was most of the tool's work, twice the server's, taken
// from the server's cores. A watcher reads what its checks need where
// kube-apiserver's encoding puts it, and decodes in full the events it
// cannot read so, and one event in decodeEvery to check that reading.

// decodeEvery is how often a watcher checks its reading of an event by
// decoding it in full.
const decodeEvery = 32

// watchEvent is what a watcher needs of one event.
type watchEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name            string `json:"name"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"object"`
}

var (
	typeMember     = []byte(`{"type":"`)
	objectMember   = []byte(`","object":{`)
	metadataMember = []byte(`"metadata":{`)
	nameMember     = []byte(`"name":"`)
	rvMember       = []byte(`"resourceVersion":"`)
)

// scanEvent reads an event's type and its object's name and
// resourceVersion without decoding the rest: the type comes first, and
// the object's metadata begins with its name and holds its
// resourceVersion before any other member so named (kube's field order).
// False for an ERROR and for anything laid out otherwise.
func scanEvent(msg []byte, ev *watchEvent) bool {
	rest, ok := bytes.CutPrefix(msg, typeMember)
	if !ok {
		return false
	}
	typ, rest, ok := quoted(rest)
	if !ok || typ == "ERROR" {
		return false
	}
	if rest, ok = bytes.CutPrefix(rest, objectMember[1:]); !ok {
		return false
	}
	if _, rest, ok = bytes.Cut(rest, metadataMember); !ok {
		return false
	}
	before, after, ok := bytes.Cut(rest, rvMember)
	if !ok {
		return false
	}
	rv, _, ok := quoted(after)
	if !ok {
		return false
	}
	var name string
	if n, ok := bytes.CutPrefix(before, nameMember); ok {
		if name, _, ok = quoted(n); !ok {
			return false
		}
	}
	ev.Type, ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion = typ, name, rv
	ev.Object.Code, ev.Object.Message = 0, ""
	return true
}

// quoted is the JSON string that b begins after its opening quote, and
// what follows its closing one; false if it has escapes.
func quoted(b []byte) (string, []byte, bool) {
	i := bytes.IndexByte(b, '"')
	if i < 0 || bytes.IndexByte(b[:i], '\\') >= 0 {
		return "", nil, false
	}
	return string(b[:i]), b[i+1:], true
}

// eventReader reads a watcher's events, into a buffer of its own.
type eventReader struct {
	buf  []byte
	seen int
}

// next reads the next message of conn; it is valid until the next call.
func (er *eventReader) next(conn *websocket.Conn) ([]byte, error) {
	_, r, err := conn.NextReader()
	if err != nil {
		return nil, err
	}
	b := bytes.NewBuffer(er.buf[:0])
	_, err = b.ReadFrom(r)
	er.buf = b.Bytes()
	return er.buf, err
}

// decode reads msg into ev: by scanEvent, or in full when it cannot,
// and in full as well every decodeEvery messages, to check the scan (an
// error says how they differ).
func (er *eventReader) decode(msg []byte, ev *watchEvent) error {
	er.seen++
	scanned := scanEvent(msg, ev)
	if scanned && er.seen%decodeEvery != 0 {
		return nil
	}
	var full watchEvent
	if err := json.Unmarshal(msg, &full); err != nil {
		return err
	}
	if scanned && full != *ev {
		return fmt.Errorf("read as %+v, decoded as %+v", *ev, full)
	}
	*ev = full
	return nil
}
