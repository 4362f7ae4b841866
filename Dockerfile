# Parley's production image: built with the dev toolchain, run as plain JavaScript without tsx.
# Not built on the development machines (no Docker daemon there); test/container.test.ts checks its shape.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY . .
# npm ci runs `prepare` (prisma generate + codegen); then compile src/ to dist/ and drop dev dependencies,
# and the Node.js that npm ci installs for npm's scripts (decision 0268): the image runs its base's, the same major.
RUN npm ci --no-audit --no-fund \
 && npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/node-linux-* node_modules/.bin/node

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production PORT=4000 DATA_DIR=/app/.data
WORKDIR /app
# The Prisma CLI (migrate deploy at start-up) needs prisma.config.ts, prisma/ and the wasm engine shim.
COPY --from=build /app/package.json /app/prisma.config.ts ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/prisma ./prisma
COPY --from=build /app/scripts/schema-engine-shim.mjs ./scripts/schema-engine-shim.mjs
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 4000
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/src/main.js"]
