# syntax=docker/dockerfile:1
# Runplane's image: ONE image for all six services, chosen by argument (docs/deploy.md).
#
#   docker build -t runplane/runplane:0.1.0 .
#   docker run runplane/runplane:0.1.0 start --service queue-api    (cluster mode: one service)
#   docker run runplane/runplane:0.1.0 migrate --service queue-api  (apply migrations and exit)
#   docker run -p 8080:8080 -v runplane:/data runplane/runplane:0.1.0 start   (standalone)
#
# Runs as an unprivileged user (10001) on a read-only root file system: the application writes
# nothing but its standalone data directory (/data) and the temp dir (/tmp). No Prisma engine binary
# is needed or downloaded: the clients are generated at build time (the wasm query compiler ships
# inside @prisma/client) and migrations are applied by Runplane's own runner (docs/database.md).

ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# ---- 1. build: all dependencies, compile every workspace, generate the Prisma clients --------
FROM ${NODE_IMAGE} AS build
WORKDIR /src
ENV TURBO_TELEMETRY_DISABLED=1 CHECKPOINT_DISABLE=1 NPM_CONFIG_AUDIT=false NPM_CONFIG_FUND=false NPM_CONFIG_UPDATE_NOTIFIER=false
COPY . .
# --ignore-scripts: no install script may download anything (Prisma's engines are not needed).
RUN npm ci --ignore-scripts \
 && npx turbo run build --output-logs=errors-only

# ---- 2. the runtime tree: package manifests, compiled code, migrations, production deps ------
# Every workspace keeps its manifest and whatever it ships at run time (dist/, bin/, prisma/,
# data files); sources, tests and build configuration stay behind. Then production dependencies
# only: no TypeScript, Jest, turbo or infra tooling; --omit=optional also leaves out optional peers
# such as the Prisma CLI and its studio (~250 MB the runtime never loads).
RUN mkdir /out && cp package.json package-lock.json /out/ \
 && for ws in apps/* packages/* infra; do \
      mkdir -p "/out/$ws" && cp -R "$ws/." "/out/$ws/" \
      && rm -rf "/out/$ws/node_modules" "/out/$ws/src" "/out/$ws/test" "/out/$ws/k8s" "/out/$ws/.turbo" \
                "/out/$ws"/tsconfig*.json "/out/$ws"/jest.config.* "/out/$ws"/dist/.tsbuildinfo; \
    done \
 && cd /out && npm ci --omit=dev --omit=optional --ignore-scripts && npm cache clean --force

# ---- 3. runtime ------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# The image runs the application only: npm and corepack are not needed at run time.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
           /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
 && groupadd --system --gid 10001 runplane \
 && useradd --system --uid 10001 --gid 10001 --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin runplane \
 && mkdir /data && chown 10001:10001 /data
WORKDIR /app
# Owned by root, read-only for the service user.
COPY --from=build /out /app
# NODE_ENV is left to the deployment (the Kubernetes ConfigMap sets production): with it, the vault
# requires a master key, while a standalone container keeps its generated key in /data.
# A container is reached through its network interface: listen on all of them (outside a
# container the default is loopback only).
ENV RUNPLANE_DATA_DIR=/data PORT=8080 HOST=0.0.0.0
USER 10001:10001
EXPOSE 8080
VOLUME ["/data"]
# --max-semi-space-size: see packages/cli/bin/runplane.js.
ENTRYPOINT ["node", "--max-semi-space-size=64", "/app/packages/cli/bin/runplane.js"]
CMD ["start"]
