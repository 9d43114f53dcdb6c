# One build, two images: `docker build --target api .` and `--target worker .`
# (docker-compose.yml builds both). Node 20 as on the development machines.

FROM node:20-bookworm-slim AS build
WORKDIR /herald
ENV TURBO_TELEMETRY_DISABLED=1
COPY . .
RUN npx -y pnpm@12.21.0 install --frozen-lockfile \
 && npx -y pnpm@12.21.0 run build

FROM node:20-bookworm-slim AS runtime
WORKDIR /herald
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
# The built workspace keeps its layout: the migrations are read from prisma/ at run time.
COPY --from=build /herald /herald
USER node

FROM runtime AS api
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Applies pending migrations (replicas wait on an advisory lock), then serves.
CMD ["sh", "-c", "node apps/cli/dist/main.js migrate && exec node apps/api/dist/main.js"]

FROM runtime AS worker
# Prometheus scrapes the worker's /metrics here (HERALD_WORKER_METRICS_PORT; 0 turns it off).
EXPOSE 9464
CMD ["node", "apps/worker/dist/main.js"]
