package image_test

import (
	"archive/tar"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/deploy/image"
)

var stamp = image.Stamp{Version: "1.2.3", Revision: "0123456789abcdef0123456789abcdef01234567", Created: time.Unix(1_700_000_000, 0).UTC()}

// TestAssemble: an image holds its binary, the CA bundle and the nonroot
// user, with the owners and modes the manifests' securityContext expects,
// and is the same image when assembled again (a rebuild of a commit pushes
// nothing new); the layer of shared files is the same in every image.
func TestAssemble(t *testing.T) {
	t.Parallel()
	ca := []byte("-----BEGIN CERTIFICATE-----\nnot really\n-----END CERTIFICATE-----\n")
	build := func(name string) v1.Image {
		img, err := image.Assemble(name, []byte("#!binary "+name), ca, "arm64", stamp)
		require.NoError(t, err)
		return img
	}
	foundry, ledger, gateway := build("foundry"), build("ledger"), build("gateway")

	again := build("foundry")
	d1, err := foundry.Digest()
	require.NoError(t, err)
	d2, err := again.Digest()
	require.NoError(t, err)
	require.Equal(t, d1, d2, "the same inputs make the same image")

	mt, err := foundry.MediaType()
	require.NoError(t, err)
	assert.Equal(t, types.OCIManifestSchema1, mt)
	m, err := foundry.Manifest()
	require.NoError(t, err)
	assert.Equal(t, types.OCIConfigJSON, m.Config.MediaType)
	require.Len(t, m.Layers, 2)
	for _, l := range m.Layers {
		assert.Equal(t, types.OCILayer, l.MediaType)
	}
	lm, err := ledger.Manifest()
	require.NoError(t, err)
	assert.Equal(t, m.Layers[0].Digest, lm.Layers[0].Digest, "every image shares the base layer")

	for _, c := range []struct {
		img            v1.Image
		name           string
		cmd            []string
		http, allInOne bool
	}{
		{foundry, "foundry", []string{"-target=all"}, true, true},
		{ledger, "ledger", nil, false, false},
		{gateway, "gateway", nil, true, false},
	} {
		cf, err := c.img.ConfigFile()
		require.NoError(t, err)
		assert.Equal(t, "linux", cf.OS)
		assert.Equal(t, "arm64", cf.Architecture)
		assert.Equal(t, stamp.Created, cf.Created.Time)
		cfg := cf.Config
		assert.Equal(t, []string{"/usr/local/bin/" + c.name}, cfg.Entrypoint, c.name)
		assert.Equal(t, c.cmd, cfg.Cmd, c.name)
		assert.Equal(t, "65532:65532", cfg.User, c.name)
		assert.Equal(t, "/", cfg.WorkingDir, c.name)
		assert.Subset(t, cfg.Env, []string{"FOUNDRY_GRPC_ADDR=:9090", "FOUNDRY_ADMIN_ADDR=:9100", "FOUNDRY_HTTP_ADDR=:8080"}, c.name)
		if c.allInOne {
			assert.Contains(t, cfg.Env, "FOUNDRY_DATA_DIR=/data")
		} else {
			assert.NotContains(t, strings.Join(cfg.Env, " "), "FOUNDRY_DATA_DIR", c.name)
		}
		ports := []string{"9090/tcp", "9100/tcp"}
		if c.http {
			ports = append(ports, "8080/tcp")
		}
		assert.ElementsMatch(t, ports, keys(cfg.ExposedPorts), c.name)
		title := "foundry-" + c.name
		if c.allInOne {
			title = "foundry"
		}
		assert.Equal(t, map[string]string{
			"org.opencontainers.image.title":       title,
			"org.opencontainers.image.description": cfg.Labels["org.opencontainers.image.description"],
			"org.opencontainers.image.source":      "https://github.com/foundryhq/foundry",
			"org.opencontainers.image.version":     "1.2.3",
			"org.opencontainers.image.revision":    stamp.Revision,
			"org.opencontainers.image.created":     "2023-11-14T22:13:20Z",
		}, cfg.Labels, c.name)

		root := t.TempDir()
		files := unpack(t, c.img, root)
		bin := files["usr/local/bin/"+c.name]
		require.NotNil(t, bin, "%s: no binary", c.name)
		assert.Equal(t, int64(0o755), bin.Mode, c.name)
		assert.Equal(t, 0, bin.Uid)
		got, err := os.ReadFile(filepath.Join(root, "usr/local/bin", c.name))
		require.NoError(t, err)
		assert.Equal(t, "#!binary "+c.name, string(got))
		got, err = os.ReadFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"))
		require.NoError(t, err)
		assert.Equal(t, ca, got, "the CA bundle is the machine's")
		passwd, err := os.ReadFile(filepath.Join(root, "etc/passwd"))
		require.NoError(t, err)
		assert.Contains(t, string(passwd), "\nnonroot:x:65532:65532:")
		assert.True(t, strings.HasPrefix(string(passwd), "root:x:0:0:"))
		group, err := os.ReadFile(filepath.Join(root, "etc/group"))
		require.NoError(t, err)
		assert.Equal(t, "root:x:0:\nnonroot:x:65532:\n", string(group))
		require.NotNil(t, files["tmp/"])
		assert.Equal(t, int64(0o1777), files["tmp/"].Mode, "/tmp is sticky and world-writable")
		if data := files["data/"]; c.allInOne {
			require.NotNil(t, data, "the all-in-one has /data")
			assert.Equal(t, [2]int{65532, 65532}, [2]int{data.Uid, data.Gid}, "nonroot owns /data")
		} else {
			assert.Nil(t, data, "%s: only the all-in-one has /data", c.name)
		}
		for p, h := range files {
			if p != "data/" && p != "home/nonroot/" {
				assert.Equal(t, [2]int{0, 0}, [2]int{h.Uid, h.Gid}, "%s: %s belongs to root", c.name, p)
			}
			assert.Equal(t, stamp.Created, h.ModTime.UTC(), "%s: %s has the commit's time", c.name, p)
		}
	}
}

// TestTarballKeepsTheImage: the tarball docker load, crane push and skopeo
// read holds the image's config (its ID) and layers as built.
func TestTarballKeepsTheImage(t *testing.T) {
	t.Parallel()
	img, err := image.Assemble("ledger", []byte("binary"), []byte("ca"), "amd64", stamp)
	require.NoError(t, err)
	tag, err := name.NewTag("registry.test/foundryhq/foundry-ledger:1.2.3")
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "ledger.tar")
	require.NoError(t, tarball.WriteToFile(p, tag, img))
	back, err := tarball.ImageFromPath(p, &tag)
	require.NoError(t, err)
	wantID, err := img.ConfigName()
	require.NoError(t, err)
	gotID, err := back.ConfigName()
	require.NoError(t, err)
	assert.Equal(t, wantID, gotID, "the image ID")
	want, err := img.Layers()
	require.NoError(t, err)
	got, err := back.Layers()
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i := range want {
		w, err := want[i].Digest()
		require.NoError(t, err)
		g, err := got[i].Digest()
		require.NoError(t, err)
		assert.Equal(t, w, g, "layer %d", i)
	}
}

func TestParseBinaries(t *testing.T) {
	t.Parallel()
	bins, err := image.ParseBinaries([]string{"foundry:./cmd/foundry", "ledger:./services/ledger/cmd/ledger"})
	require.NoError(t, err)
	assert.Equal(t, []image.Binary{{Name: "foundry", Package: "./cmd/foundry"}, {Name: "ledger", Package: "./services/ledger/cmd/ledger"}}, bins)
	for _, bad := range [][]string{nil, {"ledger"}, {":./x"}, {"a/b:./x"}, {"x:./a", "x:./b"}} {
		_, err := image.ParseBinaries(bad)
		assert.Error(t, err, "%q", bad)
	}
	assert.Equal(t, "ghcr.io/foundryhq/foundry", image.Repository("ghcr.io/foundryhq", "foundry"))
	assert.Equal(t, "ghcr.io/foundryhq/foundry-ledger", image.Repository("ghcr.io/foundryhq", "ledger"))
}

func TestDefaultCreated(t *testing.T) {
	t.Parallel()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "SOURCE_DATE_EPOCH" {
				return v
			}
			return ""
		}
	}
	got, err := image.DefaultCreated(t.Context(), t.TempDir(), env("1700000000"))
	require.NoError(t, err)
	assert.Equal(t, stamp.Created, got)
	got, err = image.DefaultCreated(t.Context(), t.TempDir(), env(""))
	require.NoError(t, err)
	assert.Equal(t, time.Unix(0, 0).UTC(), got, "outside git, without SOURCE_DATE_EPOCH: the epoch, never the clock")
	_, err = image.DefaultCreated(t.Context(), t.TempDir(), env("yesterday"))
	assert.ErrorContains(t, err, "SOURCE_DATE_EPOCH")
	assert.Equal(t, "0.0.0-dev", image.DefaultVersion(t.Context(), t.TempDir()), "outside git")
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// unpack writes the image's layers, in order, into the directory root, as
// a container runtime would (without whiteouts, which Foundry's images do
// not have, and without changing owners), and returns every entry's header
// by path (directories end in "/").
func unpack(t *testing.T, img v1.Image, root string) map[string]*tar.Header {
	t.Helper()
	layers, err := img.Layers()
	require.NoError(t, err)
	files := map[string]*tar.Header{}
	for i, l := range layers {
		rc, err := l.Uncompressed()
		require.NoError(t, err)
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "layer %d", i)
			clean := path.Clean(h.Name)
			require.False(t, path.IsAbs(h.Name) || clean == ".." || strings.HasPrefix(clean, "../"),
				"layer %d: %q leaves the root", i, h.Name)
			require.False(t, strings.HasPrefix(path.Base(clean), ".wh."), "layer %d: whiteout %q", i, h.Name)
			dst := filepath.Join(root, filepath.FromSlash(clean))
			mode := h.FileInfo().Mode()
			switch h.Typeflag {
			case tar.TypeDir:
				files[clean+"/"] = h
				require.NoError(t, os.MkdirAll(dst, 0o755))
				require.NoError(t, os.Chmod(dst, mode&(fs.ModePerm|fs.ModeSticky)))
			case tar.TypeReg:
				files[clean] = h
				require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
				f, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode.Perm())
				require.NoError(t, err)
				_, err = io.Copy(f, tr)
				require.NoError(t, err)
				require.NoError(t, f.Close())
			default:
				t.Fatalf("layer %d: %q is of type %q, which Foundry's images do not hold", i, h.Name, h.Typeflag)
			}
		}
		require.NoError(t, rc.Close())
	}
	return files
}
