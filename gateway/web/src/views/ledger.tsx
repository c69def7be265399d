// The credit ledger: whether the economy is frozen, the supply and its
// backing now and day by day, incidents, the newest entries of the audit
// chain, and the contributors with their balances. Records name a
// contributor by handle (src/people.tsx), from the same list.

import { useMemo } from "preact/hooks";
import { api, type AuditEntry, type ContributorList, type SupplyDay } from "../api";
import { LineChart, TREND_DAYS } from "../charts";
import { fmt } from "../format";
import { useLive } from "../live";
import { useTitle } from "../nav";
import { PEOPLE_LISTED, peopleOf, ShortId } from "../people";
import { Facts, Flag, LoadState } from "../ui";

const AUDIT_SHOWN = 25;

/** UNITS names an audit entry's unit for people; "" (a freeze, a repair) moves nothing. */
const UNITS: Partial<Record<string, string>> = { cc: "CC", usd: "USD", cc_per_usd: "CC per USD" };

const inUnit = (unit: string) => (v: number | null) => (v == null ? "—" : `${fmt.num(v)} ${unit}`);

/**
 * SupplyCharts are the backing at the end of each of the last TREND_DAYS
 * days, one chart a quantity: CC, USD and their ratio have no common scale.
 */
function SupplyCharts({ days }: { days: SupplyDay[] }) {
  const dates = days.map((d) => d.day);
  const none = days.every(
    (d) => d.total_cc_outstanding == null && d.treasury_value_usd == null && d.reserve_ratio == null,
  );
  // The API carries the last values through quiet days, so a window of
  // nulls means the ledger has recorded no supply at all yet.
  if (none) {
    return (
      <p class="empty" data-testid="supply-history-empty">
        No CC supply yet: the history starts with the first deposit, withdrawal or distribution paid in CC.
      </p>
    );
  }
  const empty = `No value in the last ${TREND_DAYS} days.`;
  return (
    <div class="charts">
      <LineChart
        id="chart-reserve"
        title={`Reserve ratio per day, last ${TREND_DAYS} days`}
        days={dates}
        series={[{ name: "Reserve ratio", values: days.map((d) => d.reserve_ratio) }]}
        format={(v) => fmt.num(v)}
        reference={{ value: 1, label: "1.0, fully backed" }}
        empty={empty}
      />
      <LineChart
        id="chart-outstanding"
        title={`CC outstanding per day, last ${TREND_DAYS} days`}
        days={dates}
        series={[{ name: "CC outstanding", values: days.map((d) => d.total_cc_outstanding) }]}
        format={inUnit("CC")}
        tick={fmt.compact}
        empty={empty}
      />
      <LineChart
        id="chart-treasury"
        title={`Treasury per day (USD), last ${TREND_DAYS} days`}
        days={dates}
        series={[{ name: "Treasury", values: days.map((d) => d.treasury_value_usd) }]}
        format={inUnit("USD")}
        tick={fmt.compact}
        empty={empty}
      />
    </div>
  );
}

/**
 * Contributors lists the contributors read, oldest first: who each is
 * (the handle, or that they never registered) and their CC by bucket.
 */
function Contributors({ list }: { list: ContributorList }) {
  if (list.contributors.length === 0) {
    return (
      <p class="muted" data-testid="contributors-empty">
        No contributors yet: one appears when someone registers or a contribution names them.
      </p>
    );
  }
  return (
    <div class="table-wrap" role="region" aria-labelledby="contributors-caption" tabIndex={0}>
      <table>
        <caption id="contributors-caption">
          The first {list.contributors.length}
          {list.pagination ? ` of ${list.pagination.total}` : ""} contributors, oldest first
        </caption>
        <thead>
          <tr>
            <th scope="col">Contributor</th>
            <th scope="col">Id</th>
            <th scope="col">Trust</th>
            <th scope="col" class="num">
              Available CC
            </th>
            <th scope="col" class="num">
              Staked CC
            </th>
            <th scope="col" class="num">
              Cooling CC
            </th>
          </tr>
        </thead>
        <tbody>
          {list.contributors.map((c) => (
            <tr key={c.id} data-contributor-id={c.id}>
              <th scope="row">{c.handle ?? <span class="muted">unregistered</span>}</th>
              <td>
                <ShortId id={c.id} />
              </td>
              <td>{fmt.label(c.trust_level)}</td>
              <td class="num">{fmt.num(c.available_cc)}</td>
              <td class="num">{fmt.num(c.staked_cc)}</td>
              <td class="num">{fmt.num(c.cooling_cc)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function amount(e: AuditEntry) {
  const u = UNITS[e.unit];
  return `${fmt.num(e.amount)}${u ? ` ${u}` : ""}`;
}

export function LedgerView() {
  useTitle("Ledger");
  const status = useLive("freeze status", "status", api.incidentStatus);
  const supply = useLive("supply", "supply", api.supply);
  const history = useLive("supply history", "supply-history", (s) => api.supplyHistory(TREND_DAYS, s));
  const incidents = useLive("incidents", "incidents", (s) => api.incidents(20, s));
  const audit = useLive("audit entries", "audit", (s) => api.audit(AUDIT_SHOWN, s));
  // One read serves the Contributors section and the names in the records:
  // it refreshes with them, as balances change.
  const contributors = useLive("contributors", "contributors", (s) => api.contributors(PEOPLE_LISTED, s));
  const people = useMemo(() => peopleOf(contributors.data?.contributors), [contributors.data]);
  const st = status.data;
  const sp = supply.data;

  return (
    <>
      <h1 tabIndex={-1}>Ledger</h1>

      <section aria-labelledby="freeze-h">
        <h2 id="freeze-h">Emergency freeze</h2>
        <LoadState of={status} what="the freeze status" />
        {st && (
          <>
            <div class={st.frozen ? "banner banner-frozen" : "banner banner-ok"} data-testid="freeze-banner">
              <p>
                <strong>{st.frozen ? "Frozen" : "Not frozen"}</strong>
                {st.frozen ? ": every CC movement is refused until an administrator unfreezes." : ": CC moves normally."}
              </p>
              {st.frozen && st.frozen_reason && <p>Reason: {st.frozen_reason}</p>}
            </div>
            <Facts
              items={[
                ["Mode", st.mode + (st.mode_reason ? ` (${st.mode_reason})` : "")],
                ["Severity", st.severity],
                ["Oracle breaker", <Flag on={st.oracle_breaker_tripped} yes="tripped" no="closed" />],
                ["Audit chain", <Flag on={!st.audit_chain_valid} yes="broken" no="valid" />],
              ]}
            />
          </>
        )}
      </section>

      <section aria-labelledby="supply-h">
        <h2 id="supply-h">Supply and reserve</h2>
        <LoadState of={supply} what="the supply" />
        {sp && (
          <Facts
            items={[
              ["CC outstanding", fmt.num(sp.total_cc_outstanding)],
              ["Treasury", `${fmt.num(sp.treasury_value_usd)} USD`],
              ["Reserve ratio", <span data-testid="reserve-ratio">{fmt.num(sp.reserve_ratio)}</span>],
              ["Backing", sp.status === "healthy" ? "healthy (at least 1.0)" : fmt.label(sp.status)],
              ["Rate", `${fmt.num(sp.cc_per_usd)} CC per USD`],
            ]}
          />
        )}
        <h3>The last {TREND_DAYS} days</h3>
        <LoadState of={history} what="the supply history" />
        {history.data && <SupplyCharts days={history.data.days} />}
      </section>

      <section aria-labelledby="incidents-h">
        <h2 id="incidents-h">Incidents</h2>
        <LoadState of={incidents} what="the incidents" />
        {incidents.data && incidents.data.incidents.length === 0 && <p class="muted">No incidents.</p>}
        {incidents.data && incidents.data.incidents.length > 0 && (
          <div class="table-wrap" role="region" aria-labelledby="incidents-caption" tabIndex={0}>
            <table>
              <caption id="incidents-caption">The latest incidents, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Severity</th>
                  <th scope="col">By</th>
                  <th scope="col">Detail</th>
                </tr>
              </thead>
              <tbody>
                {incidents.data.incidents.map((i) => (
                  <tr key={i.id}>
                    <td>{fmt.time(i.created_at)}</td>
                    <td>{fmt.label(i.kind)}</td>
                    <td>{i.severity}</td>
                    <td>{people.name(i.actor)}</td>
                    <td>{i.detail}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section aria-labelledby="audit-h">
        <h2 id="audit-h">Audit chain</h2>
        <LoadState of={audit} what="the audit entries" />
        {audit.data && audit.data.entries.length === 0 && <p class="muted">The chain is empty.</p>}
        {audit.data && audit.data.entries.length > 0 && (
          <div class="table-wrap" role="region" aria-labelledby="audit-caption" tabIndex={0}>
            <table>
              <caption id="audit-caption">
                The newest {audit.data.entries.length}
                {audit.data.pagination ? ` of ${audit.data.pagination.total}` : ""} audit entries
              </caption>
              <thead>
                <tr>
                  <th scope="col" class="num">
                    Seq
                  </th>
                  <th scope="col">When</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Subject</th>
                  <th scope="col" class="num">
                    Amount
                  </th>
                  <th scope="col">Hash</th>
                </tr>
              </thead>
              <tbody>
                {audit.data.entries.map((e) => (
                  <tr key={e.seq}>
                    <td class="num">{e.seq}</td>
                    <td>{fmt.time(e.created_at)}</td>
                    <td>{fmt.label(e.kind)}</td>
                    <td>{people.name(e.actor)}</td>
                    <td>{people.name(e.subject)}</td>
                    <td class="num">{amount(e)}</td>
                    <td>
                      <code title={e.hash}>{e.hash.slice(0, 12)}…</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section aria-labelledby="contributors-h">
        <h2 id="contributors-h">Contributors</h2>
        <LoadState of={contributors} what="the contributors" />
        {contributors.data && <Contributors list={contributors.data} />}
      </section>
    </>
  );
}
