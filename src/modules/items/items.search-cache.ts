import { LRUCache } from 'lru-cache';
import type { Db } from '../../db/knex';

/** A search's matching item ids in list order (name, id), as of one item_search_generation value. */
export type SearchMatches = { generation: string; ids: number[] };

/**
 * At most this many ids are kept over all searches (about 4 MB); a search with more matches than
 * that is never kept and is answered from the database every time.
 */
const MAX_CACHED_IDS = 500_000;

// Per database handle: test files open several databases in one process, cloned from one template
// and so starting from the same generation value.
const cachesByDb = new WeakMap<Db, LRUCache<string, SearchMatches>>();

/**
 * The recently searched lists' matches. Only a hint: the list reads the current generation in
 * the same statement as the page's rows and recounts when it differs (migration
 * 20261123002200), so every instance over one database answers what the database holds.
 */
export function searchMatchesCache(db: Db): LRUCache<string, SearchMatches> {
  let cache = cachesByDb.get(db);
  if (!cache) {
    cache = new LRUCache<string, SearchMatches>({ maxSize: MAX_CACHED_IDS, sizeCalculation: (m) => m.ids.length + 1 });
    cachesByDb.set(db, cache);
  }
  return cache;
}
