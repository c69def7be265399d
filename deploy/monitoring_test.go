package deploy_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// unstructuredObject is an object whose kind this module has no Go type
// for: its metadata, and the rest as decoded JSON.
type unstructuredObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              map[string]any `json:"spec"`
}

// promtool is Prometheus' rule checker (Debian's prometheus package; CI
// installs it). Without it the rules are not checked: a skip on a laptop,
// a failure in CI, where it must be there.
func promtool(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is not installed: .ci/run installs Debian's prometheus package, which has it")
		}
		t.Skip("promtool is not installed (apt-get install prometheus): the alert rules are not checked")
	}
	return bin
}

// documentedMetrics are the metric names docs/observability.md lists (in
// backticks), so an alert or a dashboard panel cannot name a metric no
// service exports.
func documentedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	doc, err := os.ReadFile("../docs/observability.md")
	require.NoError(t, err)
	out := map[string]bool{"up": true} // Prometheus' own, per target
	for _, m := range regexp.MustCompile("`((?:foundry|http_server)_[a-z0-9_]+)").FindAllStringSubmatch(string(doc), -1) {
		out[m[1]] = true
	}
	return out
}

// metricNames are the metric names an expression reads (a histogram's
// series by the histogram's name).
func metricNames(expr string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`\b((?:foundry|http_server)_[a-z0-9_]+|up)\b`).FindAllString(expr, -1) {
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			if base, ok := strings.CutSuffix(m, suffix); ok && strings.HasPrefix(m, "http_server") {
				m = base
			}
		}
		out = append(out, m)
	}
	return out
}

// TestComponentMonitoring: a ServiceMonitor scrapes each Deployment's
// metrics port; the alerts pass promtool's checks and their unit tests
// (alerts_test.yaml: each fires on series that should page, and not on
// series that should not); alerts and dashboard read only documented
// metrics.
func TestComponentMonitoring(t *testing.T) {
	t.Parallel()
	m := kustomization(t, `
namespace: foundry
resources: ["@base@"]
components: ["@components/monitoring@"]
`, "base", "components/monitoring")
	m.checkCommon(t)
	known := documentedMetrics(t)

	for _, d := range deployments {
		sm := m.others["ServiceMonitor/"+d]
		require.NotNil(t, sm, "no ServiceMonitor for %s", d)
		require.Equal(t, "foundry", sm.Namespace, "ServiceMonitor %s namespace", d)
		raw, err := json.Marshal(sm.Spec)
		require.NoError(t, err)
		var spec struct {
			Selector  metav1.LabelSelector `json:"selector"`
			Endpoints []struct {
				Port, Path, Interval string
			} `json:"endpoints"`
		}
		require.NoError(t, json.Unmarshal(raw, &spec))
		require.Len(t, spec.Endpoints, 1, "ServiceMonitor %s endpoints", d)
		require.Equal(t, "metrics", spec.Endpoints[0].Port, "ServiceMonitor %s port", d)
		require.Equal(t, "/metrics", spec.Endpoints[0].Path, "ServiceMonitor %s path", d)
		// It selects Services of this Deployment only, and among them
		// exactly one has the metrics port: one target per pod.
		var withMetrics []string
		for name, s := range m.services {
			if !selects(t, spec.Selector.MatchLabels, s.Labels) {
				continue
			}
			require.True(t, selects(t, s.Spec.Selector, m.deployments[d].Spec.Template.Labels),
				"ServiceMonitor %s selects Service %s of another Deployment", d, name)
			if slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == "metrics" }) {
				withMetrics = append(withMetrics, name)
			}
		}
		require.Equal(t, []string{d}, withMetrics, "ServiceMonitor %s: the Services with a metrics port it selects", d)
	}

	rule := m.others["PrometheusRule/foundry"]
	require.NotNil(t, rule, "PrometheusRule foundry")
	groups, err := yaml.Marshal(map[string]any{"groups": rule.Spec["groups"]})
	require.NoError(t, err)
	var parsed struct {
		Groups []struct {
			Rules []struct {
				Alert, Expr string
				Labels      map[string]string
			}
		}
	}
	require.NoError(t, yaml.Unmarshal(groups, &parsed))
	var alerts []string
	for _, g := range parsed.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			require.Contains(t, []string{"critical", "warning"}, r.Labels["severity"], "alert %s severity", r.Alert)
			for _, name := range metricNames(r.Expr) {
				require.True(t, known[name], "alert %s reads %s, which docs/observability.md does not list", r.Alert, name)
			}
		}
	}
	tests, err := os.ReadFile("components/monitoring/alerts_test.yaml")
	require.NoError(t, err)
	for _, a := range alerts {
		require.Contains(t, string(tests), "alertname: "+a, "alerts_test.yaml does not test %s", a)
	}

	dash := m.configMaps["foundry-grafana-dashboard"]
	require.NotNil(t, dash, "the Grafana dashboard's ConfigMap")
	require.Equal(t, "1", dash.Labels["grafana_dashboard"], "the label Grafana's dashboard sidecar loads")
	var board struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal([]byte(dash.Data["foundry.json"]), &board))
	require.Equal(t, "foundry-overview", board.UID)
	for _, p := range board.Panels {
		for _, target := range p.Targets {
			for _, name := range metricNames(target.Expr) {
				require.True(t, known[name], "panel %q reads %s, which docs/observability.md does not list", p.Title, name)
			}
		}
	}

	// promtool reads plain rule files: the PrometheusRule's groups, as
	// rules.yaml beside the unit tests, which name that file.
	bin := promtool(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rules.yaml"), groups, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "alerts_test.yaml"), tests, 0o600))
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "alerts_test.yaml"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
		require.Contains(t, string(out), "SUCCESS", "promtool %s", strings.Join(args, " "))
	}
}

// TestComponentGatewayAPI: the HTTPRoute sends its host to the gateway
// Service's HTTP port, and to nothing else.
func TestComponentGatewayAPI(t *testing.T) {
	t.Parallel()
	m := kustomization(t, `
namespace: foundry
resources: ["@base@"]
components: ["@components/gateway-api@"]
`, "base", "components/gateway-api")
	m.checkCommon(t)
	m.checkSplit(t)
	route := m.others["HTTPRoute/foundry"]
	require.NotNil(t, route, "HTTPRoute foundry")
	require.Equal(t, "foundry", route.Namespace)
	raw, err := json.Marshal(route.Spec)
	require.NoError(t, err)
	var spec struct {
		ParentRefs []struct{ Kind, Name string } `json:"parentRefs"`
		Hostnames  []string                      `json:"hostnames"`
		Rules      []struct {
			BackendRefs []struct {
				Kind, Name string
				Port       int32
			} `json:"backendRefs"`
		} `json:"rules"`
	}
	require.NoError(t, json.Unmarshal(raw, &spec))
	require.Len(t, spec.ParentRefs, 1)
	require.Equal(t, "Gateway", spec.ParentRefs[0].Kind)
	require.NotEmpty(t, spec.Hostnames)
	require.NotEmpty(t, spec.Rules)
	for _, r := range spec.Rules {
		require.Len(t, r.BackendRefs, 1)
		b := r.BackendRefs[0]
		require.Equal(t, "Service", b.Kind)
		s := m.services[b.Name]
		require.NotNil(t, s, "the route's backend Service %s", b.Name)
		require.True(t, selects(t, s.Spec.Selector, m.deployments["gateway"].Spec.Template.Labels), "the backend is the gateway's Service")
		require.True(t, slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == "http" && p.Port == b.Port }),
			"the route targets the gateway's http port, not %d", b.Port)
	}
}
