// The credit ledger: whether the economy is frozen, the supply and its
// backing, incidents, and the newest entries of the audit chain.

import { api, type AuditEntry } from "../api";
import { BarChart } from "../charts";
import { fmt } from "../format";
import { useLive } from "../live";
import { useTitle } from "../nav";
import { Facts, Flag, LoadState } from "../ui";

const AUDIT_SHOWN = 25;

/** UNITS names an audit entry's unit for people; "" (a freeze, a repair) moves nothing. */
const UNITS: Partial<Record<string, string>> = { cc: "CC", usd: "USD", cc_per_usd: "CC per USD" };

function amount(e: AuditEntry) {
  const u = UNITS[e.unit];
  return `${fmt.num(e.amount)}${u ? ` ${u}` : ""}`;
}

export function LedgerView() {
  useTitle("Ledger");
  const status = useLive("freeze status", "status", api.incidentStatus);
  const supply = useLive("supply", "supply", api.supply);
  const incidents = useLive("incidents", "incidents", (s) => api.incidents(20, s));
  const audit = useLive("audit entries", "audit", (s) => api.audit(AUDIT_SHOWN, s));
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
          <>
            <Facts
              items={[
                ["CC outstanding", fmt.num(sp.total_cc_outstanding)],
                ["Treasury", `${fmt.num(sp.treasury_value_usd)} USD`],
                ["Reserve ratio", <span data-testid="reserve-ratio">{fmt.num(sp.reserve_ratio)}</span>],
                ["Backing", sp.status === "healthy" ? "healthy (at least 1.0)" : fmt.label(sp.status)],
                ["Rate", `${fmt.num(sp.cc_per_usd)} CC per USD`],
              ]}
            />
            <BarChart
              id="chart-reserve"
              title="Reserve ratio (1.0 is fully backed)"
              format={(v) => fmt.num(v)}
              max={Math.max(2, sp.reserve_ratio)}
              groups={[
                { label: "Reserve", bars: [{ name: "ratio", value: sp.reserve_ratio }] },
                { label: "Fully backed", bars: [{ name: "ratio", value: 1 }] },
              ]}
            />
          </>
        )}
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
                    <td>{i.actor}</td>
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
                    <td>{e.actor}</td>
                    <td>{e.subject}</td>
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
    </>
  );
}
