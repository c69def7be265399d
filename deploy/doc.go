// Package deploy holds Foundry's Kubernetes manifests (kustomize bases,
// components and overlays) and the Dockerfile of its images; its test renders
// every overlay with `kubectl kustomize` and checks the result against the
// Kubernetes API types.
package deploy
