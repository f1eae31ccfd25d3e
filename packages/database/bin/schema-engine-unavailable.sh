#!/bin/sh
# Stands in for Prisma's native schema engine, which cannot be downloaded on offline machines.
# `prisma generate` only needs the file to exist; commands that would run it must fail loudly
# instead of silently doing nothing. Use `runplane migrate` (apply) and `runplane-prisma
# migrate-create` (generate SQL with the wasm engine) instead. See docs/database.md.
echo "runplane: Prisma's native schema engine is not available offline; use 'runplane migrate' or 'runplane-prisma migrate-create' (docs/database.md)" >&2
exit 1
