// The tests' side of Foundry: seeding through the REST API, and the test
// fixture that points each page at the running Foundry and fails a test
// on any console error (a CSP violation is one).
import { expect, test as base, type Locator, type Page } from "@playwright/test";
import { createHmac, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { artifacts } from "./paths";

function setting(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run the tests through playwright.config.ts (global-setup.ts)`);
  return v;
}

export const baseURL = () => setting("FOUNDRY_BASE_URL");

export interface Answer<T> {
  status: number;
  body: T;
}

/**
 * call sends one request to the REST API and returns the status and JSON.
 * Writes go as the administrator unless headers are given (a contributor's
 * session, {} for none); reads go without a credential unless given one.
 */
export async function call<T = Record<string, unknown>>(
  method: string,
  route: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Answer<T>> {
  const init: RequestInit = { method, headers: { ...(headers ?? (method === "GET" ? {} : admin())) } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)["Content-Type"] = "application/json";
  }
  const res = await fetch(baseURL() + route, init);
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

/** must is call that expects a status and returns the body. */
export async function must<T = Record<string, unknown>>(
  want: number,
  method: string,
  route: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<T> {
  const r = await call<T>(method, route, body, headers);
  expect(r.status, `${method} ${route}: ${JSON.stringify(r.body)}`).toBe(want);
  return r.body;
}

export const admin = () => ({ "X-API-Key": setting("FOUNDRY_TEST_ADMIN_KEY") });

export interface IdeaSeed {
  name: string;
  potential_value: number;
  estimated_cost: number;
  confidence: number;
  stage?: string;
  description?: string;
}

/** score is the portfolio's formula (docs/portfolio.md), default resistance 1. */
export const score = (i: IdeaSeed) => (i.potential_value * i.confidence) / Math.max(i.estimated_cost + 1, 0.5);

export async function createIdea(seed: IdeaSeed): Promise<string> {
  const idea = await must<{ id: string }>(201, "POST", "/api/ideas", seed);
  return idea.id;
}

/**
 * freeze signs an emergency freeze as the run's signer, issued now with a
 * new nonce: HMAC-SHA256 of signer_id|issued_at|nonce|reason (docs/ledger.md).
 */
export async function freeze(reason: string) {
  const [id, secret] = setting("FOUNDRY_TEST_SIGNER").split(":");
  const issued_at = new Date().toISOString(); // RFC 3339 in UTC
  const nonce = randomBytes(16).toString("hex");
  const signature = createHmac("sha256", secret).update(`${id}|${issued_at}|${nonce}|${reason}`).digest("hex");
  return call("POST", "/api/incidents/freeze", { signer_id: id, issued_at, nonce, reason, signature }, {});
}

export async function unfreeze() {
  return call("POST", "/api/incidents/unfreeze", { reason: "the browser test is over" }, admin());
}

/**
 * signIn signs the page in through the header's form, as a reader would,
 * and waits until the page says who it is.
 */
export async function signIn(page: Page, value: string, as: RegExp | string) {
  await page.getByRole("banner").getByRole("button", { name: "Sign in", exact: true }).click();
  const form = page.getByRole("form", { name: "Sign in" });
  await form.getByLabel("Token or administrator key").fill(value);
  await form.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByTestId("auth-who")).toHaveText(as);
}

/** axeSource is axe-core's browser build, evaluated into pages under test. */
export const axeSource = readFileSync(
  path.join(path.dirname(createRequire(import.meta.url).resolve("axe-core")), "axe.min.js"),
  "utf8",
);

/** shot saves a screenshot among the run's artifacts. */
export async function shot(page: Page, name: string, fullPage = true) {
  await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage });
}

/** shotOf saves a screenshot of one part of the page (a section, a chart). */
export async function shotOf(part: Locator, name: string) {
  await part.screenshot({ path: path.join(artifacts, `${name}.png`) });
}

/**
 * utcDays are the last n UTC dates, oldest first, today last: the days of
 * the API's daily series.
 */
export function utcDays(n: number, now = Date.now()): string[] {
  return Array.from({ length: n }, (_, i) => new Date(now - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

export const test = base.extend<{ consoleErrors: string[] }>({
  baseURL: async ({}, use) => use(baseURL()),
  // Automatic: every test fails when its page logged an error.
  consoleErrors: [
    async ({ page }, use) => {
      const errors: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(m.text());
      });
      page.on("pageerror", (e) => errors.push(String(e)));
      await use(errors);
      expect(errors, "the page logged errors (a CSP violation, a failed request, an exception)").toEqual([]);
    },
    { auto: true },
  ],
});

export { expect };
