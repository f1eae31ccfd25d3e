import { ValidateBy } from 'class-validator';

/** The rule name the validation pipe looks for (with `isStringMap`): see `KeptAsSent`. */
export const KEPT_AS_SENT = 'keptAsSent';

/**
 * A user's data that the platform carries without looking inside: a job's input, a worker's
 * result. The validation pipe hands it on as sent — never copied key by key, never stripped of
 * keys such as `constructor`, `prototype` or `toString` (ordinary keys in a user's JSON, which
 * class-transformer and Nest's prototype guard would drop) — and only the property's other rules
 * (`IsObject`, say) check it.
 */
export function KeptAsSent(): PropertyDecorator {
  return ValidateBy({ name: KEPT_AS_SENT, validator: { validate: () => true } });
}
