package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	etcdtls "go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/rvplay/rvplay/engine/sqlite"
	"github.com/rvplay/rvplay/server/classroom"
	"github.com/rvplay/rvplay/server/etcdstore"
	"github.com/rvplay/rvplay/server/health"
)

// storageFlags choose where the sessions live: --store (sqlite://FILE, the
// default, which --db names; or etcd://host:port[,host:port...]) and the
// etcd client's TLS files.
type storageFlags struct {
	store, db          *string
	cacert, cert, key  *string
	root               *string
	compactionInterval *time.Duration
	dialTimeout        *time.Duration
	onCommit           func(requests int, elapsed time.Duration)
	maxTxnOps          int
}

func newStorageFlags(fs interface {
	String(name, value, usage string) *string
	Duration(name string, value time.Duration, usage string) *time.Duration
}) *storageFlags {
	return &storageFlags{
		store:  fs.String("store", "", "where the sessions live: sqlite://FILE (the default, with --db's file) or etcd://host:port[,host:port...] (an etcd cluster through its v3 client, each session under its own key prefix, shared by every rvplay replica on it; https:// endpoints need --etcd-cacert)"),
		db:     fs.String("db", "rvplay.db", "SQLite file holding the sessions (created if missing); the same as --store sqlite://FILE"),
		cacert: fs.String("etcd-cacert", "", "with --store etcd://: verify the etcd members' certificates with this CA bundle (PEM), and speak TLS to them"),
		cert:   fs.String("etcd-cert", "", "with --store etcd://: the client certificate (PEM) to present to etcd; with --etcd-key"),
		key:    fs.String("etcd-key", "", "with --store etcd://: the private key (PEM) of --etcd-cert"),
		root:   fs.String("etcd-prefix", etcdstore.DefaultRoot, "with --store etcd://: the prefix of every key rvplay keeps on the cluster (sessions, their keys, the classroom's records)"),
		compactionInterval: fs.Duration("etcd-compaction-interval", 5*time.Minute,
			"with --store etcd://: compact the cluster every interval to the revision of the interval before, as kube-apiserver's flag (and with its compact_rev_key, so that replicas and kube-apiservers on the cluster compact once an interval together); 0: never (an operator compacts with etcdctl)"),
		dialTimeout: fs.Duration("etcd-dial-timeout", 10*time.Second, "with --store etcd://: how long to wait for the cluster at start-up"),
	}
}

// backing is the open storage of the sessions.
type backing struct {
	storage classroom.Storage
	// check is its health check.
	check health.Check
	// etcd is the cluster's client, nil on SQLite.
	etcd *clientv3.Client
	// where names it for the logs.
	where string
	close func() error
}

// open opens the storage the flags name.
func (f *storageFlags) open() (*backing, error) {
	spec := *f.store
	if spec == "" {
		spec = "sqlite://" + *f.db
	}
	scheme, rest, ok := strings.Cut(spec, "://")
	if !ok || rest == "" {
		return nil, fmt.Errorf("--store %q: want sqlite://FILE or etcd://host:port[,host:port...]", spec)
	}
	switch scheme {
	case "sqlite":
		if *f.cacert != "" || *f.cert != "" || *f.key != "" {
			return nil, errors.New("--etcd-cacert, --etcd-cert and --etcd-key go with --store etcd://")
		}
		db, err := sqlite.OpenWithOptions(rest, sqlite.Options{OnCommit: f.onCommit})
		if err != nil {
			return nil, err
		}
		return &backing{storage: db, where: rest, close: db.Close,
			check: health.Check{Name: "database", Check: func(r *http.Request) error { return db.Check(r.Context()) }}}, nil
	case "etcd":
		return f.openEtcd(rest)
	}
	return nil, fmt.Errorf("--store %q: unknown scheme %q (sqlite or etcd)", spec, scheme)
}

func (f *storageFlags) openEtcd(hosts string) (*backing, error) {
	tlsOn := *f.cacert != "" || *f.cert != "" || *f.key != ""
	if (*f.cert == "") != (*f.key == "") {
		return nil, errors.New("--etcd-cert and --etcd-key go together")
	}
	scheme := "http://"
	cfg := clientv3.Config{DialTimeout: *f.dialTimeout, Logger: zap.NewNop(), RejectOldCluster: false}
	if tlsOn {
		scheme = "https://"
		tc, err := (etcdtls.TLSInfo{TrustedCAFile: *f.cacert, CertFile: *f.cert, KeyFile: *f.key}).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("etcd TLS: %w", err)
		}
		cfg.TLS = tc
	}
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			cfg.Endpoints = append(cfg.Endpoints, scheme+h)
		}
	}
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("--store etcd://: no endpoint")
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd %v: %w", cfg.Endpoints, err)
	}
	// The client connects lazily: fail at start-up, not at the first
	// request, when the cluster is not there.
	ctx, cancel := context.WithTimeout(context.Background(), *f.dialTimeout)
	defer cancel()
	sessions := etcdstore.NewSessions(cli, *f.root, etcdstore.Options{MaxTxnOps: f.maxTxnOps, CompactionInterval: *f.compactionInterval})
	if err := sessions.Check(ctx); err != nil {
		cli.Close()
		return nil, fmt.Errorf("etcd %v: %w", cfg.Endpoints, err)
	}
	return &backing{storage: sessions, etcd: cli, where: strings.Join(cfg.Endpoints, ","), close: cli.Close,
		check: health.Check{Name: "etcd", Check: func(r *http.Request) error { return sessions.Check(r.Context()) }}}, nil
}

// compact runs the cluster's compactor until ctx ends, when the sessions
// live on etcd and an interval is set.
func (f *storageFlags) compact(ctx context.Context, b *backing, log *slog.Logger) {
	if b.etcd == nil || *f.compactionInterval <= 0 {
		return
	}
	go etcdstore.NewCompactor(b.etcd).Run(ctx, *f.compactionInterval, log)
}
