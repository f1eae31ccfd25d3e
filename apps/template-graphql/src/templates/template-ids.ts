import { randomBytes } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** RunPod-like template ids: lowercase alphanumerics, here 16 of them (~82 random bits). */
export function newTemplateId(length = 16): string {
  let id = '';
  while (id.length < length) {
    for (const byte of randomBytes(length)) {
      // 252 = 7 × 36: dropping larger bytes keeps every character equally likely.
      if (byte < 252 && id.length < length) id += ALPHABET[byte % 36];
    }
  }
  return id;
}
