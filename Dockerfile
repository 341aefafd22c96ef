# syntax=docker/dockerfile:1
# The build stage installs the production dependencies (esbuild among them) and compiles the
# TypeScript into dist/ as `npm start` does; the runtime stage takes both, with the sources
# that dist/ reads (views, public, migrations, package.json), and runs as the unprivileged
# `node` user.

# Node 24, the active LTS: production runs a supported Node (20 reached end of life on 2026-04-30).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
# Everything but what .dockerignore leaves out (node_modules, dist, data, tests, .git).
COPY . .
RUN npm run build

FROM node:24-bookworm-slim AS runtime
# pg_dump/pg_restore matching the PostgreSQL 15 server, for database backups.
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-client-15 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
# NODE_OPTIONS: package.json's config.serverNodeOptions, as `npm start` uses them (a 4 MB young
# generation keeps the idle server under 100 MB; docs/performance.md). Set NODE_OPTIONS to replace them.
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=4 \
    PORT=3000 \
    HOST=0.0.0.0 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build --chown=root:root /app ./
# The code is read-only for the service; only DATA_DIR (backups, archives, the generated
# session secret) is writable.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
# node itself is PID 1 and receives SIGTERM directly (graceful shutdown).
CMD ["node", "dist/server.js"]
