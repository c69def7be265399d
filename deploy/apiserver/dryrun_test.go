package apiserver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
)

// fieldManager names the test's server-side applies.
const fieldManager = "foundry-test"

// dryRun asks every admission plugin and validation to run, and storage not
// to keep the result.
var dryRun = []string{metav1.DryRunAll}

// warnings records the Warning headers of the server's answers; the test
// reads and clears it around each request (the requests run one at a time).
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

// take returns the warnings recorded since the last call.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

// cluster is a kube-apiserver (with its etcd) running inside the test.
type cluster struct {
	dynamic  dynamic.Interface
	typed    kubernetes.Interface
	mapper   meta.RESTMapper
	warnings *warnings
}

// start runs an embedded etcd and a kube-apiserver with its default
// admission plugins (PodSecurity among them) and returns clients whose
// warnings are recorded.
func start(t *testing.T) *cluster {
	t.Helper()
	etcd := testserver.NewTestConfig(t)
	testserver.RunEtcd(t, etcd)
	storage := storagebackend.NewDefaultConfig("/registry", nil)
	for _, u := range etcd.ListenClientUrls {
		storage.Transport.ServerList = append(storage.Transport.ServerList, u.String())
	}

	opts := kubeapiservertesting.NewDefaultTestServerOptions()
	// The invariant checks scrape the server's metrics at teardown; they
	// test Kubernetes, not the manifests.
	opts.DisableInvariantChecks = true
	// --allow-privileged defaults to false here, which makes validation
	// refuse a privileged container before PodSecurity sees it; clusters
	// (kubeadm's, the managed ones) allow it and leave the refusal to the
	// namespace's Pod Security level, which is what this test is about.
	flags := []string{"--allow-privileged=true"}
	server, err := kubeapiservertesting.StartTestServer(t, opts, flags, storage)
	require.NoError(t, err, "start kube-apiserver")
	t.Cleanup(server.TearDownFn)

	w := &warnings{}
	cfg := rest.CopyConfig(server.ClientConfig)
	cfg.WarningHandler = w
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	typed, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	return &cluster{
		dynamic:  dyn,
		typed:    typed,
		mapper:   restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)),
		warnings: w,
	}
}

// render runs `kubectl kustomize dir` and returns its objects in order.
func render(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH: install kubectl (with its built-in kustomize) to render the overlays")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "kustomize", dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "kubectl kustomize %s: %s", dir, stderr.String())
	require.Empty(t, strings.TrimSpace(stderr.String()), "kubectl kustomize %s wrote warnings", dir)

	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(&stdout, 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "decode the output of kubectl kustomize %s", dir)
		if len(u.Object) == 0 {
			continue
		}
		objs = append(objs, u)
	}
	require.NotEmpty(t, objs, "kubectl kustomize %s rendered nothing", dir)
	return objs
}

func ref(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", u.GetKind(), ns, u.GetName())
	}
	return fmt.Sprintf("%s %s", u.GetKind(), u.GetName())
}

// apply server-side applies obj (dry-run unless real) and returns an error
// when the server refuses it, warns, or answers for another object: the
// checks live here, not in the caller, so the negative test exercises them.
func (c *cluster) apply(obj *unstructured.Unstructured, real bool) error {
	gvk := obj.GroupVersionKind()
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("%s: the server serves no %s: %w", ref(obj), gvk, err)
	}
	body, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	var res dynamic.ResourceInterface = c.dynamic.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			return fmt.Errorf("%s: a namespaced object with no namespace", ref(obj))
		}
		res = c.dynamic.Resource(mapping.Resource).Namespace(obj.GetNamespace())
	}
	opts := metav1.PatchOptions{FieldManager: fieldManager, FieldValidation: metav1.FieldValidationStrict}
	if !real {
		opts.DryRun = dryRun
	}
	c.warnings.take()
	got, err := res.Patch(context.Background(), obj.GetName(), types.ApplyPatchType, body, opts)
	if err != nil {
		return fmt.Errorf("%s: the API server refused it: %w", ref(obj), err)
	}
	if w := c.warnings.take(); len(w) > 0 {
		return fmt.Errorf("%s: the API server warned: %q", ref(obj), w)
	}
	if ref(got) != ref(obj) || got.GroupVersionKind() != gvk {
		return fmt.Errorf("%s: the server answered for %s %s", ref(obj), got.GroupVersionKind(), ref(got))
	}
	return nil
}

// namespace applies ns for real (namespaced objects cannot be dry-run into
// a namespace that does not exist) and gives it the default service account,
// which the ServiceAccount admission plugin wants for every pod and which no
// controller runs here to make.
func (c *cluster) namespace(t *testing.T, ns *unstructured.Unstructured) {
	t.Helper()
	require.NoError(t, c.apply(ns, true))
	_, err := c.typed.CoreV1().ServiceAccounts(ns.GetName()).Create(context.Background(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err, "create the default service account in %s", ns.GetName())
	}
}

// podFromTemplate is the Pod a workload's controller would create from its
// template: PodSecurity enforces only on Pods (on workloads it warns), so
// each template is also admitted as a Pod.
func podFromTemplate(t *testing.T, obj *unstructured.Unstructured) (*corev1.Pod, bool) {
	t.Helper()
	tmpl, found, err := unstructured.NestedMap(obj.Object, "spec", "template")
	require.NoError(t, err, "%s: spec.template", ref(obj))
	if !found {
		return nil, false
	}
	var pt corev1.PodTemplateSpec
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(tmpl, &pt, true),
		"%s: spec.template is not a pod template", ref(obj))
	pod := &corev1.Pod{ObjectMeta: pt.ObjectMeta, Spec: pt.Spec}
	pod.Name = strings.ToLower(obj.GetKind()) + "-" + obj.GetName()
	pod.Namespace = obj.GetNamespace()
	return pod, true
}

// createPod dry-run creates pod and returns an error when the server refuses
// it, warns, or answers for another pod.
func (c *cluster) createPod(pod *corev1.Pod) error {
	c.warnings.take()
	got, err := c.typed.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod,
		metav1.CreateOptions{DryRun: dryRun, FieldManager: fieldManager, FieldValidation: metav1.FieldValidationStrict})
	if err != nil {
		return err
	}
	if got.Name != pod.Name || got.Namespace != pod.Namespace {
		return fmt.Errorf("pod %s/%s: the server answered for pod %s/%s", pod.Namespace, pod.Name, got.Namespace, got.Name)
	}
	if w := c.warnings.take(); len(w) > 0 {
		return fmt.Errorf("pod %s/%s: the API server warned: %q", pod.Namespace, pod.Name, w)
	}
	return nil
}

// privileged is a pod the restricted level must refuse.
func privileged(namespace string) *corev1.Pod {
	yes := true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "privileged", Namespace: namespace},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:            "c",
			Image:           "registry.example/c:1",
			SecurityContext: &corev1.SecurityContext{Privileged: &yes},
		}}},
	}
}

// TestOverlaysDryRunRestricted applies every overlay (and the base) to a real
// kube-apiserver: each overlay's Namespaces for real, then every object with
// server-side apply in dry-run mode, which runs validation, defaulting and
// every admission plugin (PodSecurity at the level the namespace's
// pod-security.kubernetes.io/enforce label names, which must be restricted).
// Any refusal or warning fails. Each workload's pod template is also
// dry-run created as a Pod, where PodSecurity enforces rather than warns, and
// a privileged pod must be refused in each namespace, so the check is shown
// able to fail.
func TestOverlaysDryRunRestricted(t *testing.T) {
	overlays, err := filepath.Glob("../overlays/*")
	require.NoError(t, err)
	dirs := append([]string{"../base"}, overlays...)
	for _, want := range []string{"../overlays/allinone", "../overlays/dev", "../overlays/production"} {
		require.Contains(t, dirs, want)
	}
	// Render first: a missing kubectl skips before the server starts.
	rendered := map[string][]*unstructured.Unstructured{}
	for _, dir := range dirs {
		rendered[dir] = render(t, dir)
	}

	c := start(t)
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			objs := rendered[dir]
			var namespaces []string
			for _, obj := range objs {
				if obj.GetKind() != "Namespace" || obj.GetAPIVersion() != "v1" {
					continue
				}
				require.Equal(t, "restricted", obj.GetLabels()["pod-security.kubernetes.io/enforce"],
					"%s: not at the restricted Pod Security level", ref(obj))
				c.namespace(t, obj)
				namespaces = append(namespaces, obj.GetName())
			}
			require.NotEmpty(t, namespaces, "%s renders no Namespace", dir)

			applied, pods := 0, 0
			for _, obj := range objs {
				if obj.GetKind() == "Namespace" {
					continue
				}
				require.Contains(t, namespaces, obj.GetNamespace(),
					"%s: not in a namespace the overlay makes (and holds at restricted)", ref(obj))
				require.NoError(t, c.apply(obj, false))
				applied++
				if pod, ok := podFromTemplate(t, obj); ok {
					require.NoError(t, c.createPod(pod), "%s: its pod template is refused as a Pod", ref(obj))
					pods++
				}
			}
			require.Positive(t, applied)
			require.Positive(t, pods, "%s has no workload", dir)
			t.Logf("%s: %d objects applied (dry-run), %d pod templates admitted as Pods, namespaces %v",
				dir, applied, pods, namespaces)

			for _, ns := range namespaces {
				err := c.createPod(privileged(ns))
				require.Error(t, err, "namespace %s admitted a privileged pod", ns)
				require.True(t, apierrors.IsForbidden(err), "namespace %s: %v", ns, err)
				require.Contains(t, err.Error(), `violates PodSecurity "restricted:latest"`)
				require.Contains(t, err.Error(), "securityContext.privileged=true")
			}
		})
	}

	// The same checks fail on what the restricted level forbids: a
	// Deployment whose pod is privileged is applied with a PodSecurity
	// warning (workloads are warned, not refused), its pod is refused.
	t.Run("privileged", func(t *testing.T) {
		ns := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": "restricted", "labels": map[string]any{
				"pod-security.kubernetes.io/enforce": "restricted",
				"pod-security.kubernetes.io/warn":    "restricted",
			}},
		}}
		c.namespace(t, ns)
		deploy := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "privileged", "namespace": "restricted"},
			"spec": map[string]any{
				"selector": map[string]any{"matchLabels": map[string]any{"app": "p"}},
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"app": "p"}},
					"spec": map[string]any{"containers": []any{map[string]any{
						"name": "c", "image": "registry.example/c:1",
						"securityContext": map[string]any{"privileged": true},
					}}},
				},
			},
		}}
		err := c.apply(deploy, false)
		require.Error(t, err, "a privileged Deployment applied with no warning")
		require.Contains(t, err.Error(), "Deployment restricted/privileged: the API server warned")
		require.Contains(t, err.Error(), "would violate PodSecurity")
		require.Contains(t, err.Error(), "restricted:latest")
		require.Contains(t, err.Error(), "securityContext.privileged=true")

		pod, ok := podFromTemplate(t, deploy)
		require.True(t, ok)
		err = c.createPod(pod)
		require.Error(t, err, "a privileged pod was admitted")
		require.True(t, apierrors.IsForbidden(err), "%v", err)
		require.Contains(t, err.Error(), `violates PodSecurity "restricted:latest"`)
		require.Contains(t, err.Error(), "securityContext.privileged=true")
	})
}
