// Lets the Prisma CLI (`prisma migrate deploy|status`) work where its native engine is installed.
// Runplane applies the same migrations itself with `runplane migrate` (docs/database.md).
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? '' },
});
