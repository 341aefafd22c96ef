# syntax=docker/dockerfile:1
# The service runs its TypeScript through tsx (a runtime dependency), so there is no
# compile step: the build stage installs the production dependencies, the runtime stage
# copies them next to the sources and runs as the unprivileged `node` user.

FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:20-bookworm-slim AS runtime
# pg_dump/pg_restore matching the PostgreSQL 15 server, for database backups.
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-client-15 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
# Everything but what .dockerignore leaves out (node_modules, data, tests, .git).
COPY --chown=root:root . .
# The code is read-only for the service; only DATA_DIR (backups, archives, the generated
# session secret) is writable.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
# node itself is PID 1 and receives SIGTERM directly (graceful shutdown); tsx is loaded as a hook.
CMD ["node", "--import", "tsx", "src/server.ts"]
