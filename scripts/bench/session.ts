// Baseline: the cost of an authenticated request that does no work of its own.
import { BENCH_ADMIN, report, runLoad, startBenchServer } from './lib';

export async function run(): Promise<void> {
  const server = await startBenchServer();
  try {
    const cookie = await server.login(BENCH_ADMIN.email, BENCH_ADMIN.password);
    const res = await runLoad({
      url: `${server.baseUrl}/api/auth/user`,
      headers: { cookie },
      connections: 50,
      duration: 8,
    });
    report('GET /api/auth/user (session cookie, 50 connections)', {
      'req/s': res.requestsPerSecond,
      'p50 ms': res.p50,
      'p99 ms': res.p99,
      'errors / non-2xx': `${res.errors} / ${res.non2xx}`,
    });
  } finally {
    await server.stop();
  }
}
