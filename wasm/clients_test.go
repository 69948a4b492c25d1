//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall/js"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/client"
	"github.com/rvplay/rvplay/wasm/internal/remote"
)

func offlineBridge(t *testing.T, name string) js.Value {
	t.Helper()
	b := newBridge(newMemorySession)
	if err := b.reset(); err != nil {
		t.Fatal(err)
	}
	return b.install(name)
}

// run evaluates an async JavaScript function of the given arguments and
// awaits what it returns.
func run(t *testing.T, src string, args ...any) js.Value {
	t.Helper()
	fn := js.Global().Call("eval", "(async function(rvplay, arg) {"+src+"})")
	v, err := await(t, fn.Invoke(args...))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// goclients.js, the module pages use, over the real offline session: the
// lost update and the 409 of the lessons, and the steps a client reports.
func TestClientsModuleOverTheOfflineSession(t *testing.T) {
	ns := offlineBridge(t, "rvplayClients")
	module, err := filepath.Abs("../web/static/js/goclients.js")
	if err != nil {
		t.Fatal(err)
	}
	out := run(t, `
		const { Clients } = await import(arg);
		const clients = new Clients(rvplay);
		const steps = [];
		const a = await clients.client('a', { label: 'operator-a', onStep: (s) => steps.push(s) });
		const b = await clients.client('b', { label: 'operator-b' });
		// A ConfigMap: no controller of the session writes it between
		// the clients' reads and writes, as the deployment controller
		// writes a Deployment's status whenever the clock lets it.
		const ref = { resource: 'cm' };
		const made = await a.create(ref, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web' }, data: { replicas: '3' } });
		const ra = await a.get({ ...ref, name: 'web' });
		const rb = await b.get({ ...ref, name: 'web' });
		ra.object.data.replicas = '5'; rb.object.data.replicas = '2';
		const wa = await a.update(ref, ra.object);
		const wb = await b.update(ref, rb.object);
		const lost = await b.update(ref, rb.object, { withoutResourceVersion: true });
		const retried = await a.retryOnConflict({ ...ref, name: 'web' }, (o) => { o.data.replicas = '7'; return o; });
		const inf = await a.informer('cms', ref);
		await inf.start();
		for (let i = 0; i < 200 && !(await inf.store()).synced; i++) await new Promise((r) => setTimeout(r, 5));
		const store = await inf.store();
		await inf.stop();
		clients.close();
		return JSON.stringify({ made: made.status, wa: wa.status, wb: [wb.status, wb.reason], lost: lost.status,
			retried: [retried.status, retried.attempts, Number(retried.object.data.replicas)],
			store: store.objects.map((o) => o.metadata.name), kinds: [...new Set(steps.map((s) => s.kind))],
			put: steps.find((s) => s.kind === 'exchange' && s.method === 'PUT') });
	`, ns, "file://"+module)
	var got struct {
		Made, WA, Lost int
		WB             []any
		Retried        []float64
		Store, Kinds   []string
		Put            map[string]any
	}
	if err := json.Unmarshal([]byte(out.String()), &got); err != nil {
		t.Fatal(err)
	}
	if got.Made != 201 || got.WA != 200 || got.WB[0] != float64(409) || got.WB[1] != "Conflict" || got.Lost != 200 {
		t.Fatalf("create, update, stale update, update without resourceVersion: %+v", got)
	}
	if got.Retried[0] != 200 || got.Retried[1] != 1 || got.Retried[2] != 7 {
		t.Fatalf("retryOnConflict: %v", got.Retried)
	}
	if strings.Join(got.Store, ",") != "web" {
		t.Fatalf("store: %v", got.Store)
	}
	for _, k := range []string{"exchange", "attempt", "list", "listed", "replace", "watch"} {
		if !strings.Contains(","+strings.Join(got.Kinds, ",")+",", ","+k+",") {
			t.Errorf("no %q step among %v", k, got.Kinds)
		}
	}
	if got.Put["client"] != "a" || got.Put["status"] != float64(200) || got.Put["rvSent"] == "" || got.Put["requestBody"] == "" {
		t.Fatalf("A's PUT step: %v", got.Put)
	}
}

// proxy serves the bridge's session over a real HTTP server in Node: the
// remote handler talks to it as a browser talks to the rvplay server.
const proxy = `
	const http = require('http');
	const seen = [];
	const srv = http.createServer((req, res) => {
		const chunks = [];
		req.on('data', (c) => chunks.push(c));
		req.on('end', () => {
			seen.push({ path: req.url, ua: req.headers['x-rvplay-user-agent'] || '' });
			const path = req.url.replace(/^\/s\/t/, '');
			const r = { method: req.method, path, headers: {}, body: Buffer.concat(chunks).toString() };
			for (const [k, v] of Object.entries(req.headers)) if (k !== 'host' && k !== 'connection') r.headers[k] = v;
			if (/[?&]watch=(true|1)/.test(path)) {
				const cancel = rvplay.watch(r, (e) => {
					if (e.kind === 'open') { res.writeHead(e.status, e.headers); res.flushHeaders(); if (e.body) res.write(e.body); }
					else if (e.kind === 'frame') { const d = e.data; res.write(d.slice(0, 7)); res.write(d.slice(7)); }
					else res.end();
				});
				res.on('close', () => cancel());
				return;
			}
			rvplay.request(r).then((a) => { res.writeHead(a.status, a.headers); res.end(a.body); });
		});
	});
	await new Promise((ok) => srv.listen(0, '127.0.0.1', ok));
	globalThis.__proxy = { srv, seen };
	return 'http://127.0.0.1:' + srv.address().port + '/s/t';
`

func TestRemoteHandlerRunsTheGoClientsOverHTTP(t *testing.T) {
	ns := offlineBridge(t, "rvplayRemote")
	base := run(t, proxy, ns).String()
	defer js.Global().Get("__proxy").Get("srv").Call("close")

	h := remote.New(base)
	if !h.NoWebSocket {
		t.Skip("this host has WebSockets; the fetch path is what Node 20 tests")
	}
	c := client.New(h)
	c.UserAgent = "remote-test/rvplay-lab"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cms := c.Resource(client.ConfigMaps).Namespace("default")

	inf := client.NewInformer(cms)
	events := make(chan client.Step, 64)
	inf.Reflector.OnStep = func(s client.Step) { events <- s }
	ictx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { inf.Run(ictx); close(done) }()
	waitStep := func(kind string) client.Step {
		for {
			select {
			case s := <-events:
				t.Log(s)
				if s.Kind == kind {
					return s
				}
			case <-ctx.Done():
				t.Fatalf("no %s step", kind)
			}
		}
	}
	waitStep(client.StepWatch)

	made, err := cms.Create(ctx, client.Object{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x"}, "data": map[string]any{"v": "1"}}, client.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev := waitStep(client.StepEvent)
	if ev.Key != "default/x" || ev.RV != made.ResourceVersion() {
		t.Fatalf("the watch over HTTP delivered %+v", ev)
	}
	stale := made.DeepCopy()
	made.SetNested("2", "data", "v")
	if _, err := cms.Update(ctx, made, client.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Update(ctx, stale, client.WriteOptions{}); !client.IsConflict(err) {
		t.Fatalf("a stale update over HTTP: %v", err)
	}
	stop()
	<-done

	seen := js.Global().Get("JSON").Call("stringify", js.Global().Get("__proxy").Get("seen")).String()
	if !strings.Contains(seen, `"ua":"remote-test/rvplay-lab"`) || strings.Contains(seen, `"ua":""`) {
		t.Fatalf("every request carries the client's User-Agent in X-Rvplay-User-Agent: %s", seen)
	}

	// A request to a server that is gone is a 503 Status, not a hang.
	gone := remote.New("http://127.0.0.1:1/s/t")
	if _, err := client.New(gone).Resource(client.ConfigMaps).Namespace("default").Get(ctx, "x", client.GetOptions{}); err == nil {
		t.Fatal("no server: want an error")
	} else if se, ok := client.AsStatus(err); !ok || se.Code() != 503 {
		t.Fatalf("no server: %v", err)
	}
}
