# One build, two images: `docker build --target api .` and `--target worker .`
# (docker-compose.yml builds both). Node 24 LTS; Herald itself runs on Node 20.19 and later.

FROM node:24-bookworm-slim AS build
WORKDIR /herald
ENV TURBO_TELEMETRY_DISABLED=1 TURBO_NO_UPDATE_NOTIFIER=1
COPY . .
# Every dependency (the build needs the dev ones), then the cli and what it runs: api, worker and
# the packages, with the Prisma client generated and compiled into packages/database/dist, and the console.
RUN npx -y pnpm@12.21.0 install --frozen-lockfile \
 && npx -y pnpm@12.21.0 exec node scripts/turbo.js run build --filter=@herald/cli --filter=@herald/console
# Each image's tree (scripts/runtime-tree.js): the workspace's layout with prisma/ (the migrations,
# read at run time), the dist/ folders it runs, and production dependencies only, installed
# offline from the store filled above, as pnpm-lock.yaml pins them. The api image holds the cli
# too: it applies migrations before the api starts, and the console's static files it serves at /console.
RUN node scripts/runtime-tree.js /out/api @herald/cli \
 && cp -r apps/console/dist /out/api/apps/console/dist \
 && node scripts/runtime-tree.js /out/worker @herald/worker

FROM node:24-bookworm-slim AS runtime
WORKDIR /herald
# NODE_OPTIONS: Herald's Node flags (HERALD_NODE_FLAGS in packages/core/src/config/node-flags.ts),
# which V8 reads only at start: Node 24's young generation would otherwise grow to 128 MB.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 NODE_OPTIONS=--max-semi-space-size=16

FROM runtime AS api
# Owned by root, read-only to the app, which writes nothing: logs go to stdout, data to
# DATABASE_URL's server (the embedded database of `herald start` is not used in containers).
COPY --from=build /out/api /herald
# The image's `node` user, by number so that runAsNonRoot policies can check it.
USER 1000:1000
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Applies pending migrations (replicas wait on an advisory lock), then serves.
CMD ["sh", "-c", ": \"${DATABASE_URL:?set DATABASE_URL: the api image needs a PostgreSQL server}\" && node apps/cli/dist/main.js migrate && exec node apps/api/dist/main.js"]

FROM runtime AS worker
COPY --from=build /out/worker /herald
USER 1000:1000
# Prometheus scrapes the worker's /metrics here (HERALD_WORKER_METRICS_PORT; 0 turns it off).
EXPOSE 9464
CMD ["node", "apps/worker/dist/main.js"]
