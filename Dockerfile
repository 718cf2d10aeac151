# Folio as a container image (docs/deploy.md). Multi-stage: the build stage compiles the WebAssembly engine and the
# TypeScript; the runtime stage holds the compiled output and production dependencies only, and runs as a non-root
# user. Build: docker build -t folio .   Run: see compose.yaml.

# ---- build ----------------------------------------------------------------------------------------------------
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json asconfig.json ./
# `npm run build` is scripts/build-if-changed.mjs (the WebAssembly engine, then the TypeScript).
COPY scripts ./scripts
COPY assembly ./assembly
COPY src ./src
COPY bench ./bench
COPY bin ./bin
COPY web ./web
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# ---- runtime --------------------------------------------------------------------------------------------------
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
# Owned by root and read-only for the service user: the process cannot modify its own code.
COPY --from=build /src/package.json /src/package-lock.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY --from=build /src/build/engine.wasm ./build/engine.wasm
COPY --from=build /src/bin ./bin
COPY --from=build /src/web ./web
# The file store (DATA_DIR=/data) when no DATABASE_URL is given (DATABASE_URL wins when set): `docker run … import`
# writes there, `serve` reads it. Owned by the service user (uid 1000) and declared a volume, so the prices outlive
# the container; a fresh named volume takes this owner. (Created before VOLUME: ownership set after it is lost.)
RUN mkdir /data && chown node:node /data && chmod 0750 /data
VOLUME ["/data"]
# The `node` user (uid 1000) comes with the base image.
USER node
EXPOSE 8080
# Liveness only (/healthz answers as soon as the process listens); readiness is /readyz, for the proxy. With
# HEALTH_PORT set, the probe asks the health thread there (docs/deploy.md), which compute traffic cannot delay.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.HEALTH_PORT||process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM lets in-flight requests finish (src/http/server.ts); node runs as PID 1 and handles it itself.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/src/cli/main.js"]
CMD ["serve"]
