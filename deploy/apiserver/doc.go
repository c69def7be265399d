// Package apiserver holds a test that applies every overlay of deploy/ to a
// real kube-apiserver (run in-process on an embedded etcd) with server-side
// apply in dry-run mode, under the restricted Pod Security level.
//
// It is its own module, outside go.work: k8s.io/kubernetes brings a large
// dependency graph and replace directives that would otherwise join every
// workspace module's build list (see deploy/README.md, Tests).
package apiserver
