import { createServer } from 'node:http';
import { checkAdminPassword, ConfigError, loadConfig, loadEnvFile } from './config';
import { createLogger } from './logger';
import { openDatabase } from './db/open';
import { createPgPool } from './db/knex';
import { migrateLatestInTurn } from './db/migrate';
import { bootstrapAdmin } from './auth/bootstrap-admin';
import { resolveSessionSecret } from './auth/session';
import { JOBS, startScheduler } from './jobs/scheduler';
import { scheduledBackupJob } from './jobs/scheduled-backup';
import { startOutboxDelivery } from './jobs/outbox-delivery';
import { findPgTools } from './modules/backups/backups.pg-tools';
import { buildApp } from './app';
import { createMaintenance } from './db/maintenance';
import { createReadRouter } from './db/replicas';
import { createLifecycle } from './http/lifecycle';
import { removeLeftoverFiles } from './lib/files';
import { backupFolder, UNFINISHED_BACKUP } from './modules/backups/backups.files';
import { archivesDirectory, UNFINISHED_ARCHIVE } from './modules/archives/archives.service';

const SHUTDOWN_GRACE_MS = 15_000;
/** A dump or archive not renamed into place a day after it was last written was never finished. */
const UNFINISHED_FILE_AGE_MS = 24 * 3_600_000;

async function removeUnfinishedFiles(dataDir: string, logger: ReturnType<typeof createLogger>) {
  const leftovers = [
    ...(await removeLeftoverFiles(backupFolder(dataDir).path, UNFINISHED_BACKUP, UNFINISHED_FILE_AGE_MS)),
    ...(await removeLeftoverFiles(archivesDirectory(dataDir), UNFINISHED_ARCHIVE, UNFINISHED_FILE_AGE_MS)),
  ];
  if (leftovers.length > 0)
    logger.warn({ files: leftovers }, 'removed unfinished backup and archive files left by an earlier run');
}

async function main() {
  loadEnvFile();
  const config = loadConfig();
  await checkAdminPassword(config);
  const logger = createLogger(config.logLevel, undefined, {
    pretty: config.env === 'development' && process.stdout.isTTY,
  });
  const database = await openDatabase(config, logger);
  const applied = await migrateLatestInTurn(database.direct);
  if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
  await bootstrapAdmin(database.db, config, logger);
  await removeUnfinishedFiles(config.dataDir, logger);
  const pgTools = await findPgTools(database.direct, database.directUrl, config.pgBinDir);
  // which major runs, and whether the client tools fit it, is the first thing asked of a backup problem
  logger.info(
    { postgres: pgTools.serverVersion, clientTools: pgTools.toolVersions },
    'PostgreSQL server and client tools',
  );
  if ('problem' in pgTools) logger.warn(`backups and restores will answer 503 until this is fixed: ${pgTools.problem}`);

  const sessionPool = createPgPool(
    database.url,
    (err: Error & { code?: string }) =>
      logger.warn(
        { message: err.message, code: err.code },
        'session store connection lost; the pool reconnects on demand',
      ),
    5,
    config.databasePoolMode,
  );
  const maintenance = createMaintenance();
  const lifecycle = createLifecycle();
  const reads = createReadRouter({
    primary: database.db,
    replicaUrls: config.databaseReplicaUrls,
    maxLagMs: config.databaseReplicaMaxLagMs,
    logger,
  });
  reads.start();
  const app = buildApp({
    db: database.db,
    directDb: database.direct,
    databaseUrl: database.directUrl,
    reads,
    maintenance,
    lifecycle,
    config,
    logger,
    sessionPool,
    sessionSecret: await resolveSessionSecret(config),
  });
  const backupDeps = {
    db: database.db,
    directDb: database.direct,
    databaseUrl: database.directUrl,
    config,
    logger,
    maintenance,
  };
  // the jobs and their locks on the session connection (issue 44), the outbox's LISTEN too
  const scheduler = startScheduler(database.direct, logger, maintenance, [...JOBS, scheduledBackupJob(backupDeps)]);
  const outbox = startOutboxDelivery({ db: database.db, databaseUrl: database.directUrl, config, logger });
  const server = createServer(app);
  server.listen(config.port, config.host, () =>
    logger.info({ port: config.port, host: config.host }, 'stores service listening'),
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // The load balancer sees the 503 on its next check and stops sending; what it sent meanwhile is still served.
    lifecycle.shuttingDown = true;
    logger.info(
      { signal, drainSeconds: config.shutdownDrainMs / 1000 },
      'shutting down: /api/health answers 503 while requests drain',
    );
    await new Promise((resolve) => setTimeout(resolve, config.shutdownDrainMs));
    logger.info('no longer accepting connections; finishing the requests in flight');
    const force = setTimeout(() => {
      logger.error('in-flight requests did not finish in time; closing anyway');
      server.closeAllConnections();
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    // Stop accepting; idle keep-alive sockets close now, busy ones as soon as their
    // response is done (responses from now on also say Connection: close).
    server.on('request', (_req, res) => res.setHeader('Connection', 'close'));
    const reaper = setInterval(() => server.closeIdleConnections(), 100);
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    clearInterval(reaper);
    scheduler.stop();
    await outbox.stop();
    await sessionPool.end();
    await reads.close();
    await database.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error('failed to start:', err);
  process.exit(1);
});
