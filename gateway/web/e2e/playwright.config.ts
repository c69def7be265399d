// The dashboard's browser tests: Playwright driving the system's Chromium
// (never a browser Playwright downloads) against a real Foundry that
// global-setup.ts builds nothing for but starts, on free ports and a
// scratch data directory. Run them with `make test-browser`.
import { defineConfig } from "@playwright/test";
import { artifacts } from "./paths";

export default defineConfig({
  testDir: ".",
  testMatch: "*.spec.ts",
  outputDir: `${artifacts}/test-results`,
  globalSetup: "./global-setup.ts",
  // One Foundry and one browser at a time: the journeys share the
  // Foundry, and a laptop's two cores are enough.
  workers: 1,
  fullyParallel: false,
  forbidOnly: true,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [["list"]],
  use: {
    browserName: "chromium",
    launchOptions: { executablePath: process.env.FOUNDRY_CHROMIUM || "/usr/bin/chromium" },
    viewport: { width: 1280, height: 900 },
    locale: "en-GB",
    timezoneId: "UTC",
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
  },
});
