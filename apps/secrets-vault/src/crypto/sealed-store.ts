import type { SealedValue } from './master-keyring.js';

/** A table of values sealed with the master keyring, as a master key rotation sees it. */
export interface SealedStore<Row extends SealedValue> {
  /** What the table holds, for the logs. */
  readonly what: string;
  /** Rows sealed with another master key than `currentKeyId`, a batch at a time. */
  findNotWrappedWith(currentKeyId: string, take: number): Promise<Row[]>;
  /** Swaps the row's wrapped data key, only if nobody re-wrapped it meanwhile (replicas may race). */
  rewrap(row: Row, to: Pick<SealedValue, 'wrappedKey' | 'keyId'>): Promise<boolean>;
  /** The additional data the row's ciphertext is bound to (unique per row). */
  aadOf(row: Row): string;
}
