# svc in a container: SMTP on 1025, web inbox, REST API, Socket.IO and MCP on 1080.
# Configured by SVC_* variables alone (docs/docker.md lists them); mail is kept in
# memory unless SVC_MAIL_DIRECTORY=/data (mount a volume there) or SVC_STORAGE
# names a PostgreSQL database.
#
#   docker build -t svc-mail .
#   docker run -p 1025:1025 -p 1080:1080 svc-mail
#
# NODE_IMAGE picks the Node.js 20 (or later) image every stage starts from.
ARG NODE_IMAGE=node:20-bookworm-slim

# The package as the registry would ship it: compiled, then packed and unpacked,
# so the image holds the files `npm install svc-mail` gets (but its documentation,
# which .dockerignore leaves out of the build).
FROM ${NODE_IMAGE} AS package
WORKDIR /src
COPY package.json package-lock.json ./
# TypeScript, the type packages and esbuild (which bundles the inbox page's
# scripts) are needed here; esbuild's binary for this platform is an optional
# dependency, so optional dependencies are installed too (in this stage only).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build \
 && npm pack --ignore-scripts --silent --pack-destination /tmp \
 && mkdir /opt/svc \
 && tar -xzf /tmp/svc-mail-*.tgz -C /opt/svc --strip-components=1 \
 && chmod 755 /opt/svc/bin/*.mjs

# Production dependencies at the versions of the lock file, in a stage of their own
# so a change of the sources reuses them.
FROM ${NODE_IMAGE} AS dependencies
WORKDIR /opt/svc
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm package-lock.json

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
COPY --from=dependencies /opt/svc /opt/svc
COPY --from=package /opt/svc /opt/svc
# /data belongs to the unprivileged user, so a named volume mounted there
# starts out writable by it.
RUN ln -s /opt/svc/bin/svc.mjs /usr/local/bin/svc \
 && ln -s /opt/svc/bin/svc-mcp.mjs /usr/local/bin/svc-mcp \
 && mkdir /data \
 && chown node:node /data
USER node
WORKDIR /opt/svc
EXPOSE 1025 1080
# The probe reads the same SVC_* variables as svc, so ports, base pathname and
# credentials need no repeating here. It gives each listener 5 s and says which
# failed; the 30 s timeout only catches a probe that could not even start (a
# starved machine).
HEALTHCHECK --interval=10s --timeout=30s --start-period=30s --retries=3 CMD ["svc", "healthcheck"]
# svc is PID 1 and stops on SIGTERM itself: transactions in flight finish, then exit 0.
STOPSIGNAL SIGTERM
CMD ["svc"]
