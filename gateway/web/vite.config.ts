// The dashboard's build. The output (dist/) is committed and embedded in
// the gateway binary, which serves index.html at / and every other file
// under /ui/; `make check-web` rebuilds it and compares, so the build must
// be deterministic: no timestamps, no source maps with absolute paths.
import { defineConfig } from "vite";

export default defineConfig({
  base: "/ui/",
  oxc: {
    jsx: { runtime: "automatic", importSource: "preact" },
  },
  // `npx vite` serves the sources with live reload at /ui/ and sends /api
  // to a Foundry started with `make run` (FOUNDRY_URL to use another).
  server: {
    proxy: { "/api": process.env.FOUNDRY_URL || "http://127.0.0.1:8080" },
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // Flat output: dist/index.html and dist/<name>-<hash>.<ext>; every
    // name but index.html carries a content hash, so the gateway may let
    // browsers cache them for good.
    assetsDir: "",
    // Never turn an asset into a data: URL: the page's CSP allows files
    // from 'self' only.
    assetsInlineLimit: 0,
    // One small entry chunk: nothing to preload, so no polyfill either.
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: "es2022",
    reportCompressedSize: false,
  },
});
