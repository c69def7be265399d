// The dashboard's main journeys in a real browser against a real Foundry:
// rank and open an idea, sign in and advance it; what each role is shown,
// a wrong key, a revoked token and a Foundry whose reads are not public;
// find a failed task's diagnosis; see a signed freeze arrive by itself;
// and the page's accessibility and phone layout. The tests run in order on one Foundry (workers: 1), each seeding
// what it looks for through the REST API.
import type { Page } from "@playwright/test";
import {
  admin,
  axeSource,
  call,
  createIdea,
  expect,
  freeze,
  must,
  score,
  shot,
  signIn,
  test,
  unfreeze,
  type IdeaSeed,
} from "./foundry";
import { startFoundry } from "./start";

const portfolio: (IdeaSeed & { questions?: number })[] = [
  { name: "Self-serve onboarding", potential_value: 90, estimated_cost: 2, confidence: 0.9, stage: "testing" },
  { name: "Offline-first mobile client", potential_value: 120, estimated_cost: 3, confidence: 0.8, stage: "implementing" },
  { name: "Usage-based billing", potential_value: 200, estimated_cost: 5, confidence: 0.6, stage: "specced" },
  { name: "Audit log export", potential_value: 40, estimated_cost: 1, confidence: 0.9, stage: "reviewing" },
  { name: "Dark mode", potential_value: 15, estimated_cost: 0.5, confidence: 0.95, stage: "complete" },
  // Ten open questions make an idea too large: right-sizing proposes a split.
  { name: "Plugin marketplace", potential_value: 150, estimated_cost: 8, confidence: 0.3, questions: 10 },
  { name: "GraphQL gateway", potential_value: 60, estimated_cost: 6, confidence: 0.4 },
];

/** POLL_MS is the page's refresh interval (src/live.tsx). */
const POLL_MS = 5000;

/** views are the dashboard's pages, by hash; the idea's is filled in once seeded. */
const views = { portfolio: "/#/", pipeline: "/#/pipeline", ledger: "/#/ledger", idea: "" };

test("the portfolio ranks ideas by score, in stage columns, with right-sizing", async ({ page }) => {
  for (const seed of portfolio) {
    const { questions, ...idea } = seed;
    const id = await createIdea({ ...idea, description: `${idea.name}: seeded by the browser test.` });
    for (let i = 0; i < (questions ?? 0); i++) {
      await must(201, "POST", `/api/ideas/${id}/questions`, { question: `Open question ${i + 1}?` });
    }
  }
  const ranked = [...portfolio].sort((a, b) => score(b) - score(a)).map((i) => i.name);

  const res = await page.goto("/");
  expect(res?.status()).toBe(200);
  expect(res?.headers()["content-type"]).toBe("text/html; charset=utf-8");
  expect(res?.headers()["content-security-policy"]).toContain("script-src 'self'");
  await expect(page).toHaveTitle("Portfolio · Foundry");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Portfolio");

  const rows = page.locator("table.ranking tbody tr th");
  await expect(rows).toHaveText(ranked);

  // One column per stage, each holding that stage's ideas.
  const testing = page.getByRole("region", { name: /^testing/ });
  await expect(testing.getByRole("link")).toHaveText(["Self-serve onboarding"]);
  const none = page.getByRole("region", { name: /^none/ });
  await expect(none.getByRole("link")).toHaveText(["Plugin marketplace", "GraphQL gateway"]);

  // Right-sizing: the split suggestion and the in-progress ideas without work.
  const sizing = page.getByRole("region", { name: "Right-sizing", exact: true });
  await expect(sizing.getByRole("listitem").filter({ hasText: "Split" })).toContainText("Plugin marketplace");
  await expect(page.locator("tr", { hasText: "Audit log export" })).toContainText("too small");
  await expect(page.locator("tr", { hasText: "Plugin marketplace" })).toContainText("too large");

  await shot(page, "dashboard", false);
});

test("open an idea from the ranking, see its stakes and tasks, and advance it", async ({ page }) => {
  const id = await createIdea({ name: "Carbon-aware scheduler", potential_value: 300, estimated_cost: 2, confidence: 0.9 });
  views.idea = `/#/ideas/${id}`;
  const who = await must<{ contributor_id: string; session_token: string }>(201, "POST", "/api/onboarding/register", {
    handle: "browser_staker",
  });
  await must(201, "POST", "/api/cc/deposit", { contributor_id: who.contributor_id, amount_usd: 10, reference: "browser-1" }, admin());
  await must(201, "POST", "/api/cc/stake", { contributor_id: who.contributor_id, idea_id: id, amount_cc: 50 }, {
    Authorization: `Bearer ${who.session_token}`,
  });
  await must(201, "POST", "/api/agent/tasks", {
    direction: "Write the scheduler's spec",
    task_type: "spec",
    context: { idea_id: id },
  });

  await page.goto("/");
  await page.locator("table.ranking").getByRole("link", { name: "Carbon-aware scheduler" }).click();
  await expect(page).toHaveURL(new RegExp(`#/ideas/${id}$`));
  const h1 = page.getByRole("heading", { level: 1 });
  await expect(h1).toHaveText("Carbon-aware scheduler");
  // Navigation puts focus on the new view's heading, as a page load would.
  await expect(h1).toBeFocused();
  await expect(page.getByTestId("idea-stage")).toHaveText("none");

  const stakes = page.getByRole("region", { name: "Stakes", exact: true });
  await expect(stakes.locator("dd").first()).toHaveText("50 CC");
  await expect(stakes.getByRole("table")).toContainText("stake");
  await expect(stakes.getByRole("table")).toContainText(who.contributor_id);
  const tasks = page.getByRole("region", { name: "Tasks", exact: true });
  await expect(tasks.getByRole("row", { name: /Write the scheduler's spec/ })).toContainText("pending");

  // Advancing needs an operator: the page shows the button once signed in.
  await signIn(page, admin()["X-API-Key"], "the administrator key");
  await expect(page.getByTestId("auth-role")).toHaveText("admin");
  await page.getByRole("button", { name: "Advance" }).click();
  await expect(page.getByTestId("idea-stage")).toHaveText("specced");
  await expect(page.getByRole("status").filter({ hasText: "Advanced" })).toHaveText("Advanced to specced.");
  await expect(page.locator(".stepper [aria-current=step]")).toContainText("specced");
  const after = await must<{ stage: string }>(200, "GET", `/api/ideas/${id}`);
  expect(after.stage).toBe("specced");
  await shot(page, "idea");
});

/** axeViolations runs axe-core's WCAG 2.1 A/AA and best-practice rules on the page. */
async function axeViolations(page: Page) {
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const r = await axe.run(document, { runOnly: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] });
    return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
}

/** only401s checks that every console error is the browser logging a 401, and forgets them. */
function only401s(consoleErrors: string[]) {
  expect(consoleErrors.length, "the browser logged the 401").toBeGreaterThan(0);
  expect(consoleErrors.every((e) => e.includes("401")), consoleErrors.join("\n")).toBe(true);
  consoleErrors.length = 0;
}

test("Advance shows only to a role that may advance; a wrong key says why", async ({ page, consoleErrors }) => {
  expect(views.idea, "the idea journey ran first").not.toBe("");
  const advance = page.getByRole("button", { name: "Advance" });
  const banner = page.getByRole("banner");

  // Signed out: no Advance at all (not a disabled one), and a hint instead.
  await page.goto(views.idea);
  await expect(page.getByTestId("idea-stage")).toHaveText("specced");
  await expect(page.getByTestId("advance-hint")).toContainText("Sign in as an operator");
  await expect(advance).toHaveCount(0);

  // A wrong key: the 401's detail, still signed out, nothing stored.
  const toggle = banner.getByRole("button", { name: "Sign in", exact: true });
  await expect(toggle).toHaveAttribute("aria-expanded", "false");
  await toggle.click();
  // Open, the toggle is the one "Sign in" button with aria-expanded (the other submits).
  await expect(banner.getByRole("button", { name: "Sign in", exact: true, expanded: true })).toHaveCount(1);
  const form = page.getByRole("form", { name: "Sign in" });
  const field = form.getByLabel("Token or administrator key");
  await expect(field).toBeFocused();
  await expect(field).toHaveAttribute("type", "password");
  await field.fill("not-the-administrator-key");
  await form.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(form.getByRole("alert")).toHaveText("Not signed in: invalid administrator key");
  await expect(field).toBeFocused();
  await expect(advance).toHaveCount(0);
  expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  only401s(consoleErrors);
  expect(await axeViolations(page), "axe violations with the sign-in form open").toEqual([]);
  await shot(page, "sign-in-refused", false);

  // The administrator key: Advance appears, Sign out takes focus.
  await field.fill(admin()["X-API-Key"]);
  await form.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByTestId("auth-who")).toHaveText("the administrator key");
  await expect(page.getByTestId("auth-role")).toHaveText("admin");
  await expect(form).toHaveCount(0);
  await expect(banner.getByRole("button", { name: "Sign out" })).toBeFocused();
  await expect(advance).toBeVisible();
  await expect(page.getByTestId("advance-hint")).toHaveCount(0);

  // Kept in sessionStorage (a reload keeps it), never in localStorage.
  const stored = await page.evaluate(() => ({ session: { ...sessionStorage }, local: localStorage.length }));
  expect(stored.local).toBe(0);
  expect(Object.values(stored.session).join()).toContain(admin()["X-API-Key"]);
  await page.reload();
  await expect(page.getByTestId("auth-role")).toHaveText("admin");
  await expect(advance).toBeVisible();

  // Sign out: Advance is gone again, and so is the stored credential.
  await banner.getByRole("button", { name: "Sign out" }).click();
  await expect(advance).toHaveCount(0);
  await expect(banner.getByRole("button", { name: "Sign in", exact: true })).toBeFocused();
  expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

  // An operator's API token (fdt_…, detected as a Bearer token) may advance.
  const operator = await must<{ token: string }>(201, "POST", "/api/tokens", { name: "browser-operator", role: "operator" });
  await signIn(page, operator.token, "browser-operator");
  await expect(page.getByTestId("auth-role")).toHaveText("operator");
  await expect(advance).toBeVisible();
  await banner.getByRole("button", { name: "Sign out" }).click();

  // A viewer's token and a contributor's session (64 hex characters) may not.
  const viewer = await must<{ token: string }>(201, "POST", "/api/tokens", { name: "browser-viewer", role: "viewer" });
  await signIn(page, viewer.token, "browser-viewer");
  await expect(page.getByTestId("auth-role")).toHaveText("viewer");
  await expect(page.getByTestId("advance-hint")).toContainText("signed in as viewer");
  await expect(advance).toHaveCount(0);
  await banner.getByRole("button", { name: "Sign out" }).click();

  const who = await must<{ session_token: string }>(201, "POST", "/api/onboarding/register", { handle: "browser_reader" }, {});
  await signIn(page, who.session_token, "browser_reader");
  await expect(page.getByTestId("auth-role")).toHaveText("contributor");
  await expect(advance).toHaveCount(0);
  await shot(page, "signed-in-contributor", false);
});

test("a revoked token signs the page out, saying why", async ({ page, consoleErrors }) => {
  const t = await must<{ api_token: { id: string }; token: string }>(201, "POST", "/api/tokens", {
    name: "browser-revoked",
    role: "operator",
  });
  await page.goto(views.portfolio);
  await signIn(page, t.token, "browser-revoked");
  await must(200, "DELETE", `/api/tokens/${t.api_token.id}`);
  // The next refresh finds out: the page signs out and goes on reading.
  await expect(page.getByRole("banner").getByRole("status")).toHaveText(
    "Signed out: the credential no longer works (token revoked).",
    { timeout: 15_000 },
  );
  await expect(page.getByRole("banner").getByRole("button", { name: "Sign in", exact: true })).toBeVisible();
  expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  only401s(consoleErrors);
  await expect(page.locator("table.ranking tbody tr").first()).toBeVisible();
});

test("with reads not public, the page asks for a credential instead of failing", async ({ page }) => {
  const closed = await startFoundry({ publicReads: false, logName: "foundry-private-reads.log" });
  try {
    const anon = await fetch(`${closed.base}/api/ideas`);
    expect(anon.status, "reads need a credential on this Foundry").toBe(401);

    await page.goto(`${closed.base}/#/pipeline`);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Sign in to see this Foundry");
    await expect(page).toHaveTitle("Sign in · Foundry");
    // The form is in the page itself; the header has no second one.
    await expect(page.getByRole("form", { name: "Sign in" })).toHaveCount(1);
    await expect(page.getByRole("banner").getByRole("button", { name: "Sign in" })).toHaveCount(0);
    expect(await axeViolations(page), "axe violations on the sign-in page").toEqual([]);
    await shot(page, "reads-need-credential", false);

    const form = page.getByRole("main").getByRole("form", { name: "Sign in" });
    await form.getByLabel("Token or administrator key").fill(closed.adminKey);
    await form.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Pipeline");
    await expect(page.getByTestId("auth-role")).toHaveText("admin");
    await expect(page.getByTestId("attention-flags")).toBeVisible();

    // Signing out goes straight back to the request, without a failed read.
    await page.getByRole("banner").getByRole("button", { name: "Sign out" }).click();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Sign in to see this Foundry");
    await page.waitForTimeout(POLL_MS + 1000);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Sign in to see this Foundry");
  } finally {
    await closed.stop();
  }
});

test("a failed task's diagnosis shows on the pipeline view", async ({ page }) => {
  const task = await must<{ id: string }>(201, "POST", "/api/agent/tasks", {
    direction: "Render the quarterly report",
    task_type: "impl",
  });
  // A task left pending, so the queue has a wait that grows.
  await must(201, "POST", "/api/agent/tasks", { direction: "Wait in the queue", task_type: "test" });
  await must(200, "PATCH", `/api/agent/tasks/${task.id}`, { status: "running", worker_id: "browser-worker" });
  await must(200, "PATCH", `/api/agent/tasks/${task.id}`, {
    status: "failed",
    output: "upstream answered 503 Service Unavailable\nretry later",
  });

  await page.goto(views.pipeline);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Pipeline");
  const row = page.locator(`table.tasks tr[data-task-id="${task.id}"]`);
  await expect(row).toContainText("failed");
  await expect(row).toContainText("provider_error");
  await expect(row).toContainText("upstream answered 503 Service Unavailable");
  const failure = page.locator(`.failures li[data-task-id="${task.id}"]`);
  await expect(failure.locator(".category")).toHaveText("provider_error");
  await expect(failure.locator(".summary")).toHaveText("upstream answered 503 Service Unavailable");

  // Two refreshes of an unchanged pipeline announce nothing, though the
  // report's time and the pending task's wait move on with each.
  const wait = page.locator(".facts > div", { has: page.locator("dt", { hasText: "Longest wait" }) }).locator("dd");
  const before = await wait.textContent();
  await page.waitForTimeout(2 * POLL_MS + 1000);
  await expect(wait).not.toHaveText(before ?? "");
  await expect(page.locator("#announcer")).toHaveText("");

  const diag = page.getByRole("region", { name: "Failure diagnostics", exact: true });
  await expect(diag.locator(".facts dd").first()).toHaveText("1");
  await expect(page.getByRole("img", { name: /Failed tasks by error category.*provider error: failed 1/ })).toBeVisible();
  await expect(page.getByRole("img", { name: /Execution time, P50 and P95/ })).toBeVisible();
  await expect(page.getByTestId("attention-flags")).toContainText("No failure streak");

  await page.getByLabel("Status", { exact: true }).selectOption("failed");
  await expect(page.locator("table.tasks caption")).toContainText("(failed)");
  await expect(page.locator("table.tasks tbody tr")).toHaveCount(1);
  await shot(page, "pipeline");
});

test("a signed freeze reaches the ledger view by itself", async ({ page }) => {
  await page.goto(views.ledger);
  const banner = page.getByTestId("freeze-banner");
  await expect(banner).toContainText("Not frozen");
  await expect(page.getByTestId("reserve-ratio")).toHaveText(/^\d/);

  const reason = "suspicious withdrawals under review";
  const frozen = await freeze(reason);
  expect(frozen.status).toBe(200);
  try {
    // No reload: the live refresh brings the freeze within a poll or two.
    await expect(banner).toContainText("Frozen", { timeout: 15_000 });
    await expect(banner).toContainText(`Reason: ${reason}`);
    await expect(page.getByRole("region", { name: "Incidents", exact: true }).getByRole("table")).toContainText("freeze");
    await expect(page.locator("#announcer")).toContainText("freeze status");
    await shot(page, "ledger-frozen");
  } finally {
    expect((await unfreeze()).status).toBe(200);
  }
  await expect(banner).toContainText("Not frozen", { timeout: 15_000 });
});

/** focusables lists the page's elements a keyboard should reach. */
async function focusables(page: Page) {
  return page.evaluate(() => {
    const sel = 'a[href], button:not([disabled]), select, input, textarea, [tabindex]:not([tabindex="-1"])';
    return [...document.querySelectorAll<HTMLElement>(sel)]
      .filter((el) => el.getClientRects().length > 0 || el.classList.contains("skip-link"))
      .map((el, i) => {
        el.dataset.kb = String(i);
        return i;
      });
  });
}

test("every view is usable by keyboard and screen reader", async ({ page }) => {
  expect(views.idea, "the idea journey ran first").not.toBe("");
  // Signed in as the administrator, so every control (Advance, Sign out) is there.
  await page.goto(views.portfolio);
  await signIn(page, admin()["X-API-Key"], "the administrator key");
  for (const [name, url] of Object.entries(views)) {
    // A full load each time, so Tab starts from the top of the page.
    await page.goto("about:blank");
    await page.goto(url);
    await expect(page.getByRole("heading", { level: 1 })).not.toHaveText("");
    await page.waitForLoadState("networkidle");
    for (const role of ["banner", "navigation", "main", "contentinfo"] as const) {
      await expect(page.getByRole(role), `${name}: a ${role} landmark`).toHaveCount(1);
    }

    // axe-core: WCAG 2.1 A and AA and best practices, no violation.
    expect(await axeViolations(page), `${name}: axe violations`).toEqual([]);

    // Tab from the top reaches every interactive element, each shows a
    // focus ring, and each has a name a screen reader can say.
    const all = await focusables(page);
    const reached = new Set<number>();
    for (let i = 0; i < all.length + 3; i++) {
      await page.keyboard.press("Tab");
      const seen = await page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        if (!el || el === document.body) return null;
        const style = getComputedStyle(el);
        const name =
          el.getAttribute("aria-label") ||
          (el.getAttribute("aria-labelledby") ?? "")
            .split(" ")
            .map((id) => document.getElementById(id)?.textContent ?? "")
            .join(" ") ||
          ("labels" in el && (el as HTMLSelectElement).labels?.[0]?.textContent) ||
          el.textContent ||
          "";
        return { kb: el.dataset.kb, ring: style.outlineStyle !== "none" && style.outlineWidth !== "0px", name: name.trim(), tag: el.outerHTML.slice(0, 80) };
      });
      if (!seen || seen.kb === undefined) continue;
      reached.add(Number(seen.kb));
      expect(seen.ring, `${name}: focus ring on ${seen.tag}`).toBe(true);
      expect(seen.name, `${name}: accessible name of ${seen.tag}`).not.toBe("");
    }
    expect([...reached].sort((a, b) => a - b), `${name}: every interactive element reached by Tab`).toEqual(all);
  }
});

test("a phone-sized screen shows every view in one column", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  for (const [name, url] of Object.entries(views)) {
    await page.goto(url);
    await expect(page.getByRole("heading", { level: 1 })).not.toHaveText("");
    await page.waitForLoadState("networkidle");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, `${name}: no sideways scrolling of the page`).toBeLessThanOrEqual(0);
    await expect(page.getByRole("navigation").getByRole("link", { name: "Ledger" })).toBeInViewport();
    await shot(page, `phone-${name}`);
  }
  // The sign-in form fits the phone's width too.
  await page.goto(views.portfolio);
  await page.getByRole("banner").getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByRole("form", { name: "Sign in" })).toBeVisible();
  const formOverflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(formOverflow, "sign-in form: no sideways scrolling of the page").toBeLessThanOrEqual(0);
  await shot(page, "phone-sign-in");
  await page.keyboard.press("Escape");
  await expect(page.getByRole("form", { name: "Sign in" })).toHaveCount(0);

  const columns = page.locator(".board > .column");
  await expect(columns).toHaveCount(6);
  const [a, b] = [await columns.nth(0).boundingBox(), await columns.nth(1).boundingBox()];
  expect(a && b && a.x === b.x && b.y > a.y, "stage columns stack").toBe(true);
});

test("an unknown idea and an unknown page say so", async ({ page, consoleErrors }) => {
  expect((await call("GET", "/api/ideas/no-such-idea")).status).toBe(404);
  await page.goto("/#/ideas/no-such-idea");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("No such idea");
  await expect(page.getByRole("main")).toContainText("There is no idea no-such-idea");
  // The browser logs the API's 404 itself; nothing else may be logged.
  await expect.poll(() => consoleErrors.length).toBeGreaterThan(0);
  expect(consoleErrors.every((e) => e.includes("404"))).toBe(true);
  consoleErrors.length = 0;

  await page.goto("/#/nowhere");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Nothing here");
  await page.getByRole("main").getByRole("link", { name: "portfolio" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Portfolio");
});
