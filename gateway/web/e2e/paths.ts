// Where the tests find Foundry and put what they leave behind.
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

/** root is the repository's root. */
export const root = path.resolve(here, "..", "..", "..");

/** artifacts holds screenshots, traces and Foundry's log (git-ignored). */
export const artifacts = path.join(root, ".cache", "browser");

/** foundryBinary is what `make test-browser` builds before the tests. */
export const foundryBinary = process.env.FOUNDRY_BIN || path.join(root, "bin", "foundry");
