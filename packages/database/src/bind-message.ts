/** A parameter value as the protocol carries it: text, bytes (binary format) or NULL. */
export type BindValue = string | ArrayBufferView | ArrayBuffer | null;

const asBytes = (v: ArrayBufferView | ArrayBuffer): Buffer =>
  ArrayBuffer.isView(v)
    ? Buffer.from(v.buffer, v.byteOffset, v.byteLength)
    : Buffer.from(v as ArrayBuffer);

/**
 * The extended protocol's Bind message for the unnamed portal of a prepared statement, with
 * text or binary parameters and text results — written into one buffer sized up front.
 * PGlite's own serializer measures each string's UTF-8 length character by character in
 * JavaScript and grows its buffer by copying: a job insert batch with chat-sized inputs (a
 * text[] of 40 KiB strings) spent a fifth of the server's CPU there (docs/performance.md).
 */
export function bindMessage(statement: string, params: readonly BindValue[]): Buffer {
  const values = params.map((v) => (v === null || typeof v === 'string' ? v : asBytes(v)));
  const sizes = values.map((v) =>
    v === null ? -1 : typeof v === 'string' ? Buffer.byteLength(v) : v.byteLength,
  );
  const count = values.length;
  const statementSize = Buffer.byteLength(statement);
  // length, portal "" + NUL, statement + NUL, format codes, values, result format count
  let size = 4 + 1 + statementSize + 1 + 2 + 2 * count + 2 + 2;
  for (const s of sizes) size += 4 + Math.max(s, 0);
  const message = Buffer.allocUnsafe(1 + size);
  let at = message.writeUInt8(0x42, 0); // 'B'
  at = message.writeInt32BE(size, at);
  at = message.writeUInt8(0, at); // the unnamed portal
  at += message.write(statement, at, 'utf8');
  at = message.writeUInt8(0, at);
  at = message.writeUInt16BE(count, at);
  for (const v of values)
    at = message.writeInt16BE(v === null || typeof v === 'string' ? 0 : 1, at);
  at = message.writeUInt16BE(count, at);
  values.forEach((v, i) => {
    at = message.writeInt32BE(sizes[i], at);
    if (typeof v === 'string') at += message.write(v, at, 'utf8');
    else if (v !== null) at += v.copy(message, at);
  });
  at = message.writeInt16BE(0, at); // results in text format
  if (at !== message.length)
    throw new Error(`bind message: wrote ${at} of ${message.length} bytes`);
  return message;
}
