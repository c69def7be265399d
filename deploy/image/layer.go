package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// file is one entry of a layer.
type file struct {
	// path is relative to the root, "etc/passwd"; a directory's ends in
	// "/".
	path     string
	mode     int64 // permission bits, 0o1000 sticky
	uid, gid int
	data     []byte
}

func (f file) dir() bool { return strings.HasSuffix(f.path, "/") }

// baseFiles are the files every image shares: the same bytes in every image
// of one build, so a registry stores the layer once.
func baseFiles(caCerts []byte) []file {
	root := func(path string, mode int64, data string) file {
		return file{path: path, mode: mode, data: []byte(data)}
	}
	return []file{
		root("etc/", 0o755, ""),
		// The users and groups of distroless' static image: root, and
		// nonroot, whom the images run as.
		root("etc/passwd", 0o644, "root:x:0:0:root:/root:/sbin/nologin\n"+
			fmt.Sprintf("nonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", nonroot, nonroot)),
		root("etc/group", 0o644, "root:x:0:\n"+fmt.Sprintf("nonroot:x:%d:\n", nonroot)),
		root("etc/ssl/", 0o755, ""),
		root("etc/ssl/certs/", 0o755, ""),
		{path: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: caCerts},
		root("home/", 0o755, ""),
		{path: "home/nonroot/", mode: 0o700, uid: nonroot, gid: nonroot},
		root("root/", 0o700, ""),
		root("tmp/", 0o1777, ""),
		root("usr/", 0o755, ""),
		root("usr/local/", 0o755, ""),
		root("usr/local/bin/", 0o755, ""),
	}
}

// binaryFiles is the binary's layer: the executable, and for the all-in-one
// the directory of its SQLite files, empty and writable by nonroot so that
// `docker run` works as is.
func binaryFiles(name string, binary []byte, allInOne bool) []file {
	files := []file{{path: "usr/local/bin/" + name, mode: 0o755, data: binary}}
	if allInOne {
		files = append(files, file{path: "data/", mode: 0o755, uid: nonroot, gid: nonroot})
	}
	return files
}

// layer writes files as a gzipped tar layer: entries sorted by path, every
// time mtime, no user or group names (the ids are what counts), so that
// the same files make the same digest.
func layer(files []file, mtime time.Time) (v1.Layer, error) {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.path, b.path) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i, f := range files {
		if i > 0 && files[i-1].path == f.path {
			return nil, fmt.Errorf("%s twice in a layer", f.path)
		}
		h := &tar.Header{
			Name:    f.path,
			Mode:    f.mode,
			Uid:     f.uid,
			Gid:     f.gid,
			ModTime: mtime,
			Format:  tar.FormatPAX,
		}
		if f.dir() {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	raw := buf.Bytes()
	return tarball.LayerFromOpener(
		func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil },
		tarball.WithMediaType(types.OCILayer),
		// Best compression saves under 1 % on a binary for three times
		// the time; the library's default (best speed) costs 10 %.
		tarball.WithCompressionLevel(gzip.DefaultCompression),
		// Compressed once, not again for the digest and for the tarball.
		tarball.WithCompressedCaching,
	)
}
