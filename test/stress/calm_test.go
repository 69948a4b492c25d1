package stress

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// calmTimeout is how long the well-behaved client waits for an answer
// before it counts the server as not answering.
const calmTimeout = 10 * time.Second

// calmInterval paces the well-behaved client: a student clicking through
// a lesson sends a few requests a second; 25 a second gives a p99 of a
// few hundred samples per attack.
const calmInterval = 40 * time.Millisecond

// calmClient is the well-behaved client of another session: from its own
// address it writes a key, reads it back, and lists ConfigMaps through
// the Kubernetes API, in turn, and remembers every write it was
// acknowledged.
type calmClient struct {
	base string
	http *http.Client
	done chan struct{}
	// answered is closed once the first request was answered.
	answered chan struct{}
	wg       sync.WaitGroup

	// Owned by run until stop returns.
	latencies []time.Duration
	acked     map[string]string
	refused   int
	failures  []string
}

func startCalm(base string) *calmClient {
	c := &calmClient{
		base:     base,
		http:     clientFrom("127.0.0.2", calmTimeout),
		done:     make(chan struct{}),
		answered: make(chan struct{}),
		acked:    map[string]string{},
	}
	c.wg.Add(1)
	go c.run()
	return c
}

func (c *calmClient) run() {
	defer c.wg.Done()
	tick := time.NewTicker(calmInterval)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-c.done:
			return
		case <-tick.C:
		}
		key := fmt.Sprintf("calm/%06d", i/3)
		value := fmt.Sprintf("value %d at %s", i/3, time.Now().Format(time.RFC3339Nano))
		var status int
		var err error
		start := time.Now()
		switch i % 3 {
		case 0:
			status, _, err = post(c.http, c.base+"/v3/kv/put", putRequest(key, value))
			if err == nil && status == 200 {
				c.acked[key] = value
			}
		case 1:
			status, _, err = post(c.http, c.base+"/v3/kv/range", fmt.Sprintf(`{"key":%q}`, b64(key)))
		case 2:
			status, err = get(c.http, c.base+"/api/v1/namespaces/default/configmaps?limit=10")
		}
		took := time.Since(start)
		switch {
		case err != nil:
			c.failures = append(c.failures, fmt.Sprintf("request %d after %v: %v", i, took.Round(time.Millisecond), err))
		case status >= 500:
			c.failures = append(c.failures, fmt.Sprintf("request %d: status %d", i, status))
		case status != 200:
			c.refused++
		}
		if err == nil {
			c.latencies = append(c.latencies, took)
			if len(c.latencies) == 1 {
				close(c.answered)
			}
		}
	}
}

func get(c *http.Client, url string) (int, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// calmFigures is what the well-behaved client saw.
type calmFigures struct {
	requests, refused int
	p50, p99, max     time.Duration
	failures          []string
}

func (f calmFigures) String() string {
	return fmt.Sprintf("%d requests, p50 %v, p99 %v, max %v, %d refused, %d unanswered",
		f.requests, ms(f.p50), ms(f.p99), ms(f.max), f.refused, len(f.failures))
}

func (f calmFigures) table() string {
	return fmt.Sprintf("%v / %v / %v (%d, %d)", ms(f.p50), ms(f.p99), ms(f.max), f.requests, f.refused)
}

func ms(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

// stop ends the client and returns its figures.
func (c *calmClient) stop() calmFigures {
	close(c.done)
	c.wg.Wait()
	f := calmFigures{requests: len(c.latencies) + len(c.failures), refused: c.refused, failures: c.failures}
	if l := slices.Sorted(slices.Values(c.latencies)); len(l) > 0 {
		f.p50 = l[len(l)/2]
		f.p99 = l[min(len(l)-1, len(l)*99/100)]
		f.max = l[len(l)-1]
	}
	return f
}

// lost reads the client's keys back, after stop, and lists the
// acknowledged writes that are not there.
func (c *calmClient) lost() []string {
	got, err := readAll(clientFrom("127.0.0.2", time.Minute), c.base, "calm/")
	if err != nil {
		return []string{"reading them back: " + err.Error()}
	}
	var lost []string
	for k, v := range c.acked {
		if got[k] != v {
			lost = append(lost, fmt.Sprintf("%s = %q, read %q", k, v, got[k]))
		}
	}
	slices.Sort(lost)
	return lost
}

// Acked is how many writes the client was acknowledged.
func (c *calmClient) Acked() int { return len(c.acked) }
