import { PGlite, protocol } from '@electric-sql/pglite';
import { initdbImage } from '../src/initdb-image.js';
import { bindMessage } from '../src/bind-message.js';
import { PreparedPGlite } from '../src/prepared-pglite.js';

describe('bindMessage', () => {
  const cases: Array<[string, Array<string | Uint8Array | null>]> = [
    ['s1', []],
    ['s_2', ['a', '', null, '{"x":"\\u00e9"}']],
    ['named_é', ['é—漢字 🚀', 'x'.repeat(70_000), null]],
    ['bytes', [new Uint8Array([0, 1, 255]), 'after', new Uint8Array(0)]],
  ];

  it('writes the bytes PGlite’s own serializer writes', () => {
    for (const [statement, values] of cases)
      expect(bindMessage(statement, values)).toEqual(
        Buffer.from(protocol.serialize.bind({ statement, values: values as string[] })),
      );
  });

  it('carries multi-byte text whole into the database and back', async () => {
    const pg = await PGlite.create({ loadDataDir: await initdbImage() });
    try {
      const client = new PreparedPGlite(pg).client();
      const texts = ['é—漢字 🚀', 'q"uote\\back', 'x'.repeat(50_000) + '✓', ''];
      const { rows } = await client.query<{ t: string; n: number }>(
        'SELECT t, octet_length(t) AS n FROM unnest($1::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i',
        [texts],
      );
      expect(rows).toEqual(texts.map((t) => ({ t, n: Buffer.byteLength(t) })));
    } finally {
      await pg.close();
    }
  });
});
