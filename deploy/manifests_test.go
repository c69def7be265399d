package deploy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// What the checks expect of every module comes from the module list
// (allinone.Modules), which TestMain reads (services_test.go) into these;
// no file here names a service to check it.
var (
	// modules is the module list, in start order.
	modules []module
	// services maps each module serving gRPC (a service) to the gRPC
	// service name its pods report health for.
	services map[string]string
	// deployments are the Deployments of a split install: one per module.
	deployments []string
	// peerEnv maps each service to the variable holding its address.
	peerEnv map[string]string
)

// secretKeys are the Secrets (and their keys) the README tells operators to
// create; nothing may reference any other.
var secretKeys = map[string][]string{
	"foundry-database":           {"url"},
	"foundry-database-portfolio": {"url"},
	"foundry-database-ledger":    {"url"},
	"foundry-database-agent":     {"url"},
	"foundry-database-ops":       {"url"},
	"foundry-admin":              {"admin-key", "admin-key-accept"},
	"foundry-service":            {"service-key", "service-key-accept"},
	"foundry-principal":          {"signing-key", "verifier-keys"},
	"foundry-github":             {"webhook-secret"},
	"foundry-impact":             {"webhook-secret"},
	"foundry-signers":            {"signers"},
	"foundry-audit":              {"signing-key", "previous-verifier-keys", "previous-signing-key"},
	"foundry-telemetry-database": {"url"},
}

// manifests is one rendered kustomization, by kind and name.
type manifests struct {
	namespaces  map[string]*corev1.Namespace
	configMaps  map[string]*corev1.ConfigMap
	services    map[string]*corev1.Service
	deployments map[string]*appsv1.Deployment
	jobs        map[string]*batchv1.Job
	pdbs        map[string]*policyv1.PodDisruptionBudget
	hpas        map[string]*autoscalingv2.HorizontalPodAutoscaler
	netpols     map[string]*networkingv1.NetworkPolicy
	// others are the Prometheus Operator's objects, by "Kind/name".
	others map[string]*unstructuredObject
	// namespaced lists "Kind/name" -> namespace of every namespaced object.
	namespaced map[string]string
	// labels lists "Kind/name" -> labels of every object.
	labels map[string]map[string]string
}

func kubectl(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH: install kubectl (with its built-in kustomize) to render and check the manifests")
	}
	return path
}

// render runs `kubectl kustomize dir` and decodes the output strictly.
func render(t *testing.T, dir string) *manifests {
	t.Helper()
	bin := kubectl(t)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "kustomize", dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, err, "kubectl kustomize %s: %s", dir, stderr.String())
	require.Empty(t, strings.TrimSpace(stderr.String()), "kubectl kustomize %s wrote warnings", dir)
	return decode(t, stdout.Bytes())
}

// strict decodes one JSON document into out, rejecting unknown fields.
func strict(doc []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the object")
	}
	return nil
}

func decode(t *testing.T, out []byte) *manifests {
	t.Helper()
	m := &manifests{
		namespaces:  map[string]*corev1.Namespace{},
		configMaps:  map[string]*corev1.ConfigMap{},
		services:    map[string]*corev1.Service{},
		deployments: map[string]*appsv1.Deployment{},
		jobs:        map[string]*batchv1.Job{},
		pdbs:        map[string]*policyv1.PodDisruptionBudget{},
		hpas:        map[string]*autoscalingv2.HorizontalPodAutoscaler{},
		netpols:     map[string]*networkingv1.NetworkPolicy{},
		others:      map[string]*unstructuredObject{},
		namespaced:  map[string]string{},
		labels:      map[string]map[string]string{},
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
	count := 0
	for {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		count++
		doc, err := yaml.YAMLToJSONStrict(raw)
		require.NoError(t, err, "document %d is not strict YAML:\n%s", count, raw)
		var tm metav1.TypeMeta
		require.NoError(t, json.Unmarshal(doc, &tm))
		gvk := tm.APIVersion + "/" + tm.Kind
		var (
			obj   any
			meta  *metav1.ObjectMeta
			store func()
		)
		switch gvk {
		case "v1/Namespace":
			o := &corev1.Namespace{}
			obj, meta = o, &o.ObjectMeta
			store = func() { m.namespaces[o.Name] = o }
		case "v1/ConfigMap":
			o := &corev1.ConfigMap{}
			obj, meta = o, &o.ObjectMeta
			store = func() { m.configMaps[o.Name] = o }
		case "v1/Service":
			o := &corev1.Service{}
			obj, meta = o, &o.ObjectMeta
			store = func() { m.services[o.Name] = o }
		case "apps/v1/Deployment":
			o := &appsv1.Deployment{}
			obj, meta = o, &o.ObjectMeta
			store = func() { m.deployments[o.Name] = o }
		case "batch/v1/Job":
			o := &batchv1.Job{}
			obj, meta = o, &o.ObjectMeta
			store = func() { m.jobs[o.Name] = o }
		case "policy/v1/PodDisruptionBudget":
			o := &policyv1.PodDisruptionBudget{}
			obj, meta = o, &o.ObjectMeta
			store = func() { m.pdbs[o.Name] = o }
		case "autoscaling/v2/HorizontalPodAutoscaler":
			o := &autoscalingv2.HorizontalPodAutoscaler{}
			obj, meta = o, &o.ObjectMeta
			store = func() { m.hpas[o.Name] = o }
		case "networking.k8s.io/v1/NetworkPolicy":
			o := &networkingv1.NetworkPolicy{}
			obj, meta = o, &o.ObjectMeta
			store = func() { m.netpols[o.Name] = o }
		case "monitoring.coreos.com/v1/ServiceMonitor", "monitoring.coreos.com/v1/PrometheusRule",
			"gateway.networking.k8s.io/v1/HTTPRoute":
			// Kinds of the Prometheus Operator (components/monitoring)
			// and of the Gateway API (components/gateway-api), whose Go
			// types this module does not import: kept as documents and
			// checked by their components' tests.
			o := &unstructuredObject{}
			obj, meta = o, &o.ObjectMeta
			store = func() { m.others[tm.Kind+"/"+o.Name] = o }
		default:
			t.Fatalf("document %d has an unknown kind %q:\n%s", count, gvk, raw)
		}
		if o, ok := obj.(*unstructuredObject); ok {
			require.NoError(t, json.Unmarshal(doc, o), "document %d (%s):\n%s", count, gvk, raw)
		} else {
			require.NoError(t, strict(doc, obj), "document %d (%s) does not decode strictly:\n%s", count, gvk, raw)
		}
		require.NotEmpty(t, meta.Name, "document %d (%s) has no name", count, gvk)
		key := tm.Kind + "/" + meta.Name
		if tm.Kind != "Namespace" {
			_, dup := m.namespaced[key]
			require.False(t, dup, "%s rendered twice", key)
			m.namespaced[key] = meta.Namespace
		}
		require.Equal(t, "foundry", meta.Labels["app.kubernetes.io/part-of"], "%s lacks app.kubernetes.io/part-of", key)
		m.labels[key] = meta.Labels
		store()
	}
	require.Positive(t, count, "kustomize rendered nothing")
	return m
}

// effectiveEnv is the container's environment as the kubelet builds it:
// envFrom first, then env, later entries winning. Values from ConfigMaps are
// resolved; entries from Secrets keep their ValueFrom.
func (m *manifests) effectiveEnv(t *testing.T, c corev1.Container) map[string]corev1.EnvVar {
	t.Helper()
	env := map[string]corev1.EnvVar{}
	for _, from := range c.EnvFrom {
		require.Nil(t, from.SecretRef, "container %s: secrets go through env, by key", c.Name)
		require.NotNil(t, from.ConfigMapRef, "container %s: envFrom without a source", c.Name)
		cm, ok := m.configMaps[from.ConfigMapRef.Name]
		require.True(t, ok, "container %s: envFrom names ConfigMap %q, which is not rendered", c.Name, from.ConfigMapRef.Name)
		for k, v := range cm.Data {
			env[from.Prefix+k] = corev1.EnvVar{Name: from.Prefix + k, Value: v}
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
			ref := e.ValueFrom.ConfigMapKeyRef
			cm, ok := m.configMaps[ref.Name]
			require.True(t, ok, "container %s: %s names ConfigMap %q, which is not rendered", c.Name, e.Name, ref.Name)
			v, ok := cm.Data[ref.Key]
			require.True(t, ok, "container %s: %s names key %q missing from ConfigMap %q", c.Name, e.Name, ref.Key, ref.Name)
			e = corev1.EnvVar{Name: e.Name, Value: v}
		}
		env[e.Name] = e
	}
	return env
}

func envValue(t *testing.T, env map[string]corev1.EnvVar, name string) string {
	t.Helper()
	e, ok := env[name]
	require.True(t, ok, "%s is not set", name)
	require.Nil(t, e.ValueFrom, "%s should be a plain value", name)
	return e.Value
}

func requireSecretRef(t *testing.T, env map[string]corev1.EnvVar, name, secret, key string, optional bool) {
	t.Helper()
	e, ok := env[name]
	require.True(t, ok, "%s is not set", name)
	require.NotNil(t, e.ValueFrom, "%s must come from a Secret", name)
	ref := e.ValueFrom.SecretKeyRef
	require.NotNil(t, ref, "%s must come from a Secret", name)
	require.Equal(t, secret, ref.Name, "%s Secret", name)
	require.Equal(t, key, ref.Key, "%s Secret key", name)
	require.Equal(t, optional, ref.Optional != nil && *ref.Optional, "%s optional", name)
}

func duration(t *testing.T, env map[string]corev1.EnvVar, name string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(envValue(t, env, name))
	require.NoError(t, err, "%s", name)
	return d
}

// containerPort resolves a probe or Service port (number or name) against the
// container's ports.
func containerPort(t *testing.T, c corev1.Container, name string, number int32) int32 {
	t.Helper()
	for _, p := range c.Ports {
		if (name != "" && p.Name == name) || (name == "" && p.ContainerPort == number) {
			return p.ContainerPort
		}
	}
	t.Fatalf("container %s has no port %q/%d", c.Name, name, number)
	return 0
}

func httpProbe(t *testing.T, c corev1.Container, p *corev1.Probe, what string) (path string, port int32) {
	t.Helper()
	require.NotNil(t, p, "container %s has no %s probe", c.Name, what)
	require.NotNil(t, p.HTTPGet, "container %s: %s probe is not an HTTP GET", c.Name, what)
	return p.HTTPGet.Path, containerPort(t, c, p.HTTPGet.Port.StrVal, p.HTTPGet.Port.IntVal)
}

func selects(t *testing.T, sel map[string]string, podLabels map[string]string) bool {
	t.Helper()
	require.NotEmpty(t, sel, "empty selectors select everything")
	return labels.SelectorFromSet(sel).Matches(labels.Set(podLabels))
}

// checkPod checks what every Foundry pod must have, Deployment or Job.
func (m *manifests) checkPod(t *testing.T, owner string, spec corev1.PodSpec) {
	t.Helper()
	require.NotEmpty(t, spec.Containers, "%s has no containers", owner)
	require.Equal(t, false, spec.AutomountServiceAccountToken != nil && *spec.AutomountServiceAccountToken,
		"%s must not mount a service account token", owner)
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
	}
	podSC := spec.SecurityContext
	require.NotNil(t, podSC, "%s has no pod securityContext", owner)
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		sc := c.SecurityContext
		require.NotNil(t, sc, "%s/%s has no securityContext", owner, c.Name)
		nonRoot := (sc.RunAsNonRoot != nil && *sc.RunAsNonRoot) || (sc.RunAsNonRoot == nil && podSC.RunAsNonRoot != nil && *podSC.RunAsNonRoot)
		require.True(t, nonRoot, "%s/%s: runAsNonRoot", owner, c.Name)
		require.True(t, sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem, "%s/%s: readOnlyRootFilesystem", owner, c.Name)
		require.True(t, sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation, "%s/%s: allowPrivilegeEscalation false", owner, c.Name)
		require.NotNil(t, sc.Capabilities, "%s/%s: capabilities", owner, c.Name)
		require.Contains(t, sc.Capabilities.Drop, corev1.Capability("ALL"), "%s/%s: drop ALL capabilities", owner, c.Name)
		require.Empty(t, sc.Capabilities.Add, "%s/%s: adds capabilities", owner, c.Name)
		seccomp := sc.SeccompProfile
		if seccomp == nil {
			seccomp = podSC.SeccompProfile
		}
		require.NotNil(t, seccomp, "%s/%s: seccompProfile", owner, c.Name)
		require.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, seccomp.Type, "%s/%s: seccompProfile", owner, c.Name)

		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
			require.Positive(t, req.Sign(), "%s/%s: no %s request", owner, c.Name, r)
			require.Positive(t, lim.Sign(), "%s/%s: no %s limit", owner, c.Name, r)
			require.LessOrEqual(t, req.Cmp(lim), 0, "%s/%s: %s request %s above limit %s", owner, c.Name, r, req.String(), lim.String())
		}
		require.Regexp(t, `^[a-z0-9.\-/]+(:[\w.\-]+|@sha256:[0-9a-f]{64})$`, c.Image, "%s/%s: image without an explicit tag or digest", owner, c.Name)
		for _, vm := range c.VolumeMounts {
			require.True(t, volumes[vm.Name], "%s/%s mounts undeclared volume %q", owner, c.Name, vm.Name)
		}

		env := m.effectiveEnv(t, c)
		if mem, ok := env["FOUNDRY_MEMORY_LIMIT"]; ok || strings.HasPrefix(owner, "Deployment ") {
			// Every server's Go runtime learns its container's memory
			// limit (app's memlimit.go), from its own container.
			require.True(t, ok, "%s/%s: FOUNDRY_MEMORY_LIMIT", owner, c.Name)
			require.NotNil(t, mem.ValueFrom, "%s/%s: FOUNDRY_MEMORY_LIMIT", owner, c.Name)
			f := mem.ValueFrom.ResourceFieldRef
			require.NotNil(t, f, "%s/%s: FOUNDRY_MEMORY_LIMIT comes from the downward API", owner, c.Name)
			require.Equal(t, "limits.memory", f.Resource, "%s/%s: FOUNDRY_MEMORY_LIMIT", owner, c.Name)
			require.Equal(t, c.Name, f.ContainerName, "%s/%s: FOUNDRY_MEMORY_LIMIT of its own container", owner, c.Name)
			require.True(t, f.Divisor.IsZero() || f.Divisor.Value() == 1, "%s/%s: FOUNDRY_MEMORY_LIMIT in bytes", owner, c.Name)
		}
		for name, e := range env {
			if e.ValueFrom == nil || name == "FOUNDRY_MEMORY_LIMIT" {
				continue
			}
			ref := e.ValueFrom.SecretKeyRef
			require.NotNil(t, ref, "%s/%s: %s has an unexpected source", owner, c.Name, name)
			keys, known := secretKeys[ref.Name]
			require.True(t, known, "%s/%s: %s reads undocumented Secret %q", owner, c.Name, name, ref.Name)
			require.Contains(t, keys, ref.Key, "%s/%s: %s reads undocumented key of Secret %q", owner, c.Name, name, ref.Name)
		}
		require.Equal(t, "json", envValue(t, env, "FOUNDRY_LOG_FORMAT"), "%s/%s: log format", owner, c.Name)
	}
}

// checkCommon checks the properties every rendered install must have.
func (m *manifests) checkCommon(t *testing.T) {
	t.Helper()
	require.Len(t, m.namespaces, 1, "one Namespace per install")
	var ns string
	for name := range m.namespaces {
		ns = name
	}
	for key, got := range m.namespaced {
		require.Equal(t, ns, got, "%s is outside namespace %s", key, ns)
	}

	for name, d := range m.deployments {
		owner := "Deployment " + name
		tpl := d.Spec.Template
		require.NotNil(t, d.Spec.Selector, "%s has no selector", owner)
		require.True(t, selects(t, d.Spec.Selector.MatchLabels, tpl.Labels), "%s selector does not match its pods", owner)
		m.checkPod(t, owner, tpl.Spec)
		require.Len(t, tpl.Spec.Containers, 1, "%s: one container", owner)
		c := tpl.Spec.Containers[0]
		env := m.effectiveEnv(t, c)

		// The binaries default to loopback addresses.
		require.Equal(t, ":9090", envValue(t, env, "FOUNDRY_GRPC_ADDR"), "%s gRPC address", owner)
		require.Equal(t, ":9100", envValue(t, env, "FOUNDRY_ADMIN_ADDR"), "%s admin address", owner)
		require.Equal(t, int32(9090), containerPort(t, c, "grpc", 0), "%s grpc port", owner)
		require.Equal(t, int32(9100), containerPort(t, c, "metrics", 0), "%s metrics port", owner)

		require.NotNil(t, c.ReadinessProbe, "%s has no readiness probe", owner)
		path, port := httpProbe(t, c, c.LivenessProbe, "liveness")
		require.Equal(t, "/healthz", path, "%s liveness path", owner)
		require.Equal(t, int32(9100), port, "%s liveness port", owner)
		if c.StartupProbe != nil {
			path, port = httpProbe(t, c, c.StartupProbe, "startup")
			require.Equal(t, "/healthz", path, "%s startup path", owner)
			require.Equal(t, int32(9100), port, "%s startup port", owner)
		}

		delay := duration(t, env, "FOUNDRY_SHUTDOWN_DELAY")
		timeout := duration(t, env, "FOUNDRY_SHUTDOWN_TIMEOUT")
		require.Equal(t, 5*time.Second, delay, "%s shutdown delay", owner)
		require.NotNil(t, tpl.Spec.TerminationGracePeriodSeconds, "%s terminationGracePeriodSeconds", owner)
		grace := time.Duration(*tpl.Spec.TerminationGracePeriodSeconds) * time.Second
		require.Greater(t, grace, delay+timeout, "%s: grace period must outlast shutdown delay + timeout", owner)

		require.Equal(t, "true", tpl.Annotations["prometheus.io/scrape"], "%s scrape annotation", owner)
		require.Equal(t, "9100", tpl.Annotations["prometheus.io/port"], "%s scrape port", owner)
		require.Equal(t, "/metrics", tpl.Annotations["prometheus.io/path"], "%s scrape path", owner)
		require.NotEmpty(t, tpl.Labels["app.kubernetes.io/name"], "%s pod label app.kubernetes.io/name", owner)
		require.NotEmpty(t, tpl.Labels["app.kubernetes.io/component"], "%s pod label app.kubernetes.io/component", owner)
	}

	for name, j := range m.jobs {
		m.checkPod(t, "Job "+name, j.Spec.Template.Spec)
		for _, d := range m.deployments {
			require.False(t, selects(t, d.Spec.Selector.MatchLabels, j.Spec.Template.Labels),
				"Deployment %s selects the pods of Job %s", d.Name, name)
		}
	}

	for name, s := range m.services {
		// <svc>-grpc: the headless Service gRPC clients resolve (every
		// ready pod), its gRPC port only; the others are ClusterIPs.
		headless := strings.HasSuffix(name, "-grpc")
		if headless {
			require.Equal(t, corev1.ClusterIPNone, s.Spec.ClusterIP, "Service %s must be headless", name)
		} else {
			require.Equal(t, corev1.ServiceTypeClusterIP, s.Spec.Type, "Service %s type", name)
		}
		var target *appsv1.Deployment
		for _, d := range m.deployments {
			if selects(t, s.Spec.Selector, d.Spec.Template.Labels) {
				require.Nil(t, target, "Service %s selects two Deployments", name)
				target = d
			}
		}
		require.NotNil(t, target, "Service %s selects no Deployment", name)
		for _, j := range m.jobs {
			require.False(t, selects(t, s.Spec.Selector, j.Spec.Template.Labels), "Service %s selects the pods of Job %s", name, j.Name)
		}
		c := target.Spec.Template.Spec.Containers[0]
		ports := map[string]int32{}
		for _, p := range s.Spec.Ports {
			require.Equal(t, p.Port, containerPort(t, c, p.TargetPort.StrVal, p.TargetPort.IntVal),
				"Service %s port %s: service and container ports differ", name, p.Name)
			ports[p.Name] = p.Port
		}
		require.Equal(t, int32(9090), ports["grpc"], "Service %s grpc port", name)
		if !headless {
			require.Equal(t, int32(9100), ports["metrics"], "Service %s metrics port", name)
		}
	}

	for name, p := range m.pdbs {
		require.NotNil(t, p.Spec.Selector, "PodDisruptionBudget %s selector", name)
		n := 0
		for _, d := range m.deployments {
			if selects(t, p.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
				n++
			}
		}
		require.Equal(t, 1, n, "PodDisruptionBudget %s must select exactly one Deployment", name)
		// maxUnavailable never blocks a drain, whatever the replica count.
		require.NotNil(t, p.Spec.MaxUnavailable, "PodDisruptionBudget %s maxUnavailable", name)
		require.Equal(t, 1, p.Spec.MaxUnavailable.IntValue(), "PodDisruptionBudget %s maxUnavailable", name)
		require.Nil(t, p.Spec.MinAvailable, "PodDisruptionBudget %s minAvailable", name)
	}

	for name, h := range m.hpas {
		ref := h.Spec.ScaleTargetRef
		require.Equal(t, "Deployment", ref.Kind, "HPA %s target kind", name)
		require.Equal(t, "apps/v1", ref.APIVersion, "HPA %s target apiVersion", name)
		d, ok := m.deployments[ref.Name]
		require.True(t, ok, "HPA %s targets missing Deployment %q", name, ref.Name)
		require.Nil(t, d.Spec.Replicas, "Deployment %s is scaled by HPA %s: spec.replicas must be unset", d.Name, name)
		require.NotNil(t, h.Spec.MinReplicas, "HPA %s minReplicas", name)
		require.LessOrEqual(t, *h.Spec.MinReplicas, h.Spec.MaxReplicas, "HPA %s min above max", name)
		require.NotEmpty(t, h.Spec.Metrics, "HPA %s metrics", name)
		for _, metric := range h.Spec.Metrics {
			require.Equal(t, autoscalingv2.ResourceMetricSourceType, metric.Type, "HPA %s metric type", name)
			cpu := d.Spec.Template.Spec.Containers[0].Resources.Requests[metric.Resource.Name]
			require.Positive(t, cpu.Sign(), "HPA %s scales on %s, which Deployment %s does not request", name, metric.Resource.Name, d.Name)
		}
	}
}

// checkSplit checks an install of the five separate Deployments.
func (m *manifests) checkSplit(t *testing.T) {
	t.Helper()
	require.Equal(t, "foundry", onlyKey(m.namespaces), "namespace")
	require.ElementsMatch(t, deployments, keys(m.deployments), "Deployments")
	wantServices := slices.Clone(deployments)
	for svc := range services {
		wantServices = append(wantServices, svc+"-grpc") // headless, for gRPC clients
	}
	require.ElementsMatch(t, wantServices, keys(m.services), "Services")
	require.ElementsMatch(t, deployments, keys(m.pdbs), "PodDisruptionBudgets")
	require.ElementsMatch(t, []string{"foundry-config"}, keys(m.configMaps), "ConfigMaps")
	var jobs []string
	for svc := range services {
		jobs = append(jobs, svc+"-migrate")
	}
	require.ElementsMatch(t, jobs, keys(m.jobs), "migration Jobs")

	// README.md applies a split install in steps by these labels: the shared
	// objects (no component), then the Jobs (migration), then the servers.
	wantComponent := map[string]string{
		"Namespace": "", "ConfigMap": "", "NetworkPolicy": "", "Job": "migration",
		"Deployment": "server", "Service": "server", "PodDisruptionBudget": "server", "HorizontalPodAutoscaler": "server",
		"HTTPRoute": "server", "ServiceMonitor": "server", "PrometheusRule": "",
	}
	for key, l := range m.labels {
		want, known := wantComponent[strings.SplitN(key, "/", 2)[0]]
		require.True(t, known, "%s: no apply step", key)
		got, has := l["app.kubernetes.io/component"]
		require.Equal(t, want != "", has, "%s: app.kubernetes.io/component present", key)
		require.Equal(t, want, got, "%s: app.kubernetes.io/component", key)
	}

	for svc, grpcService := range services {
		d := m.deployments[svc]
		c := d.Spec.Template.Spec.Containers[0]
		require.Regexp(t, "^ghcr.io/foundryhq/foundry-"+svc+":", c.Image, "%s image", svc)
		require.Equal(t, []string{"/usr/local/bin/" + svc}, c.Command, "%s command", svc)
		require.Empty(t, c.Args, "%s args", svc)

		p := c.ReadinessProbe
		require.NotNil(t, p, "%s readiness probe", svc)
		require.NotNil(t, p.GRPC, "%s readiness must be a gRPC probe", svc)
		require.Equal(t, int32(9090), p.GRPC.Port, "%s readiness probe port", svc)
		require.NotNil(t, p.GRPC.Service, "%s readiness probe service", svc)
		require.Equal(t, grpcService, *p.GRPC.Service, "%s readiness probe service", svc)

		env := m.effectiveEnv(t, c)
		// Each service connects as its own role; only its Job connects as
		// the migrator, to hand the role its schema.
		requireSecretRef(t, env, "FOUNDRY_DATABASE_URL", "foundry-database-"+svc, "url", false)
		requireSecretRef(t, env, "FOUNDRY_ADMIN_KEY", "foundry-admin", "admin-key", false)
		requireSecretRef(t, env, "FOUNDRY_SERVICE_KEY", "foundry-service", "service-key", false)
		// A rotation's other keys, absent outside one (README, "Rotating keys").
		requireSecretRef(t, env, "FOUNDRY_ADMIN_KEY_ACCEPT", "foundry-admin", "admin-key-accept", true)
		requireSecretRef(t, env, "FOUNDRY_SERVICE_KEY_ACCEPT", "foundry-service", "service-key-accept", true)
		// A service believes only principals the gateways signed, and
		// holds no key to sign one itself.
		requireSecretRef(t, env, "FOUNDRY_PRINCIPAL_VERIFIER_KEYS", "foundry-principal", "verifier-keys", false)
		require.NotContains(t, env, "FOUNDRY_PRINCIPAL_SIGNING_KEY", "%s must not hold the gateways' signing key", svc)
		require.Equal(t, "false", envValue(t, env, "FOUNDRY_AUTO_MIGRATE"), "%s must leave migrations to its Job", svc)

		j := m.jobs[svc+"-migrate"]
		jc := j.Spec.Template.Spec.Containers
		require.Len(t, jc, 1, "%s-migrate containers", svc)
		require.Equal(t, []string{"/usr/local/bin/" + svc}, jc[0].Command, "%s-migrate command", svc)
		require.Equal(t, []string{"migrate"}, jc[0].Args, "%s-migrate args", svc)
		require.Equal(t, c.Image, jc[0].Image, "%s-migrate must migrate with the image it deploys", svc)
		require.Contains(t, []corev1.RestartPolicy{corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure},
			j.Spec.Template.Spec.RestartPolicy, "%s-migrate restartPolicy", svc)
		require.NotNil(t, j.Spec.BackoffLimit, "%s-migrate backoffLimit", svc)
		require.Positive(t, *j.Spec.BackoffLimit, "%s-migrate backoffLimit", svc)
		require.NotNil(t, j.Spec.TTLSecondsAfterFinished, "%s-migrate ttlSecondsAfterFinished", svc)
		require.Positive(t, *j.Spec.TTLSecondsAfterFinished, "%s-migrate ttlSecondsAfterFinished", svc)
		require.NotNil(t, j.Spec.ActiveDeadlineSeconds, "%s-migrate activeDeadlineSeconds", svc)
		require.Positive(t, *j.Spec.ActiveDeadlineSeconds, "%s-migrate activeDeadlineSeconds", svc)
		// Migrations before the Deployments under GitOps too (README,
		// "Rollout order"): Argo CD's wave and Flux's and Argo's recreate.
		require.Equal(t, "-1", j.Annotations["argocd.argoproj.io/sync-wave"], "%s-migrate sync wave", svc)
		require.Equal(t, "Force=true,Replace=true", j.Annotations["argocd.argoproj.io/sync-options"], "%s-migrate sync options", svc)
		require.Equal(t, "enabled", j.Annotations["kustomize.toolkit.fluxcd.io/force"], "%s-migrate Flux force", svc)
		jenv := m.effectiveEnv(t, jc[0])
		requireSecretRef(t, jenv, "FOUNDRY_DATABASE_URL", "foundry-database", "url", false)
		requireSecretRef(t, jenv, "FOUNDRY_DATABASE_OWNER_URL", "foundry-database-"+svc, "url", false)
		require.Equal(t, svc, j.Spec.Template.Labels["app.kubernetes.io/name"], "%s-migrate pod label", svc)
		require.Equal(t, "migration", j.Spec.Template.Labels["app.kubernetes.io/component"], "%s-migrate pod label", svc)
	}

	ledger := m.effectiveEnv(t, m.deployments["ledger"].Spec.Template.Spec.Containers[0])
	// Optional in the base and dev (the webhook then refuses every
	// delivery), required in production: see webhookSecretOptional.
	requireSecretRef(t, ledger, "FOUNDRY_GITHUB_WEBHOOK_SECRET", "foundry-github", "webhook-secret", webhookSecretOptional(t, ledger))
	requireSecretRef(t, ledger, "FOUNDRY_SIGNERS", "foundry-signers", "signers", true)
	// The audit signing key is required everywhere: a ledger beside other
	// Foundry processes refuses to start without it.
	requireSecretRef(t, ledger, "FOUNDRY_AUDIT_SIGNING_KEY", "foundry-audit", "signing-key", false)
	requireSecretRef(t, ledger, "FOUNDRY_AUDIT_PREVIOUS_VERIFIER_KEYS", "foundry-audit", "previous-verifier-keys", true)
	requireSecretRef(t, ledger, "FOUNDRY_AUDIT_PREVIOUS_SIGNING_KEY", "foundry-audit", "previous-signing-key", true)
	require.NotContains(t, ledger, "FOUNDRY_GITHUB_ALLOW_UNSIGNED", "unsigned GitHub deliveries are for local runs only")
	rate, err := strconv.Atoi(envValue(t, ledger, "FOUNDRY_REGISTER_RATE_PER_MIN"))
	require.NoError(t, err)
	require.Positive(t, rate, "FOUNDRY_REGISTER_RATE_PER_MIN")

	// Every module gets an address for each module its binary may dial
	// (its peers, and the ledger, which verifies tokens), naming a Service
	// on its gRPC port.
	for _, mod := range modules {
		caller := mod.Name
		env := m.effectiveEnv(t, m.deployments[caller].Spec.Template.Spec.Containers[0])
		for _, peer := range mod.Dials {
			require.Equal(t, "dns:///"+peer+"-grpc:9090", envValue(t, env, peerEnv[peer]), "%s: address of %s", caller, peer)
			s, ok := m.services[peer+"-grpc"]
			require.True(t, ok, "%s calls %s, which has no headless Service %s-grpc", caller, peer, peer)
			require.Equal(t, corev1.ClusterIPNone, s.Spec.ClusterIP, "%s-grpc must be headless", peer)
			require.True(t, slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == 9090 }),
				"Service %s does not expose 9090", peer)
		}
	}

	gw := m.deployments["gateway"]
	c := gw.Spec.Template.Spec.Containers[0]
	require.Regexp(t, "^ghcr.io/foundryhq/foundry-gateway:", c.Image, "gateway image")
	require.Equal(t, []string{"/usr/local/bin/gateway"}, c.Command, "gateway command")
	path, port := httpProbe(t, c, c.ReadinessProbe, "readiness")
	require.Equal(t, "/readyz", path, "gateway readiness path")
	require.Equal(t, int32(9100), port, "gateway readiness port")
	env := m.effectiveEnv(t, c)
	require.Equal(t, ":8080", envValue(t, env, "FOUNDRY_HTTP_ADDR"), "gateway HTTP address")
	requireSecretRef(t, env, "FOUNDRY_ADMIN_KEY", "foundry-admin", "admin-key", false)
	requireSecretRef(t, env, "FOUNDRY_SERVICE_KEY", "foundry-service", "service-key", false)
	requireSecretRef(t, env, "FOUNDRY_PRINCIPAL_SIGNING_KEY", "foundry-principal", "signing-key", false)
	maxBody, err := strconv.Atoi(envValue(t, env, "FOUNDRY_MAX_BODY_BYTES"))
	require.NoError(t, err)
	require.Positive(t, maxBody, "FOUNDRY_MAX_BODY_BYTES")
	require.NotContains(t, env, "FOUNDRY_DATABASE_URL", "the gateway has no database")
	require.Equal(t, int32(8080), containerPort(t, c, "http", 0), "gateway http port")
	require.True(t, slices.ContainsFunc(m.services["gateway"].Spec.Ports, func(p corev1.ServicePort) bool {
		return p.Name == "http" && p.Port == 8080
	}), "Service gateway exposes http 8080")
}

// webhookSecretOptional reports whether the ledger's webhook secret is an
// optional Secret reference (failing when it is not a Secret reference).
func webhookSecretOptional(t *testing.T, env map[string]corev1.EnvVar) bool {
	t.Helper()
	e, ok := env["FOUNDRY_GITHUB_WEBHOOK_SECRET"]
	require.True(t, ok, "FOUNDRY_GITHUB_WEBHOOK_SECRET is not set")
	require.NotNil(t, e.ValueFrom, "FOUNDRY_GITHUB_WEBHOOK_SECRET must come from a Secret")
	require.NotNil(t, e.ValueFrom.SecretKeyRef, "FOUNDRY_GITHUB_WEBHOOK_SECRET must come from a Secret")
	return e.ValueFrom.SecretKeyRef.Optional != nil && *e.ValueFrom.SecretKeyRef.Optional
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func onlyKey[V any](m map[string]V) string {
	if len(m) != 1 {
		return fmt.Sprintf("%d keys: %v", len(m), keys(m))
	}
	return keys(m)[0]
}

// overlayChecks are the checks of each overlay beyond checkCommon; every
// directory under overlays/ must have an entry.
var overlayChecks = map[string]func(t *testing.T, m *manifests){
	"dev": func(t *testing.T, m *manifests) {
		m.checkSplit(t)
		require.Empty(t, m.hpas, "dev has no HPAs")
		ledger := m.effectiveEnv(t, m.deployments["ledger"].Spec.Template.Spec.Containers[0])
		requireSecretRef(t, ledger, "FOUNDRY_GITHUB_WEBHOOK_SECRET", "foundry-github", "webhook-secret", true)
		for name, d := range m.deployments {
			require.NotNil(t, d.Spec.Replicas, "dev %s replicas", name)
			require.Equal(t, int32(1), *d.Spec.Replicas, "dev %s replicas", name)
			env := m.effectiveEnv(t, d.Spec.Template.Spec.Containers[0])
			require.Equal(t, "debug", envValue(t, env, "FOUNDRY_LOG_LEVEL"), "dev %s log level", name)
		}
	},
	"production": func(t *testing.T, m *manifests) {
		m.checkSplit(t)
		require.ElementsMatch(t, deployments, keys(m.hpas), "production HPAs")
		for name, h := range m.hpas {
			require.Equal(t, name, h.Spec.ScaleTargetRef.Name, "HPA %s target", name)
			require.NotNil(t, h.Spec.MinReplicas, "HPA %s minReplicas", name)
			require.GreaterOrEqual(t, *h.Spec.MinReplicas, int32(2), "HPA %s minReplicas", name)
			require.LessOrEqual(t, *h.Spec.MinReplicas, int32(3), "HPA %s minReplicas", name)
		}
		require.Equal(t, int32(3), *m.hpas["gateway"].Spec.MinReplicas, "gateway minReplicas")
		// The webhook refuses every delivery without its secret: production
		// must not start without it (a missing Secret blocks the pod).
		ledger := m.effectiveEnv(t, m.deployments["ledger"].Spec.Template.Spec.Containers[0])
		requireSecretRef(t, ledger, "FOUNDRY_GITHUB_WEBHOOK_SECRET", "foundry-github", "webhook-secret", false)
		for name, d := range m.deployments {
			require.Nil(t, d.Spec.Replicas, "production %s replicas belong to its HPA", name)
			c := d.Spec.Template.Spec.Containers[0]
			require.Regexp(t, `:(\d+\.\d+\.\d+|[^:]*@sha256:[0-9a-f]{64})$`, c.Image, "production %s image must be pinned", name)
			env := m.effectiveEnv(t, c)
			require.Equal(t, "info", envValue(t, env, "FOUNDRY_LOG_LEVEL"), "production %s log level", name)
			require.Equal(t, "false", envValue(t, env, "FOUNDRY_GRPC_REFLECTION"), "production %s reflection", name)
		}
		require.True(t, m.allowed(t, server("gateway"), server("ledger"), 9090), "production: the gateway calls the ledger")
		require.False(t, m.allowed(t, outside, server("ledger"), 9090), "production closes the services to clients")
		for name, j := range m.jobs {
			require.NotContains(t, j.Spec.Template.Spec.Containers[0].Image, ":latest", "production Job %s image", name)
		}
	},
	"allinone": func(t *testing.T, m *manifests) {
		require.Equal(t, "foundry-demo", onlyKey(m.namespaces), "namespace")
		require.Equal(t, []string{"foundry"}, keys(m.deployments), "one Deployment")
		require.Equal(t, []string{"foundry"}, keys(m.services), "one Service")
		require.Empty(t, m.jobs, "SQLite is migrated at startup: no Jobs")
		require.Empty(t, m.hpas, "SQLite has one writer: no HPA")
		d := m.deployments["foundry"]
		require.NotNil(t, d.Spec.Replicas, "replicas")
		require.Equal(t, int32(1), *d.Spec.Replicas, "replicas")
		require.Equal(t, appsv1.RecreateDeploymentStrategyType, d.Spec.Strategy.Type, "never two pods on one SQLite")
		c := d.Spec.Template.Spec.Containers[0]
		require.Regexp(t, `^ghcr.io/foundryhq/foundry:`, c.Image, "all-in-one image")
		require.Equal(t, []string{"/usr/local/bin/foundry"}, c.Command, "command")
		require.Equal(t, []string{"-target=all"}, c.Args, "args")
		env := m.effectiveEnv(t, c)
		require.Equal(t, "/data", envValue(t, env, "FOUNDRY_DATA_DIR"), "data dir")
		require.NotContains(t, env, "FOUNDRY_DATABASE_URL", "SQLite, not Postgres")
		require.Equal(t, "true", envValue(t, env, "FOUNDRY_AUTO_MIGRATE"), "auto-migrate")
		require.Equal(t, ":8080", envValue(t, env, "FOUNDRY_HTTP_ADDR"), "HTTP address")
		for peer, name := range peerEnv {
			require.NotContains(t, env, name, "%s is in the same process", peer)
		}
		requireSecretRef(t, env, "FOUNDRY_ADMIN_KEY", "foundry-admin", "admin-key", true)
		require.NotContains(t, env, "FOUNDRY_SERVICE_KEY", "one process calls only itself: its key is generated")
		require.NotContains(t, env, "FOUNDRY_PRINCIPAL_SIGNING_KEY", "one process forwards only to itself: its key is made for the run")
		i := slices.IndexFunc(c.VolumeMounts, func(vm corev1.VolumeMount) bool { return vm.MountPath == "/data" })
		require.GreaterOrEqual(t, i, 0, "a volume at /data")
		vol := slices.IndexFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[i].Name })
		require.GreaterOrEqual(t, vol, 0, "the /data volume")
		v := d.Spec.Template.Spec.Volumes[vol]
		require.True(t, v.EmptyDir != nil || v.PersistentVolumeClaim != nil, "/data is an emptyDir or a PVC")
		path, port := httpProbe(t, c, c.ReadinessProbe, "readiness")
		require.Equal(t, "/readyz", path, "readiness path")
		require.Equal(t, int32(9100), port, "readiness port")
		require.Equal(t, int32(8080), containerPort(t, c, "http", 0), "http port")
	},
}

func TestOverlays(t *testing.T) {
	t.Parallel()
	kubectl(t)
	entries, err := os.ReadDir("overlays")
	require.NoError(t, err)
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	require.ElementsMatch(t, keys(overlayChecks), dirs, "every overlay needs checks in overlayChecks")
	for _, name := range dirs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := render(t, filepath.Join("overlays", name))
			m.checkCommon(t)
			overlayChecks[name](t, m)
		})
	}
}

// TestBase renders the base as it is (two replicas, no HPA).
func TestBase(t *testing.T) {
	t.Parallel()
	m := render(t, "base")
	m.checkCommon(t)
	m.checkSplit(t)
	for name, d := range m.deployments {
		require.NotNil(t, d.Spec.Replicas, "%s replicas", name)
		require.Equal(t, int32(2), *d.Spec.Replicas, "%s replicas", name)
	}
	ledger := m.effectiveEnv(t, m.deployments["ledger"].Spec.Template.Spec.Containers[0])
	requireSecretRef(t, ledger, "FOUNDRY_GITHUB_WEBHOOK_SECRET", "foundry-github", "webhook-secret", true)
}

// TestServiceAlone renders each deploy/base/<svc> alone, as an operator
// deploying one service does.
func TestServiceAlone(t *testing.T) {
	t.Parallel()
	for _, svc := range deployments {
		t.Run(svc, func(t *testing.T) {
			t.Parallel()
			m := render(t, filepath.Join("base", svc))
			require.Empty(t, m.namespaces, "the namespace belongs to the base")
			require.Empty(t, m.configMaps, "foundry-config belongs to the base")
			require.Equal(t, []string{svc}, keys(m.deployments), "Deployments")
			if _, ok := services[svc]; ok {
				require.Equal(t, []string{svc, svc + "-grpc"}, keys(m.services), "Services: ClusterIP and headless")
			} else {
				require.Equal(t, []string{svc}, keys(m.services), "Services")
			}
			require.Equal(t, []string{svc}, keys(m.pdbs), "PodDisruptionBudgets")
			if _, ok := services[svc]; ok {
				require.Equal(t, []string{svc + "-migrate"}, keys(m.jobs), "Jobs")
			} else {
				require.Empty(t, m.jobs, "the gateway has no database")
			}
			for key, ns := range m.namespaced {
				require.Equal(t, "foundry", ns, "%s namespace", key)
			}
			ref := m.deployments[svc].Spec.Template.Spec.Containers[0].EnvFrom
			require.Len(t, ref, 1, "envFrom")
			require.Equal(t, "foundry-config", ref[0].ConfigMapRef.Name, "the shared ConfigMap, by its fixed name")
		})
	}
}

// kustomization writes a kustomization.yaml in a temporary directory whose
// paths (given relative to deploy/) are rewritten relative to it, and renders
// it.
func kustomization(t *testing.T, content string, paths ...string) *manifests {
	t.Helper()
	kubectl(t)
	dir := t.TempDir()
	wd, err := os.Getwd()
	require.NoError(t, err)
	for _, p := range paths {
		rel, err := filepath.Rel(dir, filepath.Join(wd, p))
		require.NoError(t, err)
		content = strings.ReplaceAll(content, "@"+p+"@", filepath.ToSlash(rel))
	}
	require.NotContains(t, content, "@", "unreplaced path")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(content), 0o600))
	return render(t, dir)
}

func TestComponentTelemetryDB(t *testing.T) {
	t.Parallel()
	m := kustomization(t, `
namespace: foundry
resources: ["@base@"]
components: ["@components/telemetry-db@"]
`, "base", "components/telemetry-db")
	m.checkCommon(t)
	m.checkSplit(t)
	for name, d := range m.deployments {
		env := m.effectiveEnv(t, d.Spec.Template.Spec.Containers[0])
		if name == "ops" {
			requireSecretRef(t, env, "RUNTIME_DATABASE_URL", "foundry-telemetry-database", "url", false)
			requireSecretRef(t, env, "FOUNDRY_DATABASE_URL", "foundry-database-ops", "url", false)
		} else {
			require.NotContains(t, env, "RUNTIME_DATABASE_URL", "%s has no telemetry database", name)
		}
	}
}

// endpoint is one end of a connection in the network-policy checks: a pod
// (its namespace and labels) or, with external, an address outside the
// cluster (a client, Postgres, a provider's API).
type endpoint struct {
	namespace string
	labels    map[string]string
	external  bool
}

func foundryPod(kv ...string) endpoint {
	l := map[string]string{"app.kubernetes.io/part-of": "foundry"}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return endpoint{namespace: "foundry", labels: l}
}

func server(name string) endpoint {
	return foundryPod("app.kubernetes.io/name", name, "app.kubernetes.io/component", "server")
}

var outside = endpoint{external: true}

// selectorMatches reports whether sel matches labels; a nil selector matches nothing.
func selectorMatches(t *testing.T, sel *metav1.LabelSelector, l map[string]string) bool {
	t.Helper()
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	require.NoError(t, err)
	return s.Matches(labels.Set(l))
}

// peerMatches is NetworkPolicyPeer semantics for the selectors Foundry uses
// (namespaceSelector {} counts every namespace; no ipBlock).
func peerMatches(t *testing.T, peer networkingv1.NetworkPolicyPeer, policyNS string, e endpoint) bool {
	require.Nil(t, peer.IPBlock, "the policies name no addresses; narrow them with a patch")
	if e.external {
		return false
	}
	if peer.NamespaceSelector == nil && e.namespace != policyNS {
		return false
	}
	if peer.NamespaceSelector != nil && !selectorMatches(t, peer.NamespaceSelector, map[string]string{"kubernetes.io/metadata.name": e.namespace}) {
		return false
	}
	return peer.PodSelector == nil || selectorMatches(t, peer.PodSelector, e.labels)
}

func portMatches(ports []networkingv1.NetworkPolicyPort, port int32) bool {
	if len(ports) == 0 {
		return true
	}
	return slices.ContainsFunc(ports, func(p networkingv1.NetworkPolicyPort) bool { return p.Port != nil && p.Port.IntVal == port })
}

// allowed reports whether the rendered policies let from open a TCP
// connection to port on to: the source's egress and the destination's
// ingress must both allow it (a pod no policy selects is not isolated).
func (m *manifests) allowed(t *testing.T, from, to endpoint, port int32) bool {
	t.Helper()
	pass := func(pod endpoint, kind networkingv1.PolicyType, other endpoint) bool {
		if pod.external {
			return true
		}
		isolated, ok := false, false
		for _, np := range m.netpols {
			if np.Namespace != pod.namespace || !slices.Contains(np.Spec.PolicyTypes, kind) ||
				!selectorMatches(t, &np.Spec.PodSelector, pod.labels) {
				continue
			}
			isolated = true
			if kind == networkingv1.PolicyTypeIngress {
				for _, r := range np.Spec.Ingress {
					ok = ok || (portMatches(r.Ports, port) && (len(r.From) == 0 ||
						slices.ContainsFunc(r.From, func(p networkingv1.NetworkPolicyPeer) bool { return peerMatches(t, p, np.Namespace, other) })))
				}
			} else {
				for _, r := range np.Spec.Egress {
					ok = ok || (portMatches(r.Ports, port) && (len(r.To) == 0 ||
						slices.ContainsFunc(r.To, func(p networkingv1.NetworkPolicyPeer) bool { return peerMatches(t, p, np.Namespace, other) })))
				}
			}
		}
		return !isolated || ok
	}
	return pass(from, networkingv1.PolicyTypeEgress, to) && pass(to, networkingv1.PolicyTypeIngress, from)
}

// TestComponentNetworkPolicy checks what the policies let through, path by
// path: Foundry's own paths open, everything else closed.
func TestComponentNetworkPolicy(t *testing.T) {
	t.Parallel()
	m := kustomization(t, `
namespace: foundry
resources: ["@base@"]
components: ["@components/network-policy@"]
`, "base", "components/network-policy")
	m.checkCommon(t)
	m.checkSplit(t)
	require.NotEmpty(t, m.netpols)

	elsewhere := endpoint{namespace: "other", labels: map[string]string{"app": "curious"}}
	prometheus := endpoint{namespace: "monitoring", labels: map[string]string{"app": "prometheus"}}
	dns := endpoint{namespace: "kube-system", labels: map[string]string{"k8s-app": "kube-dns"}}
	migration := foundryPod("app.kubernetes.io/name", "ledger", "app.kubernetes.io/component", "migration")
	svcs := keys(services)

	for _, c := range []struct {
		name     string
		from, to endpoint
		port     int32
		want     bool
	}{
		{"a client reaches the gateway", outside, server("gateway"), 8080, true},
		{"a client cannot reach a service", outside, server("ledger"), 9090, false},
		{"a client cannot reach the gateway's gRPC port", outside, server("gateway"), 9090, false},
		{"another namespace cannot reach a service", elsewhere, server("portfolio"), 9090, false},
		{"Prometheus scrapes the admin port", prometheus, server("ledger"), 9100, true},
		{"a client cannot reach the admin port", outside, server("gateway"), 9100, false},
		{"the agent calls the portfolio", server("agent"), server("portfolio"), 9090, true},
		{"ops calls the ledger", server("ops"), server("ledger"), 9090, true},
		{"the gateway cannot reach Postgres", server("gateway"), outside, 5432, false},
		{"the gateway cannot reach the internet", server("gateway"), outside, 443, false},
		{"a service cannot reach the internet", server("ledger"), outside, 443, false},
		{"ops reaches usage providers", server("ops"), outside, 443, true},
		{"a migration Job reaches Postgres", migration, outside, 5432, true},
		{"a migration Job cannot call a service", migration, server("ledger"), 9090, false},
		{"a service cannot call the gateway", server("ledger"), server("gateway"), 8080, false},
	} {
		require.Equal(t, c.want, m.allowed(t, c.from, c.to, c.port), c.name)
	}
	for _, svc := range svcs {
		require.True(t, m.allowed(t, server("gateway"), server(svc), 9090), "the gateway calls %s", svc)
		require.True(t, m.allowed(t, server(svc), outside, 5432), "%s reaches Postgres", svc)
		require.True(t, m.allowed(t, server(svc), dns, 53), "%s resolves names", svc)
	}
	require.True(t, m.allowed(t, server("gateway"), dns, 53), "the gateway resolves names")
	for _, mod := range modules {
		for _, peer := range mod.Dials {
			require.True(t, m.allowed(t, server(mod.Name), server(peer), 9090),
				"components/network-policy/network-policies.yaml must let %s call %s (the module dials it: app.Module.Peers)", mod.Name, peer)
		}
	}
}

func TestComponentHPA(t *testing.T) {
	t.Parallel()
	m := kustomization(t, `
namespace: foundry
resources: ["@base@"]
components: ["@components/hpa@"]
`, "base", "components/hpa")
	m.checkCommon(t)
	m.checkSplit(t)
	require.ElementsMatch(t, deployments, keys(m.hpas), "one HPA per Deployment")
	for name, d := range m.deployments {
		require.Nil(t, d.Spec.Replicas, "%s replicas belong to its HPA", name)
		h := m.hpas[name]
		require.NotNil(t, h.Spec.Behavior, "HPA %s behavior", name)
		require.NotNil(t, h.Spec.Behavior.ScaleDown, "HPA %s scale-down behavior", name)
		require.NotNil(t, h.Spec.Behavior.ScaleDown.StabilizationWindowSeconds, "HPA %s stabilization", name)
		require.Positive(t, *h.Spec.Behavior.ScaleDown.StabilizationWindowSeconds, "HPA %s stabilization", name)
	}
}

// TestImagesOverride shows that kustomize `images:` moves a service, its
// migration Job included, to another registry and tag.
func TestImagesOverride(t *testing.T) {
	t.Parallel()
	m := kustomization(t, `
resources: ["@overlays/production@"]
images:
  - name: ghcr.io/foundryhq/foundry-ledger
    newName: registry.example.com/foundry/ledger
    newTag: 1.2.3
`, "overlays/production")
	m.checkCommon(t)
	want := "registry.example.com/foundry/ledger:1.2.3"
	require.Equal(t, want, m.deployments["ledger"].Spec.Template.Spec.Containers[0].Image, "ledger Deployment image")
	require.Equal(t, want, m.jobs["ledger-migrate"].Spec.Template.Spec.Containers[0].Image, "ledger-migrate Job image")
	require.Equal(t, "ghcr.io/foundryhq/foundry-portfolio:0.1.0", m.deployments["portfolio"].Spec.Template.Spec.Containers[0].Image,
		"other images keep the production tag")
}

// TestDockerfile checks how the Dockerfile builds; TestModulesAreBuilt
// checks that it builds every module's binary, at the path the manifests
// run it from.
func TestDockerfile(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("Dockerfile")
	require.NoError(t, err)
	df := string(raw)
	require.Regexp(t, `(?m)^ARG SERVICE=ledger$`, df, "default SERVICE")
	require.Regexp(t, `(?m)^FROM gcr\.io/distroless/static:nonroot AS runtime$`, df, "runtime base")
	require.Regexp(t, `(?m)^FROM image-\$\{SERVICE\}$`, df, "final stage chosen by SERVICE")
	require.Contains(t, df, "CGO_ENABLED=0", "static binaries")
	require.Contains(t, df, "go build -trimpath", "trimpath")
}
