import type { Queryable } from './pool.js';

/** A new revision from the one sequence (00-decisions §4): an opaque decimal string. */
export async function nextRevision(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ revision: string }>("SELECT nextval('revision_seq')::text AS revision");
  return rows[0].revision;
}
