// Command image builds one container image per Foundry binary, without a
// Docker daemon, as tarballs (make image runs it with the Makefile's
// BINARIES):
//
//	go run ./deploy/cmd/image [-out dist/images] [-registry ghcr.io/foundryhq] [-version v0.2.0] name:package...
//
// Each lands in <out>/<name>.tar, tagged <registry>/foundry-<name>:<version>
// (the all-in-one foundry: <registry>/foundry:<version>); `docker load -i`,
// `crane push <tar> <ref>` and `skopeo copy docker-archive:<tar>
// docker://<ref>` read it. deploy/README.md, Building the images, says what
// is in an image.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"text/tabwriter"
	"time"

	"github.com/foundryhq/foundry/deploy/image"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run() error {
	var opts image.Options
	flag.StringVar(&opts.Out, "out", "dist/images", "directory the tarballs are written to, <name>.tar")
	flag.StringVar(&opts.Registry, "registry", image.DefaultRegistry, "registry and namespace of the images' names")
	flag.StringVar(&opts.Version, "version", "", "the release: the images' tag and version label, linked into the binaries (default: git describe --tags --always --dirty, or 0.0.0-dev outside git)")
	flag.StringVar(&opts.GOARCH, "arch", "", "the images' architecture, a GOARCH (default: this machine's)")
	flag.StringVar(&opts.CACerts, "ca-certs", image.DefaultCACerts, "the CA bundle copied into the images")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: image [flags] name:package... (make image passes the Makefile's BINARIES)")
		flag.PrintDefaults()
	}
	flag.Parse()
	bins, err := image.ParseBinaries(flag.Args())
	if err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	if opts.Root, err = image.Root(wd); err != nil {
		return err
	}
	opts.Log = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	results, err := image.Build(ctx, opts, bins)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "PATH\tREF\tDIGEST\tSIZE")
	for _, r := range results {
		_, _ = fmt.Fprintf(w, "%s\t%s\t%s\t%.1f MiB\n", r.Path, r.Ref, r.Digest, float64(r.Size)/(1<<20))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(results) > 0 {
		r := results[0]
		fmt.Printf("version %s, revision %s, created %s\n", r.Version, r.Revision, r.Created.Format(time.RFC3339))
		fmt.Println("push each with: crane push <path> <ref> (the digest above is what it pushes), or skopeo copy docker-archive:<path> docker://<ref>")
	}
	return nil
}
