/**
 * Whether this process has been told to stop. From the signal on, /api/health answers 503, so a
 * load balancer stops sending new requests while the server still serves what reaches it during
 * the drain window (SHUTDOWN_DRAIN_SECONDS).
 */
export type Lifecycle = { shuttingDown: boolean };

export const createLifecycle = (): Lifecycle => ({ shuttingDown: false });
