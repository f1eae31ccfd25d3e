import { RunplaneError } from '@runplane/contracts';

/** Position in the newest-first job list: the last job of the previous page. */
export interface ListPosition {
  createdAt: Date;
  id: string;
}

/** Opaque to clients: base64url of `[createdAt ISO, id]`. */
export function encodeCursor(p: ListPosition): string {
  return Buffer.from(JSON.stringify([p.createdAt.toISOString(), p.id])).toString('base64url');
}

export function decodeCursor(cursor: string): ListPosition {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [
      unknown,
      unknown,
    ];
    const createdAt = new Date(String(at));
    if (typeof at === 'string' && typeof id === 'string' && !Number.isNaN(createdAt.getTime()))
      return { createdAt, id };
  } catch {
    // falls through to the error below
  }
  throw RunplaneError.badRequest('cursor is not a value returned as nextCursor', [
    { path: 'cursor', message: 'cursor must be a nextCursor value from a previous page' },
  ]);
}
