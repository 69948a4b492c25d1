package main

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/server/etcdstore"
	"github.com/rvplay/rvplay/server/httpapi"
)

// TestGatewayOnEtcdMatchesRecordedEtcd replays the golden exchanges on a
// session stored on a real etcd (a prefix of a fresh one, the only store on
// it, so that its revisions are those of the recording and it may compact
// the cluster): the session's gateway answers as the etcd under it would
// without the prefix.
func TestGatewayOnEtcdMatchesRecordedEtcd(t *testing.T) {
	e := etcdtest.Start(t, etcdtest.Options{})
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{e.URL}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	store, err := etcdstore.Open(context.Background(), cli, etcdstore.Options{Prefix: "/rvplay/kv/golden/", LeasePrefix: "/rvplay/leases/golden/", CompactCluster: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.NewWithStore("golden", store, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(httpapi.Handler(s, httpapi.Options{}))
	defer srv.Close()
	replayGolden(t, srv.URL, nil)
}
