# syntax=docker/dockerfile:1
# One image for every Warren process (broker, calculator, audit, jobs, the CLI);
# docker-compose.yml picks the program with `command`. Multi-stage: the build
# stage compiles TypeScript with the dev dependencies, the runtime stage holds
# production dependencies (`npm ci --omit=dev`) and the compiled dist/ folders,
# and runs as the unprivileged `node` user.
# Node 24 'Krypton', the Active LTS line (Node 20 reached end of life in April 2026); README
# "Supported versions" says what CI runs besides it. Override with --build-arg NODE_IMAGE=...
ARG NODE_IMAGE=node:24-trixie-slim

FROM ${NODE_IMAGE} AS base
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false

# Only the manifests: the root package.json, the lockfile and every workspace's
# package.json (and bin/ folders, so npm links `warren`), found rather than
# listed so a new workspace needs no edit here. Later stages copy from this
# one, so their npm ci layers stay cached until a manifest changes.
FROM base AS manifests
COPY . /src
RUN cd /src \
 && find . -name package.json -not -path '*/node_modules/*' -exec cp --parents {} /app/ \; \
 && for b in libs/*/bin services/*/bin broker/bin; do if [ -d "$b" ]; then cp -r --parents "$b" /app/; fi; done \
 && cp package-lock.json /app/

# Production dependencies only.
FROM base AS deps
COPY --from=manifests /app/ ./
RUN npm ci --omit=dev --ignore-scripts

# Everything, compiled.
FROM base AS build
COPY --from=manifests /app/ ./
RUN npm ci --ignore-scripts
COPY tsconfig.base.json tsconfig.build.json ./
COPY libs/ libs/
COPY services/ services/
COPY broker/ broker/
RUN npm run build \
 && mkdir -p /out \
 && for d in libs/* services/* broker; do if [ -d "$d/dist" ]; then mkdir -p "/out/$d" && cp -r "$d/dist" "/out/$d/dist"; fi; done

# What runs: manifests + production node_modules + dist/, as the `node` user.
FROM base AS runtime
ENV NODE_ENV=production
COPY --from=deps --chown=node:node /app/ ./
COPY --from=build --chown=node:node /out/ ./
USER node
# Overridden per process by docker-compose.yml; the broker by default.
EXPOSE 18001
CMD ["node", "broker/dist/main.js"]
