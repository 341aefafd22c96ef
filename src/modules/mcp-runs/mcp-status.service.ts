import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import type { Config } from '../../config';
import { APP_VERSION } from '../../lib/version';
import { probeDatabase, uptimeSeconds, type DatabaseProbe } from '../health/health.service';
import { mcpRunsRecords, type TestRunRow } from './mcp-runs.records';

export type DiskUsage = { usedShare: number; freeShare: number; path: string };

/**
 * The file system holding dir, measured at dir or, before the service has created it, at its
 * nearest existing parent. Shares are of the space an unprivileged process may use, as df shows
 * them: used / (used + available), so the blocks reserved for root count as neither.
 */
export async function diskUsage(dir: string): Promise<DiskUsage> {
  let at = path.resolve(dir);
  for (;;) {
    try {
      const s = await fs.statfs(at);
      const used = (s.blocks - s.bfree) * s.bsize;
      const available = s.bavail * s.bsize;
      const usable = used + available;
      if (usable <= 0) throw new Error(`the file system at ${at} reports no space`);
      return { usedShare: used / usable, freeShare: available / usable, path: at };
    } catch (err) {
      const parent = path.dirname(at);
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || parent === at) throw err;
      at = parent;
    }
  }
}

/**
 * This process's CPU share since the previous reading (the first reading: since the process
 * started), across every core the process may use: 100% is all of them busy with this process.
 * The last reading is this process's own; another instance measures itself.
 */
let lastCpuReading: { usage: NodeJS.CpuUsage; at: number } | undefined;
function processCpuShare(): number {
  const now = performance.now();
  const usage = process.cpuUsage();
  const previous = lastCpuReading ?? { usage: { user: 0, system: 0 }, at: now - process.uptime() * 1000 };
  lastCpuReading = { usage, at: now };
  const cpuMicros = usage.user - previous.usage.user + (usage.system - previous.usage.system);
  const wallMicros = (now - previous.at) * 1000;
  if (wallMicros <= 0) return 0;
  return Math.min(1, cpuMicros / (wallMicros * os.availableParallelism()));
}

export type StatusRecord = {
  version: string;
  environment: string;
  uptimeSeconds: number;
  database: DatabaseProbe;
  lastRun: TestRunRow | undefined;
  /** shares 0..1; null when a figure could not be read */
  memoryShare: number;
  cpuShare: number;
  diskShare: number | null;
};

/** The figures of GET /api/mcp/status, all measured now; nothing here throws when the database is down. */
export function mcpStatusService({ db, config }: { db: Knex; config: Pick<Config, 'env' | 'dataDir'> }) {
  return {
    async status(): Promise<StatusRecord> {
      const cpuShare = processCpuShare();
      const [database, disk] = await Promise.all([probeDatabase(db), diskUsage(config.dataDir).catch(() => undefined)]);
      // Only asked of a database that just answered, so a down database does not hold the answer for a second timeout.
      const lastRun = database.connected
        ? await mcpRunsRecords(db)
            .lastFinished()
            .catch(() => undefined)
        : undefined;
      return {
        version: APP_VERSION,
        environment: config.env,
        uptimeSeconds: uptimeSeconds(),
        database,
        lastRun,
        memoryShare: process.memoryUsage.rss() / os.totalmem(),
        cpuShare,
        diskShare: disk?.usedShare ?? null,
      };
    },
  };
}
