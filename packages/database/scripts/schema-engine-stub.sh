#!/bin/sh
# `prisma generate` insists on locating a schema-engine binary but never runs it. These machines
# cannot download Prisma's native engines, so this stub satisfies the lookup. Migrations run
# through @prisma/schema-engine-wasm instead (src/migrations/).
echo "herald: the native Prisma schema engine is not used; run migrations with 'pnpm migrate'" >&2
exit 1
