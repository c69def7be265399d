// Package deploy holds Foundry's Kubernetes manifests (kustomize bases,
// components and overlays), the image builder (deploy/image, run by make
// image) and the Dockerfile; its tests render every overlay and component
// with `kubectl kustomize` and check the result against the Kubernetes API
// types, run the alert rules through promtool, and build and run an image.
package deploy
