# bulkorder as people deploy workers: one image, `bulkorder` as its entry point.
#   docker build -t bulkorder .
#   docker run --rm --env-file .env bulkorder worker --http-port 9464
# docker-compose.yml runs Redis, a worker and the dashboard from it. test/packaging/dockerfile.test.ts
# runs these steps as a script (no Docker engine where the tests run) and starts the entry point.

# --- build: every dependency, the TypeScript compiled to dist/, then only production dependencies kept
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would compile before the sources are copied; bullmq runs without
# msgpackr-extract's native build.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json esbuild.config.js ./
COPY src ./src
COPY jobs ./jobs
# The compiled code, and beside it the Lua scripts it loads (src/lua/, which tsc does not copy); the
# command bundled into dist/bin/ (esbuild.config.js), the entry point below.
RUN npm run build:dist
# valibot (under @bull-board/api) names typescript as an optional peer, so npm marks the compiler
# devOptional and `--omit=dev` keeps it; nothing at run time needs it, so it goes by name.
RUN npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -rf node_modules/typescript node_modules/.bin/tsc node_modules/.bin/tsserver

# --- run: node:20-slim, a non-root user, production dependencies and dist/ only
FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY samples ./samples
# What `--help` points to for every error code.
COPY docs/errors.md ./docs/errors.md
USER node
ENTRYPOINT ["node", "/app/dist/bin/bulkorder.js"]
CMD ["--help"]
