import { randomBytes } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A lowercase alphanumeric id like RunPod's endpoint and pod ids (URL- and DNS-safe, so it can
 * name a Kubernetes pod). 16 characters carry ~82 random bits: plenty for names that are also
 * checked against their owner.
 */
export function shortId(length = 16): string {
  const bytes = randomBytes(length);
  let id = '';
  // 252 = 7 × 36: bytes above it would bias the alphabet, so they are re-drawn.
  for (let i = 0; id.length < length; i++) {
    const b = i < bytes.length ? bytes[i] : randomBytes(1)[0];
    if (b < 252) id += ALPHABET[b % 36];
  }
  return id;
}
