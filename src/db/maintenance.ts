import type { RequestHandler } from 'express';
import { Conflict, ServiceUnavailable } from '../http/errors';

const DRAIN_TIMEOUT_MS = 15_000;
const RETRY_AFTER_SECONDS = '30';

/**
 * A database restore replaces every table under the running service. While one runs, this
 * instance answers every other API request 503 (instead of the errors half-replaced tables
 * would give) and its scheduled jobs skip their turn.
 */
export type Maintenance = {
  /** what is running, e.g. 'A database restore', or undefined */
  readonly activity: string | undefined;
  /**
   * Closes the gate, waits (up to 15 s) for the requests already in flight, other than the
   * caller's own, to finish, runs fn, and opens the gate again. A second call while one runs
   * is a 409.
   */
  exclusive<T>(activity: string, fn: () => Promise<T>): Promise<T>;
  /** the middleware in front of the API */
  gate: RequestHandler;
};

export function createMaintenance(): Maintenance {
  let activity: string | undefined;
  let inFlight = 0;
  const waiters = new Set<() => void>();
  const finished = () => {
    inFlight -= 1;
    for (const wake of waiters) wake();
  };

  return {
    get activity() {
      return activity;
    },

    async exclusive(what, fn) {
      if (activity) throw Conflict(`${activity} is already in progress`);
      activity = what;
      try {
        // The caller is itself a request in flight.
        const deadline = Date.now() + DRAIN_TIMEOUT_MS;
        while (inFlight > 1 && Date.now() < deadline) {
          await new Promise<void>((resolve) => {
            const wake = () => {
              waiters.delete(wake);
              resolve();
            };
            waiters.add(wake);
            setTimeout(wake, 100);
          });
        }
        return await fn();
      } finally {
        activity = undefined;
      }
    },

    gate: (_req, res, next) => {
      if (activity) {
        res.set('Retry-After', RETRY_AFTER_SECONDS);
        return next(ServiceUnavailable(`${activity} is in progress; try again in a minute`));
      }
      inFlight += 1;
      res.once('close', finished);
      next();
    },
  };
}
