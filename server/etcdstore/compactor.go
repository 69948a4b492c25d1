package etcdstore

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Compactor compacts a cluster as kube-apiserver's
// --etcd-compaction-interval does: each round compacts to the revision the
// previous round saw, so that the history of one interval is always kept.
// The rounds of every compactor on a cluster (each rvplay replica's, each
// kube-apiserver's) are ordered by the versions of CompactRevKey: a round
// whose compare-and-swap on it fails leaves the compaction to the one that
// won, so that a cluster is compacted once an interval however many run.
type Compactor struct {
	cli *clientv3.Client
	// last is the version of CompactRevKey this compactor saw last, rev
	// the cluster's revision then.
	last, rev int64
}

// NewCompactor returns the compactor of the cluster cli reaches.
func NewCompactor(cli *clientv3.Client) *Compactor { return &Compactor{cli: cli} }

// Round is one round: it claims the round with a compare-and-swap on
// CompactRevKey (recording the revision it compacts to) and compacts to
// the revision the previous round saw; it reports the revision compacted
// to (0 when it did not compact: the first round, or another compactor's).
func (c *Compactor) Round(ctx context.Context) (int64, error) {
	resp, err := c.cli.Txn(ctx).If(
		clientv3.Compare(clientv3.Version(CompactRevKey), "=", c.last),
	).Then(
		clientv3.OpPut(CompactRevKey, strconv.FormatInt(c.rev, 10)),
	).Else(
		clientv3.OpGet(CompactRevKey),
	).Commit()
	if err != nil {
		return 0, err
	}
	target, cur := c.rev, resp.Header.Revision
	c.rev = cur
	if !resp.Succeeded {
		c.last = resp.Responses[0].GetResponseRange().Kvs[0].Version
		return 0, nil
	}
	c.last++
	if target == 0 {
		return 0, nil
	}
	if _, err := c.cli.Compact(ctx, target); err != nil {
		return 0, err
	}
	return target, nil
}

// Run runs a round every interval until ctx ends, logging failures (the
// next round tries again).
func (c *Compactor) Run(ctx context.Context, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rev, err := c.Round(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("etcd compaction failed", "err", err)
		case rev > 0:
			log.Info("etcd compacted", "revision", rev)
		}
	}
}
