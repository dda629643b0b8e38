# Patchbay in a container: a build stage with the toolchain better-sqlite3 may need (when no
# prebuilt binary matches), and a slim runtime stage that runs the compiled server as the
# unprivileged `node` user. Build and run:
#   docker build -t patchbay .
#   docker run --init -p 8088:8088 -p 5060:5060/udp -p 5060:5060/tcp \
#     -v "$PWD/patchbay.yaml:/etc/patchbay/patchbay.yaml:ro" -v patchbay-data:/var/lib/patchbay patchbay
# The configuration must set ari.users: the server listens on 0.0.0.0 here, and the embedded
# default password is refused off loopback.

FROM node:22-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
# Scripts are skipped here (prepare builds dist/, which needs the sources, copied below);
# better-sqlite3's own install is run explicitly.
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    PATCHBAY_CONFIG=/etc/patchbay/patchbay.yaml \
    PATCHBAY_DATA_DIR=/var/lib/patchbay \
    PATCHBAY_HTTP_BIND=0.0.0.0
WORKDIR /opt/patchbay
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY patchbay.example.yaml patchbay.sip.example.yaml LICENSE README.md ./
RUN mkdir -p /var/lib/patchbay /etc/patchbay \
 && chown node:node /var/lib/patchbay
USER node
VOLUME ["/var/lib/patchbay"]
EXPOSE 8088 5060/udp 5060/tcp
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8088/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node itself receives SIGTERM (no shell in between) and stops cleanly; --init adds a reaper.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/main.js"]
