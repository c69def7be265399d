// The dashboard's main journeys in a real browser against a real Foundry:
// rank and open an idea, sign in and advance it, read its stage history;
// what each role is shown, a wrong key, a revoked token and a Foundry whose
// reads are not public; find a failed task's diagnosis; the daily charts
// of the pipeline and the ledger and the stage funnel with the median time
// in each stage, with data and on a Foundry that has none; contributors
// named by handle, never by id, on the ledger and the idea page; see a
// signed freeze arrive by itself; and the page's accessibility and phone
// layout. The tests run in order on one Foundry (workers: 1), each seeding
// what it looks for through the REST API.
import type { Locator, Page } from "@playwright/test";
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
  shotOf,
  signIn,
  test,
  unfreeze,
  utcDays,
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

  // The funnel: at or past each stage, from the stage counts (two at none,
  // one at each other stage).
  await expect(page.getByRole("img", { name: /^Active ideas at or past each stage/ })).toHaveAccessibleName(
    "Active ideas at or past each stage, and at it none: at or past 7, at 2; specced: at or past 5, at 1; " +
      "implementing: at or past 4, at 1; testing: at or past 3, at 1; reviewing: at or past 2, at 1; " +
      "complete: at or past 1, at 1",
  );

  // Right-sizing: the split suggestion and the in-progress ideas without work.
  const sizing = page.getByRole("region", { name: "Right-sizing", exact: true });
  await expect(sizing.getByRole("listitem").filter({ hasText: "Split" })).toContainText("Plugin marketplace");
  await expect(page.locator("tr", { hasText: "Audit log export" })).toContainText("too small");
  await expect(page.locator("tr", { hasText: "Plugin marketplace" })).toContainText("too large");

  await shot(page, "dashboard", false);
});

/** STAGES are an idea's stages in order (src/api.ts). */
const STAGES = ["none", "specced", "implementing", "testing", "reviewing", "complete"];

/** stageTimes finds the funnel's table of the median time in each stage. */
const stageTimes = (page: Page) => page.getByRole("table", { name: /^Median time in stage, the last 90 days/ });

/** DURATION is a time as the page rounds it (fmt.span in src/format.ts): "< 1 s", "45 s", "3.2 h". */
const DURATION = /^(< 1 s|\d+ s|\d+(\.\d)? (min|h|d)|[\d,]+ d)$/;

test("the stage funnel shows the median time in each stage, with n", async ({ page }) => {
  // Two ideas walk the stages: one from none to testing, one from none to
  // specced. Each advance ends a stint in the stage it leaves.
  const far = await createIdea({ name: "Stage walker, far", potential_value: 8, estimated_cost: 4, confidence: 0.5 });
  const near = await createIdea({ name: "Stage walker, near", potential_value: 6, estimated_cost: 4, confidence: 0.5 });
  for (let i = 0; i < 3; i++) await must(200, "POST", `/api/ideas/${far}/advance`);
  await must(200, "POST", `/api/ideas/${near}/advance`);

  // The page's numbers are the API's: its count of stints and its median,
  // compared stage by stage (never a timing).
  type Times = {
    stages: { stage: string; stints: number; median_seconds: number | null; p90_seconds: number | null }[];
    days: number;
  };
  const times = await must<Times>(200, "GET", "/api/ideas/stage-times?days=90");
  expect(times.days).toBe(90);
  expect(times.stages.map((t) => t.stage)).toEqual(STAGES);
  const stints = Object.fromEntries(times.stages.map((t) => [t.stage, t.stints]));
  // At least the walkers' stints (earlier tests may add to them), and none
  // out of reviewing or complete: no idea has left either yet.
  expect(stints.none).toBeGreaterThanOrEqual(2);
  expect(stints.specced).toBeGreaterThanOrEqual(1);
  expect(stints.implementing).toBeGreaterThanOrEqual(1);
  expect([stints.reviewing, stints.complete]).toEqual([0, 0]);

  await page.goto(views.portfolio);
  const table = stageTimes(page);
  await expect(table.locator("tbody tr")).toHaveCount(STAGES.length);
  for (const t of times.stages) {
    const row = table.locator(`tr[data-stage="${t.stage}"]`);
    await expect(row.locator("th")).toHaveText(t.stage);
    if (t.stints === 0) {
      await expect(row.locator("td"), t.stage).toHaveText(["—", "—", "n = 0"]);
      await expect(row.locator("td").first()).toHaveAttribute(
        "title",
        new RegExp(`^No idea left ${t.stage} in the last 90 days`),
      );
    } else {
      expect(t.median_seconds, t.stage).not.toBeNull();
      await expect(row.locator("td"), t.stage).toHaveText([DURATION, DURATION, `n = ${t.stints}`]);
      const of = `${t.stints} ${t.stints === 1 ? "stint" : "stints"}`;
      await expect(row.locator("td").first()).toHaveAttribute(
        "title",
        `The median of ${of} that ended in the last 90 days`,
      );
    }
  }

  // It refreshes with the view: a refresh that finds the same stints says
  // nothing (though the window's start moved), and another advance shows
  // up by itself, announced.
  await page.waitForTimeout(POLL_MS + 1000);
  await expect(page.locator("#announcer")).toHaveText("");
  await must(200, "POST", `/api/ideas/${near}/advance`);
  const after = await must<Times>(200, "GET", "/api/ideas/stage-times?days=90");
  const specced = after.stages.find((t) => t.stage === "specced")!;
  expect(specced.stints).toBe(stints.specced + 1);
  await expect(table.locator('tr[data-stage="specced"] td').last()).toHaveText(`n = ${specced.stints}`, {
    timeout: 15_000,
  });
  await expect(page.locator("#announcer")).toContainText("time in stage");
  await shotOf(page.getByRole("region", { name: "Stage funnel", exact: true }), "portfolio-funnel");

  // The walkers' stints last milliseconds, so the rounding into minutes,
  // hours and days is shown with made-up times fed to the page.
  const made = (stage: string, stints: number, median: number | null, p90: number | null) => ({
    stage,
    stints,
    median_seconds: median,
    p90_seconds: p90,
  });
  await page.route(/\/api\/ideas\/stage-times(\?|$)/, (r) =>
    r.fulfill({
      json: {
        stages: [
          made("none", 12, 45, 200),
          made("specced", 5, 720, 11_520),
          made("implementing", 3, 11_520, 388_800),
          made("testing", 1, 388_800, 388_800),
          made("reviewing", 0, null, null),
          made("complete", 0, null, null),
        ],
        since: new Date(Date.now() - 90 * 86_400_000).toISOString(),
        days: 90,
      },
    }),
  );
  await page.reload();
  const rows = stageTimes(page).locator("tbody tr td");
  await expect(rows).toHaveText([
    ...["45 s", "3.3 min", "n = 12"],
    ...["12 min", "3.2 h", "n = 5"],
    ...["3.2 h", "4.5 d", "n = 3"],
    ...["4.5 d", "4.5 d", "n = 1"],
    ...["—", "—", "n = 0"],
    ...["—", "—", "n = 0"],
  ]);
  // A median of one stint says so.
  await expect(stageTimes(page).locator('tr[data-stage="testing"] td').first()).toHaveAttribute(
    "title",
    "The median of 1 stint that ended in the last 90 days",
  );
  await expect(stageTimes(page).locator('tr[data-stage="complete"] td').first()).toHaveAttribute(
    "title",
    "No idea left complete in the last 90 days (ideas rarely leave complete)",
  );
  await shotOf(page.getByRole("region", { name: "Stage funnel", exact: true }), "portfolio-funnel-fixture");
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
  // The staker is named by handle, never by id.
  const staker = stakes.getByRole("table").locator("tbody tr td").nth(2);
  await expect(staker).toHaveText("browser_staker");
  await expect(stakes.getByRole("table")).not.toContainText(who.contributor_id);
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

  // The stage history is the API's record: created, then advanced, each by
  // the administrator (the seeding and the sign-in above).
  const history = page.getByRole("table", { name: "Every change of this idea's stage, oldest first" });
  const changes = history.locator("tbody tr");
  await expect(changes).toHaveCount(2);
  await expect(changes.nth(0).locator("td")).toHaveText([/\d/, "—", "none", "created at this stage", "the administrator", "—"]);
  await expect(changes.nth(1).locator("td")).toHaveText([/\d/, "none", "specced", "advanced", "the administrator", /^\d+ (s|min) in none$/]);
  const recorded = await must<{ changes: { from: string | null; to: string; reason: string; by: string }[] }>(
    200,
    "GET",
    `/api/ideas/${id}/stages`,
  );
  expect(recorded.changes.map((c) => [c.from, c.to, c.reason, c.by])).toEqual([
    [null, "none", "created", "admin"],
    ["none", "specced", "advance", "admin"],
  ]);
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
  await expect(page.getByRole("img", { name: /^Execution time per day, P50 and P95/ })).toBeVisible();
  await expect(page.getByTestId("attention-flags")).toContainText("No failure streak");

  await page.getByLabel("Status", { exact: true }).selectOption("failed");
  await expect(page.locator("table.tasks caption")).toContainText("(failed)");
  await expect(page.locator("table.tasks tbody tr")).toHaveCount(1);
});

/** chart finds a daily chart's drawing by its title. */
const chart = (page: Page, title: string) => page.getByRole("img", { name: new RegExp(`^${title}`) });

/** figure finds a chart, drawn or empty, by its title. */
const figure = (page: Page, title: string) => page.getByRole("figure", { name: title });

/** subpaths counts the separate runs of a series' line: a gap starts a new one. */
async function subpaths(line: Locator) {
  return ((await line.getAttribute("d")) ?? "").split("M").length - 1;
}

/** dayTable opens a chart's "Numbers by day" and returns its rows. */
async function dayTable(page: Page, title: string) {
  const fig = figure(page, title);
  await fig.getByText("Numbers by day").click();
  return fig.getByRole("table").locator("tbody tr");
}

const EXEC = "Execution time per day, P50 and P95, last 30 days";
const SUCCESS = "Success rate per day, last 30 days";

test("the pipeline charts each day's execution time and success rate", async ({ page }) => {
  // With the failed task of the test before, today has one completed and
  // one failed task: a success rate of 50 %, and both timed.
  const done = await must<{ id: string; model: string }>(201, "POST", "/api/agent/tasks", {
    direction: "Summarise the release notes",
    task_type: "review",
  });
  await must(200, "PATCH", `/api/agent/tasks/${done.id}`, { status: "running", worker_id: "browser-worker" });
  await must(200, "PATCH", `/api/agent/tasks/${done.id}`, {
    status: "completed",
    output: "done",
    tokens_in: 1200,
    tokens_out: 300,
    cost_usd: 0.0125,
  });
  const daily = await must<{ days: { day: string; success_rate: number | null; p50_seconds: number | null }[] }>(
    200,
    "GET",
    "/api/agent/metrics/daily?days=30",
  );
  expect(daily.days).toHaveLength(30);
  const today = daily.days[29];
  expect(today.success_rate).toBe(0.5);
  expect(today.p50_seconds).not.toBeNull();

  await page.goto(views.pipeline);
  // One day with values and 29 without: one marker a series, no line, and
  // the 29 days are gaps, not zeros.
  const exec = chart(page, EXEC);
  await expect(exec).toHaveAccessibleName(/P50: .+ on \d+ \w+, no other day; P95: .+ on \d+ \w+, no other day/);
  await expect(exec.locator('[data-series="P50"] .point')).toHaveCount(1);
  await expect(exec.locator('[data-series="P95"] .point')).toHaveCount(1);
  const success = chart(page, SUCCESS);
  await expect(success).toHaveAccessibleName(/Success rate: 50% on \d+ \w+, no other day/);
  await expect(success.locator(".point")).toHaveCount(1);
  await expect(figure(page, "Success rate by task type, last 7 days")).toBeVisible();
  await shot(page, "pipeline");
  const rows = await dayTable(page, SUCCESS);
  await expect(rows).toHaveCount(30);
  await expect(rows.nth(0).locator("td")).toHaveText(["—", "0", "0", "0", "0"]);
  await expect(rows.nth(29).locator("td")).toHaveText(["50%", "1", "1", "0", /^\d+$/]);

  // The completed task's usage: the week's sums, its model's row, and
  // today's cost as the only point of the cost chart.
  const usage = page.getByRole("region", { name: "Usage by model, last 7 days" });
  await expect(usage.locator("tbody tr")).toHaveCount(1);
  await expect(usage.locator("tbody tr th")).toHaveText(done.model);
  await expect(usage.locator("tbody tr td")).toHaveText(["1", "1,200", "300", "$0.0125"]);
  const cost = chart(page, "Cost per day, last 30 days");
  await expect(cost).toHaveAccessibleName(/Cost: \$0\.0125 on \d+ \w+, no other day/);
  await expect(cost.locator(".point")).toHaveCount(1);
  const costRows = await dayTable(page, "Cost per day, last 30 days");
  await expect(costRows.nth(29).locator("td")).toHaveText(["$0.0125", "1,200", "300"]);
  await expect(costRows.nth(0).locator("td")).toHaveText(["—", "0", "0"]);
});

/** num formats as the page does (src/format.ts). */
const num = new Intl.NumberFormat("en", { maximumFractionDigits: 2 });
/** fmtLabel writes a word of the API as the page does: underscores as spaces (src/format.ts). */
const fmtLabel = (s: string) => s.replace(/_/g, " ");

test("the ledger charts the supply and reserve ratio day by day", async ({ page }) => {
  // The idea journey's deposit is today's supply; the days before it have none.
  const history = await must<{
    days: { total_cc_outstanding: number | null; treasury_value_usd: number | null; reserve_ratio: number | null }[];
  }>(200, "GET", "/api/cc/supply/history?days=30");
  expect(history.days).toHaveLength(30);
  const today = history.days[29];
  expect(today.total_cc_outstanding).toBeGreaterThan(0);
  expect(history.days[0].reserve_ratio).toBeNull();

  await page.goto(views.ledger);
  const reserve = chart(page, "Reserve ratio per day, last 30 days");
  await expect(reserve).toHaveAccessibleName(/Reserve ratio: [\d.]+ on \d+ \w+, no other day\. A dashed line marks 1\.0, fully backed\.$/);
  await expect(reserve.locator("line.reference")).toHaveCount(1);
  await expect(reserve.locator(".point")).toHaveCount(1);
  await expect(chart(page, "CC outstanding per day, last 30 days")).toHaveAccessibleName(
    new RegExp(`CC outstanding: ${num.format(today.total_cc_outstanding!)} CC on`),
  );
  await expect(chart(page, "Treasury per day \\(USD\\), last 30 days")).toHaveAccessibleName(
    new RegExp(`Treasury: ${num.format(today.treasury_value_usd!)} USD on`),
  );
  await shot(page, "ledger");
});

/** shortId is how the page shows a UUID it has no handle for (src/people.tsx). */
const shortId = (id: string) => `${id.slice(0, 8)}…`;

test("the ledger and the idea page name contributors by handle, never by id", async ({ page }) => {
  // A registered contributor who deposits, creates an idea, stakes on it and
  // unstakes part (cooling: 100 to 1000 CC cools for 24 h), so it has CC in
  // every bucket and is the actor and subject of audit entries.
  const who = await must<{ contributor_id: string; session_token: string }>(201, "POST", "/api/onboarding/register", {
    handle: "browser_ledger",
  });
  const session = { Authorization: `Bearer ${who.session_token}` };
  await must(201, "POST", "/api/cc/deposit", {
    contributor_id: who.contributor_id,
    amount_usd: 20,
    reference: "browser-ledger-1",
  });
  const idea = await must<{ id: string }>(
    201,
    "POST",
    "/api/ideas",
    { name: "Contributor-made idea", potential_value: 20, estimated_cost: 1, confidence: 0.5 },
    session,
  );
  await must(201, "POST", "/api/cc/stake", { contributor_id: who.contributor_id, idea_id: idea.id, amount_cc: 300 }, session);
  const unstaked = await must<{ status: string }>(
    200,
    "POST",
    "/api/cc/unstake",
    { contributor_id: who.contributor_id, idea_id: idea.id, amount_cc: 150 },
    session,
  );
  expect(unstaked.status).toBe("cooling");
  // One a contribution created, who never registered: no handle, and a
  // UUID for an id; a deposit makes it the subject of an audit entry.
  const unregistered = crypto.randomUUID();
  const asset = await must<{ id: string }>(201, "POST", "/api/assets", { type: "DATA", name: "Browser test data set" });
  await must(201, "POST", "/api/contributions", { asset_id: asset.id, contributor_id: unregistered, cost_amount: 5 });
  await must(201, "POST", "/api/cc/deposit", { contributor_id: unregistered, amount_usd: 1, reference: "browser-ledger-2" });

  type Listed = {
    contributors: {
      id: string;
      handle: string | null;
      trust_level: string;
      available_cc: number;
      staked_cc: number;
      cooling_cc: number;
    }[];
    pagination: { total: number };
  };
  const listed = await must<Listed>(200, "GET", "/api/contributors?limit=500");
  const mine = listed.contributors.find((c) => c.id === who.contributor_id)!;
  expect(mine.handle).toBe("browser_ledger");
  expect([mine.staked_cc, mine.cooling_cc]).toEqual([150, 150]);
  expect(mine.available_cc).toBeGreaterThan(0);
  const theirs = listed.contributors.find((c) => c.id === unregistered)!;
  expect(theirs.handle).toBeNull();

  await page.goto(views.ledger);
  const section = page.getByRole("region", { name: "Contributors", exact: true });
  const table = section.getByRole("table");
  await expect(table.locator("caption")).toHaveText(
    `The first ${listed.contributors.length} of ${listed.pagination.total} contributors, oldest first`,
  );
  const row = table.locator(`tr[data-contributor-id="${who.contributor_id}"]`);
  await expect(row.locator("th, td")).toHaveText([
    "browser_ledger",
    shortId(who.contributor_id),
    fmtLabel(mine.trust_level),
    num.format(mine.available_cc),
    "150",
    "150",
  ]);
  await expect(row.locator("td code")).toHaveAttribute("title", who.contributor_id);
  await expect(row).not.toContainText(who.contributor_id);
  const other = table.locator(`tr[data-contributor-id="${unregistered}"]`);
  await expect(other.locator("th, td")).toHaveText([
    "unregistered",
    shortId(unregistered),
    "implicit",
    num.format(theirs.available_cc),
    "0",
    "0",
  ]);

  // The audit chain: the stake's actor and subject are the handle; the
  // unregistered one's deposit is its short id, the whole in the title; the
  // administrator is still "admin". No cell shows a whole UUID.
  const audit = page.getByRole("region", { name: "Audit chain", exact: true }).getByRole("table");
  // entry finds the newest entry of a kind (the page lists the newest first).
  const entry = (kind: string) =>
    audit
      .locator("tbody tr")
      .filter({ has: page.locator("td:nth-child(3)", { hasText: new RegExp(`^${kind}$`) }) })
      .first()
      .locator("td");
  await expect(entry("unstake")).toHaveText([/^\d+$/, /\d/, "unstake", "browser_ledger", "browser_ledger", "150 CC", /…$/]);
  await expect(entry("stake")).toHaveText([/^\d+$/, /\d/, "stake", "browser_ledger", "browser_ledger", "300 CC", /…$/]);
  const deposit = entry("deposit");
  await expect(deposit.nth(3)).toHaveText("admin");
  await expect(deposit.nth(4)).toHaveText(shortId(unregistered));
  await expect(deposit.nth(4).locator("code")).toHaveAttribute("title", unregistered);
  await expect(audit).not.toContainText(who.contributor_id);
  await expect(audit).not.toContainText(unregistered);
  await shotOf(section, "ledger-contributors");

  // The idea's stage history says who created it, and its stakes who staked.
  await page.goto(`/#/ideas/${idea.id}`);
  const history = page.getByRole("table", { name: "Every change of this idea's stage, oldest first" });
  await expect(history.locator("tbody tr").nth(0).locator("td").nth(4)).toHaveText("contributor browser_ledger");
  await expect(history).not.toContainText(who.contributor_id);
  const moves = page.getByRole("region", { name: "Stakes", exact: true }).getByRole("table");
  await expect(moves.locator("tbody tr td:nth-child(3)")).toHaveText(["browser_ledger", "browser_ledger"]);
});

test("a day without a value is a gap in the line, never a zero", async ({ page }) => {
  // The API records today only, so a month with gaps is fed to the page
  // by intercepting its two daily series.
  const days = utcDays(30);
  const runs = new Set([10, 11, 12, 13, 14, 16, 17, 18, 19, 20, 23, 25, 26, 27, 28, 29]);
  // Day 27 finished only failures: a success rate of 0, drawn on the axis.
  const metrics = days.map((day, i) => {
    const has = runs.has(i);
    const p50 = has ? Math.round(40 + 25 * Math.sin(i / 3)) : null;
    return {
      day,
      created: has ? 6 : 0,
      completed: has && i !== 27 ? 4 + (i % 3) : 0,
      failed: has ? (i === 27 ? 3 : i % 2) : 0,
      timed_out: 0,
      success_rate: has ? (i === 27 ? 0 : Math.round(((4 + (i % 3)) / (4 + (i % 3) + (i % 2))) * 100) / 100) : null,
      p50_seconds: p50,
      p95_seconds: p50 == null ? null : p50 * 3 + (i % 5) * 10,
    };
  });
  // The supply starts on day 5 and is carried on; the ratio dips under 1.
  const supply = days.map((day, i) => {
    if (i < 5) return { day, total_cc_outstanding: null, treasury_value_usd: null, reserve_ratio: null };
    const cc = 1000 + i * 150;
    const ratio = i >= 18 && i <= 21 ? 0.92 : 1.15 + (i % 4) * 0.02;
    return { day, total_cc_outstanding: cc, treasury_value_usd: Math.round((cc / 100) * ratio * 100) / 100, reserve_ratio: ratio };
  });
  await page.route(/\/api\/agent\/metrics\/daily(\?|$)/, (r) => r.fulfill({ json: { days: metrics } }));
  await page.route(/\/api\/cc\/supply\/history(\?|$)/, (r) => r.fulfill({ json: { days: supply } }));

  await page.goto(views.pipeline);
  const exec = chart(page, EXEC);
  await expect(exec.locator('[data-series="P50"] .point')).toHaveCount(runs.size);
  await expect(exec.locator('[data-series="P95"] .point')).toHaveCount(runs.size);
  // Four runs of days: 10–14, 16–20, 23 alone, 25–29.
  expect(await subpaths(exec.locator('[data-series="P50"] path.line'))).toBe(4);
  expect(await subpaths(exec.locator('[data-series="P95"] path.line'))).toBe(4);
  await expect(exec).toHaveAccessibleName(/P50 on 16 of 30 days: lowest /);

  const success = chart(page, SUCCESS);
  await expect(success.locator(".point")).toHaveCount(runs.size);
  const axis = await success.locator("line.axis").getAttribute("y1");
  await expect(success.locator(`.point[cy="${axis}"]`), "the day at 0 % sits on the axis").toHaveCount(1);
  await shotOf(page.getByRole("region", { name: "Execution time and success", exact: true }), "pipeline-trends-fixture");
  const rows = await dayTable(page, SUCCESS);
  await expect(rows.nth(9).locator("td").first()).toHaveText("—");
  await expect(rows.nth(27).locator("td")).toHaveText(["0%", "0", "3", "0", "6"]);

  await page.goto(views.ledger);
  const reserve = chart(page, "Reserve ratio per day, last 30 days");
  await expect(reserve.locator(".point")).toHaveCount(25);
  expect(await subpaths(reserve.locator("path.line"))).toBe(1);
  await expect(reserve).toHaveAccessibleName(/Reserve ratio on 25 of 30 days: lowest 0\.92 /);
  await shotOf(page.getByRole("region", { name: "Supply and reserve", exact: true }), "ledger-trends-fixture");
});

test("on a Foundry with no data yet, every chart says so", async ({ page }) => {
  const fresh = await startFoundry({ logName: "foundry-empty.log" });
  try {
    await page.goto(`${fresh.base}/#/`);
    await expect(figure(page, "Active ideas at or past each stage, and at it")).toContainText("No active ideas yet.");
    // No idea has left a stage: every stage's time is "—", over no stint.
    const times = stageTimes(page);
    await expect(times.locator("tbody tr")).toHaveCount(STAGES.length);
    for (const stage of STAGES) {
      await expect(times.locator(`tr[data-stage="${stage}"] td`), stage).toHaveText(["—", "—", "n = 0"]);
    }
    expect(await axeViolations(page), "axe violations on the empty portfolio").toEqual([]);

    await page.goto(`${fresh.base}/#/pipeline`);
    await expect(figure(page, EXEC)).toContainText("No tasks finished in the last 30 days.");
    await expect(figure(page, SUCCESS)).toContainText("No tasks finished in the last 30 days.");
    await expect(figure(page, "Success rate by task type, last 7 days")).toContainText("No tasks finished in the last 7 days.");
    await expect(figure(page, "Failed tasks by error category")).toContainText("No failed tasks.");
    await expect(figure(page, "Cost per day, last 30 days")).toContainText("No task reported usage in the last 30 days.");
    await expect(page.getByText("No task reported tokens or cost in the last 7 days.")).toBeVisible();
    await expect(page.getByRole("main").getByRole("img")).toHaveCount(0);
    expect(await axeViolations(page), "axe violations on the empty pipeline").toEqual([]);
    await shot(page, "empty-pipeline");

    await page.goto(`${fresh.base}/#/ledger`);
    await expect(page.getByTestId("supply-history-empty")).toHaveText(
      "No CC supply yet: the history starts with the first deposit, withdrawal or distribution paid in CC.",
    );
    await expect(page.getByRole("main").getByRole("img")).toHaveCount(0);
    await expect(page.getByTestId("contributors-empty")).toHaveText(
      "No contributors yet: one appears when someone registers or a contribution names them.",
    );
    await expect(page.getByRole("region", { name: "Contributors", exact: true }).getByRole("table")).toHaveCount(0);
    expect(await axeViolations(page), "axe violations on the empty ledger").toEqual([]);
    await shot(page, "empty-ledger");

    // Every idea has its creation recorded, so an empty history is fed to
    // the page; the real one is checked first.
    const res = await fetch(`${fresh.base}/api/ideas`, {
      method: "POST",
      headers: { "X-API-Key": fresh.adminKey, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Fresh idea", potential_value: 10, estimated_cost: 1, confidence: 0.5 }),
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    await page.goto(`${fresh.base}/#/ideas/${id}`);
    const history = page.getByRole("region", { name: "Stage history", exact: true });
    await expect(history.locator("tbody tr")).toHaveCount(1);
    await expect(history.locator("tbody tr td").nth(3)).toHaveText("created at this stage");
    await page.route(/\/api\/ideas\/[^/]+\/stages(\?.*)?$/, (r) =>
      r.fulfill({ json: { changes: [], pagination: null } }),
    );
    await page.reload();
    await expect(history).toContainText("No stage change recorded.");
    await expect(history.getByRole("table")).toHaveCount(0);
    expect(await axeViolations(page), "axe violations on an idea without stage history").toEqual([]);
  } finally {
    await fresh.stop();
  }
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
    const sel = 'a[href], button:not([disabled]), select, input, textarea, summary, [tabindex]:not([tabindex="-1"])';
    return [...document.querySelectorAll<HTMLElement>(sel)]
      // checkVisibility, not only a box: the content of a closed <details>
      // keeps its boxes (content-visibility: hidden) and takes no focus.
      .filter((el) => (el.getClientRects().length > 0 && el.checkVisibility()) || el.classList.contains("skip-link"))
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

test("an operator retries a dead letter and cancels a task waiting for its retry", async ({ page }) => {
  const attempt = async (id: string) => {
    await must(200, "PATCH", `/api/agent/tasks/${id}`, { status: "running", worker_id: "browser-worker" });
    return must<{ status: string }>(200, "PATCH", `/api/agent/tasks/${id}`, {
      status: "failed",
      output: "HTTP 429 Too Many Requests",
    });
  };
  // Three attempts, each failed; an operator's retry skips each wait.
  const dead = await must<{ id: string }>(201, "POST", "/api/agent/tasks", { direction: "Call a busy model", task_type: "impl" });
  for (const _ of [1, 2]) {
    expect((await attempt(dead.id)).status).toBe("failed");
    await must(200, "POST", `/api/agent/tasks/${dead.id}/retry`, {});
  }
  expect((await attempt(dead.id)).status).toBe("discarded");
  const waiting = await must<{ id: string }>(201, "POST", "/api/agent/tasks", { direction: "Try again later", task_type: "spec" });
  expect((await attempt(waiting.id)).status).toBe("failed");

  await page.goto(views.pipeline);
  const retries = page.getByRole("region", { name: "Retries and dead letters", exact: true });
  const letter = retries.locator(`ul[aria-labelledby="discarded-h"] li[data-task-id="${dead.id}"]`);
  await expect(letter).toContainText("attempt 3 of 3");
  await expect(letter.locator(".summary")).toHaveText("attempt 3 of 3 failed: HTTP 429 Too Many Requests");
  await expect(letter.getByRole("button")).toHaveCount(0); // a viewer sees, an operator acts
  const queued = retries.locator(`ul[aria-labelledby="retrying-h"] li[data-task-id="${waiting.id}"]`);
  await expect(queued).toContainText("attempt 1 of 3");
  await expect(queued).toContainText("next attempt");

  await signIn(page, admin()["X-API-Key"], "the administrator key");
  await letter.getByRole("button", { name: "Retry now" }).click();
  await expect(retries.getByRole("status").filter({ hasText: "Retried impl task." })).toHaveCount(1);
  await expect(letter).toHaveCount(0);
  expect((await must<{ status: string; max_attempts: number }>(200, "GET", `/api/agent/tasks/${dead.id}`)).max_attempts).toBe(4);
  await queued.getByRole("button", { name: "Cancel" }).click();
  await expect(queued).toHaveCount(0);
  expect((await must<{ status: string }>(200, "GET", `/api/agent/tasks/${waiting.id}`)).status).toBe("cancelled");
});
