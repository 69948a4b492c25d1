package console

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// lab load RATE SECONDS updates the ConfigMap "load" RATE times a second
// for SECONDS seconds, unconditionally, to see the lab under a stream of
// writes (the e2e tests use it to measure the page under load).
func (c *Console) lab(ctx context.Context, p *proc) int {
	if len(p.args) == 0 || p.args[0] != "load" {
		fmt.Fprintln(p.stderr, "usage: lab load RATE SECONDS")
		return 2
	}
	rate, seconds := 200.0, 3.0
	if len(p.args) > 1 {
		f, err := strconv.ParseFloat(p.args[1], 64)
		if err != nil || f <= 0 {
			fmt.Fprintf(p.stderr, "lab load: bad rate %q\n", p.args[1])
			return 2
		}
		rate = f
	}
	if len(p.args) > 2 {
		f, err := strconv.ParseFloat(p.args[2], 64)
		if err != nil || f <= 0 {
			fmt.Fprintf(p.stderr, "lab load: bad duration %q\n", p.args[2])
			return 2
		}
		seconds = f
	}
	k := &kubectlRun{proc: p, c: c, ctx: ctx}
	path := "/api/v1/namespaces/default/configmaps"
	body := func(i int) []byte {
		b, _ := json.Marshal(obj{"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj{"name": "load"}, "data": obj{"i": strconv.Itoa(i)}})
		return b
	}
	if _, err := k.do("POST", path, nil, body(0), "application/json", "application/json"); err != nil && !isConflictOrExists(err) {
		return k.fail(err)
	}
	total := int(rate * seconds)
	start := c.opts.Now()
	for i := 1; i <= total; i++ {
		due := start.Add(time.Duration(float64(i) * float64(time.Second) / rate))
		if wait := due.Sub(c.opts.Now()); wait > 0 {
			if err := c.opts.Sleep(ctx, wait); err != nil {
				return 130
			}
		}
		if _, err := k.do("PUT", path+"/load", nil, body(i), "application/json", "application/json"); err != nil {
			return k.fail(err)
		}
	}
	secs := c.opts.Now().Sub(start).Seconds()
	fmt.Fprintf(p.stdout, "load: %d updates in %.2fs (%.0f/s)\n", total, secs, float64(total)/secs)
	return 0
}

func isConflictOrExists(err error) bool {
	se, ok := err.(*statusError)
	return ok && se.code == 409
}
