package main

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"
)

func storageFrom(t *testing.T, args ...string) (*backing, error) {
	t.Helper()
	fs := flag.NewFlagSet("rvplay", flag.ContinueOnError)
	f := newStorageFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f.open()
}

func TestStoreChoosesSQLiteOrEtcdAndRefusesWhatDoesNotFit(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--db", filepath.Join(dir, "a.db")},
		{"--store", "sqlite://" + filepath.Join(dir, "b.db")},
	} {
		b, err := storageFrom(t, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if b.etcd != nil || b.check.Name != "database" || !strings.HasSuffix(b.where, ".db") {
			t.Fatalf("%v: %+v", args, b)
		}
		b.close()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--store", "mysql://x"}, `unknown scheme "mysql"`},
		{[]string{"--store", "rvplay.db"}, "want sqlite://FILE or etcd://"},
		{[]string{"--store", "etcd://"}, "want sqlite://FILE or etcd://"},
		{[]string{"--etcd-cacert", "ca.pem"}, "go with --store etcd://"},
		{[]string{"--store", "etcd://127.0.0.1:1", "--etcd-cert", "c.pem"}, "--etcd-cert and --etcd-key go together"},
		{[]string{"--store", "etcd://127.0.0.1:1", "--etcd-cacert", filepath.Join(dir, "none.pem")}, "etcd TLS"},
	} {
		_, err := storageFrom(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}
