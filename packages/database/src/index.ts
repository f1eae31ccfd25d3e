export * from './embedded-postgres.js';
export * from './target.js';
export * from './sql-session.js';
export * from './migrate.js';
export * from './prisma-client.js';
export * from './database.module.js';
export * from './outbox/outbox-store.js';
export * from './outbox/outbox-relay.js';
