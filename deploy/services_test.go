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
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// The module list (allinone.Modules) is the one place a service is
// declared. The tests here hold every other file that lists the services
// against it, so a service added there and forgotten in one of them fails
// with the file's name and what it lacks (every file in one run: the list
// checks do not stop at the first miss); manifests_test.go checks the
// rendered manifests of every module the list names.

// module is one module as `go run ./modules` (in cmd/)
// prints it.
type module struct {
	Name     string   `json:"name"`
	Service  string   `json:"service"`
	Database bool     `json:"database"`
	Routes   bool     `json:"routes"`
	Peers    []string `json:"peers"`
	Dials    []string `json:"dials"`
}

// TestMain reads the module list, which every test here checks against.
func TestMain(m *testing.M) {
	mods, err := readModules()
	if err != nil {
		fmt.Fprintln(os.Stderr, "deploy: the module list:", err)
		os.Exit(1)
	}
	modules = mods
	services, peerEnv = map[string]string{}, map[string]string{}
	for _, mod := range mods {
		deployments = append(deployments, mod.Name)
		if mod.Service != "" {
			services[mod.Name] = mod.Service
			peerEnv[mod.Name] = addrVar(mod.Name)
		}
	}
	os.Exit(m.Run())
}

// readModules runs the modules command (cmd/modules), in the module that
// holds it (so it also works outside the workspace, GOWORK=off).
func readModules() ([]module, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(goBin, "run", "./modules")
	cmd.Dir = filepath.Join("..", "cmd")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go run ./modules in %s: %w\n%s", cmd.Dir, err, stderr.String())
	}
	var mods []module
	if err := json.Unmarshal(stdout.Bytes(), &mods); err != nil {
		return nil, fmt.Errorf("go run ./modules printed no module list: %w", err)
	}
	if len(mods) == 0 {
		return nil, errors.New("go run ./modules printed no module")
	}
	return mods, nil
}

// addrVar is the variable holding a service's address (app.Settings).
func addrVar(name string) string {
	return "FOUNDRY_" + strings.ToUpper(name) + "_ADDR"
}

// moduleNames are the names of the modules serve selects (all when nil).
func moduleNames(serve func(module) bool) []string {
	var out []string
	for _, m := range modules {
		if serve == nil || serve(m) {
			out = append(out, m.Name)
		}
	}
	return out
}

func servesGRPC(m module) bool { return m.Service != "" }

// allinoneBinary is the binary that runs any set of modules; it is no
// module of its own.
const allinoneBinary = "foundry"

// makeBinaries reads the Makefile's BINARIES (name:package, continued over
// lines): binary name -> main package.
func makeBinaries(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "Makefile"))
	require.NoError(t, err)
	var def strings.Builder
	in := false
	for line := range strings.Lines(string(raw)) {
		line = strings.TrimRight(line, "\n")
		if !in && !strings.HasPrefix(line, "BINARIES :=") {
			continue
		}
		in = true
		def.WriteString(strings.TrimSuffix(strings.TrimPrefix(line, "BINARIES :="), "\\") + " ")
		if !strings.HasSuffix(line, "\\") {
			break
		}
	}
	require.True(t, in, "Makefile: no BINARIES := line")
	out := map[string]string{}
	for _, field := range strings.Fields(def.String()) {
		name, pkg, ok := strings.Cut(field, ":")
		require.True(t, ok, "Makefile: BINARIES entry %q is not name:package", field)
		out[name] = pkg
	}
	return out
}

// dockerArm is a case of the Dockerfile's build stage: binaries -> package.
var dockerArm = regexp.MustCompile(`(?m)^\s+([a-z|]+)\) pkg="?([^";]+)"? ;;`)

// TestModulesAreBuilt: the Makefile builds a binary for every module, from a
// main package that exists, and the Dockerfile builds each the same way
// into an image of its own.
func TestModulesAreBuilt(t *testing.T) {
	t.Parallel()
	bins := makeBinaries(t)
	want := append(moduleNames(nil), allinoneBinary)
	for _, name := range want {
		pkg, ok := bins[name]
		assert.True(t, ok, "Makefile: BINARIES builds no binary for the module %s (add %s:./services/%s/cmd/%s)", name, name, name, name)
		if ok {
			_, err := os.Stat(filepath.Join("..", pkg, "main.go"))
			assert.NoError(t, err, "Makefile: BINARIES builds %s from %s, which has no main.go", name, pkg)
		}
	}
	for name := range bins {
		assert.Contains(t, want, name, "Makefile: BINARIES builds %s, which is no module of allinone.Modules", name)
	}

	raw, err := os.ReadFile("Dockerfile")
	require.NoError(t, err)
	df := string(raw)
	arms := dockerArm.FindAllStringSubmatch(df, -1)
	for _, name := range want {
		i := slices.IndexFunc(arms, func(a []string) bool { return slices.Contains(strings.Split(a[1], "|"), name) })
		if !assert.GreaterOrEqual(t, i, 0, "deploy/Dockerfile: the build stage has no case for the module %s", name) {
			continue
		}
		assert.Equal(t, bins[name], strings.ReplaceAll(arms[i][2], "$SERVICE", name),
			"deploy/Dockerfile builds %s from another package than the Makefile does", name)
		assert.Contains(t, df, fmt.Sprintf("FROM runtime AS image-%s\nCOPY --from=build /out/%s /usr/local/bin/%s\n", name, name, name),
			"deploy/Dockerfile: no stage image-%s for the module %s", name, name)
		assert.Contains(t, df, fmt.Sprintf(`ENTRYPOINT ["/usr/local/bin/%s"]`, name), "deploy/Dockerfile: no entrypoint for %s", name)
	}
	unknown := regexp.MustCompile(`unknown SERVICE '\$SERVICE': want ([^"]*)"`).FindStringSubmatch(df)
	require.NotNil(t, unknown, "deploy/Dockerfile: no message for an unknown SERVICE")
	for _, name := range want {
		assert.Regexp(t, `\b`+name+`\b`, unknown[1], "deploy/Dockerfile: the unknown-SERVICE message does not offer %s", name)
	}
}

// TestModulesAreDeployed: the base kustomization deploys every module and
// gives every pod each service's address; the overlays and the HPA
// component name every module they set something for; every service list
// of the network policies names every service.
func TestModulesAreDeployed(t *testing.T) {
	t.Parallel()
	names := moduleNames(nil)

	const base = "base/kustomization.yaml"
	var k struct {
		Resources          []string `json:"resources"`
		ConfigMapGenerator []struct {
			Name     string   `json:"name"`
			Literals []string `json:"literals"`
		} `json:"configMapGenerator"`
	}
	readYAML(t, base, &k)
	for _, name := range names {
		assert.Contains(t, k.Resources, name, "deploy/%s: resources lack the module %s (its directory base/%s)", base, name, name)
		_, err := os.Stat(filepath.Join("base", name, "kustomization.yaml"))
		assert.NoError(t, err, "deploy/%s: the module %s has no base/%s/kustomization.yaml", base, name, name)
	}
	for _, r := range k.Resources {
		if !strings.HasSuffix(r, ".yaml") {
			assert.Contains(t, names, r, "deploy/%s deploys %s, which is no module of allinone.Modules", base, r)
		}
	}
	var literals []string
	for _, g := range k.ConfigMapGenerator {
		if g.Name == "foundry-config" {
			literals = g.Literals
		}
	}
	for _, name := range moduleNames(servesGRPC) {
		want := addrVar(name) + "=dns:///" + name + "-grpc:9090"
		assert.Contains(t, literals, want, "deploy/%s: foundry-config lacks %s, the address of the service %s", base, want, name)
	}

	const production = "overlays/production/kustomization.yaml"
	var prod struct {
		Images []named `json:"images"`
	}
	readYAML(t, production, &prod)
	const dev = "overlays/dev/kustomization.yaml"
	var dv struct {
		Replicas []named `json:"replicas"`
	}
	readYAML(t, dev, &dv)
	const hpa = "components/hpa/hpa.yaml"
	hpas := map[string]bool{}
	for _, doc := range yamlDocs(t, hpa) {
		var o metav1.PartialObjectMetadata
		require.NoError(t, yaml.Unmarshal(doc, &o), "deploy/%s", hpa)
		hpas[o.Name] = true
	}
	for _, name := range names {
		image := "ghcr.io/foundryhq/foundry-" + name
		assert.Contains(t, prod.Images, named{image}, "deploy/%s: images do not pin %s (the module %s)", production, image, name)
		assert.Contains(t, dv.Replicas, named{name}, "deploy/%s: replicas lack the module %s", dev, name)
		assert.True(t, hpas[name], "deploy/%s: no HorizontalPodAutoscaler for the module %s", hpa, name)
	}

	const netpol = "components/network-policy/network-policies.yaml"
	grpcServices := moduleNames(servesGRPC)
	for _, doc := range yamlDocs(t, netpol) {
		var np networkingv1.NetworkPolicy
		require.NoError(t, yaml.Unmarshal(doc, &np), "deploy/%s", netpol)
		check := func(where string, sel *metav1.LabelSelector) {
			if sel == nil {
				return
			}
			for _, e := range sel.MatchExpressions {
				if e.Key != "app.kubernetes.io/name" || e.Operator != metav1.LabelSelectorOpIn {
					continue
				}
				for _, name := range grpcServices {
					assert.Contains(t, e.Values, name, "deploy/%s: NetworkPolicy %s, %s: the list %v lacks the service %s",
						netpol, np.Name, where, e.Values, name)
				}
			}
		}
		check("podSelector", &np.Spec.PodSelector)
		for _, r := range np.Spec.Ingress {
			for _, p := range r.From {
				check("ingress from", p.PodSelector)
			}
		}
		for _, r := range np.Spec.Egress {
			for _, p := range r.To {
				check("egress to", p.PodSelector)
			}
		}
	}
}

// named is an entry of a kustomization list (images, replicas) by its name.
type named struct {
	Name string `json:"name"`
}

// readYAML decodes the file at path (under deploy/) into out.
func readYAML(t *testing.T, path string, out any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(raw, out), "deploy/%s", path)
}

// yamlDocs returns the documents of the YAML file at path (under deploy/).
func yamlDocs(t *testing.T, path string) [][]byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var docs [][]byte
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "deploy/%s", path)
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
	require.NotEmpty(t, docs, "deploy/%s has no document", path)
	return docs
}
