import { Transform } from 'class-transformer';

/**
 * A `?flag=true|false` query boolean (RunPod's include* flags, default false). `true`/`1` and
 * `false`/`0` are converted; anything else stays a string so @IsBoolean() rejects it with a 400.
 */
export const QueryFlag = () =>
  Transform(({ value }) => {
    const v = Array.isArray(value) ? value[value.length - 1] : value;
    if (v === 'true' || v === '1' || v === '') return true;
    if (v === 'false' || v === '0') return false;
    return v;
  });
