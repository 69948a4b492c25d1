// Package console runs kubectl and etcdctl command lines against a
// session's api.Handler and prints what the real tools print, so the lab's
// console and the lessons take the articles' commands as written.
package console
