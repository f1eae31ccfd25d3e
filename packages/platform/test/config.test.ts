import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../src/config/runplane-config.js';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect([
      c.PORT,
      c.HOST,
      c.RUNPLANE_DATA_DIR,
      c.RUNPLANE_MIGRATE_ON_START,
      c.LOG_LEVEL,
      c.RUNPLANE_BUS_NAMESPACE,
    ]).toEqual([undefined, '127.0.0.1', './.runplane', true, 'info', 'runplane']);
  });

  it('converts numbers and booleans from strings', () => {
    const c = loadConfig({
      PORT: '9000',
      RUNPLANE_MIGRATE_ON_START: 'false',
      RUNPLANE_LOG_REQUESTS: '1',
    });
    expect([c.PORT, c.RUNPLANE_MIGRATE_ON_START, c.RUNPLANE_LOG_REQUESTS]).toEqual([
      9000,
      false,
      true,
    ]);
  });

  it('lists every problem at once, naming the variable and the value', () => {
    expect(() => loadConfig({ PORT: 'abc', LOG_LEVEL: 'loud' })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: 'abc', LOG_LEVEL: 'loud' });
    } catch (err) {
      expect((err as Error).message).toMatch(/PORT: .*integer.*\(got "abc"\)/);
      expect((err as Error).message).toMatch(/LOG_LEVEL: .*\(got "loud"\)/);
    }
  });

  it('never prints a secret value', () => {
    try {
      loadConfig({ RUNPLANE_API_KEY: 'short' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect((err as Error).message).toContain('RUNPLANE_API_KEY');
      expect((err as Error).message).not.toContain('short');
    }
  });
});
