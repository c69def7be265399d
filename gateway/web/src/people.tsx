// Naming people. The API identifies a contributor by an id: a UUID for one
// who registered (and for anything else Foundry mints), "github:<login>" or
// "email:<address>" for one a GitHub push created. Records (the audit
// chain, incidents, an idea's stage history) carry that id; the page names
// the contributor by handle instead, from GET /api/contributors, and never
// shows a whole UUID as the label: 36 characters of hex name nobody, widen
// every table, and are read out in full by a screen reader.

import type { ComponentChild } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { api, type Contributor } from "./api";
import { useLiveClock } from "./live";

/**
 * PEOPLE_LISTED is how many contributors the page reads to name them: the
 * API's largest page, oldest first. A contributor past it is shown by
 * short id, as one that never registered is.
 */
export const PEOPLE_LISTED = 500;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * ShortId shows an id: a UUID as its first 8 characters and "…", the whole
 * in its title (as the audit table shows a hash); any other id, which is
 * short or says something ("admin", "github:ada"), as it is.
 */
export function ShortId({ id }: { id: string }) {
  if (!UUID.test(id)) return <>{id}</>;
  return <code title={id}>{id.slice(0, 8)}…</code>;
}

/** People names the contributors the page has read. */
export interface People {
  /**
   * handle is id's handle; null for a contributor who never registered,
   * undefined for an id that is no contributor the page read ("admin",
   * "token:<id>", "economy", or one past PEOPLE_LISTED).
   */
  handle(id: string): string | null | undefined;
  /**
   * name shows who or what an actor or subject is: a contributor's handle
   * when it has one, else the id through ShortId. What is no contributor
   * ("admin", "signer:ops", "economy") shows as the record spells it.
   */
  name(id: string): ComponentChild;
}

/** peopleOf is the lookup over contributors already read (undefined: none yet). */
export function peopleOf(list: readonly Contributor[] | undefined): People {
  const handles = new Map<string, string | null>((list ?? []).map((c) => [c.id, c.handle]));
  return {
    handle: (id) => handles.get(id),
    name: (id) => handles.get(id) ?? <ShortId id={id} />,
  };
}

/**
 * usePeople reads the first PEOPLE_LISTED contributors once for the view
 * that calls it: names change rarely, and unlike the records they name
 * they are not worth a read every few seconds, nor an announcement. A read
 * that fails is tried again with the live clock's next tick; until one
 * succeeds, contributors are shown by short id. A view that lists the
 * contributors anyway (the ledger) builds its lookup with peopleOf from
 * that list instead.
 */
export function usePeople(): People {
  const live = useLiveClock();
  const [list, setList] = useState<Contributor[] | undefined>(undefined);
  const read = list !== undefined;
  useEffect(() => {
    if (read) return undefined;
    const ctrl = new AbortController();
    api.contributors(PEOPLE_LISTED, ctrl.signal).then(
      (page) => {
        if (!ctrl.signal.aborted) setList(page.contributors);
      },
      // Names are a nicety: the records show by id meanwhile.
      () => undefined,
    );
    return () => ctrl.abort();
  }, [read ? -1 : live.tick]);
  return useMemo(() => peopleOf(list), [list]);
}
