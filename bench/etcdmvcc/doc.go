// Package etcdmvcc benchmarks etcd's own MVCC store
// (go.etcd.io/etcd/server/v3/storage/mvcc over a temporary bbolt file) and
// rvplay's engine/mvcc Store on the memory backend with the same keys,
// values and operations, so that the two can be set side by side.
//
// It is a separate Go module so that the product module does not carry
// etcd's server and its dependencies. Run it from this directory:
//
//	go test -bench . -benchmem
//	go test -run TestSideBySide -sidebyside -v   # ratios; fails below 2x
package etcdmvcc
