import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// A shutdown that hangs ends the process after RUNPLANE_SHUTDOWN_TIMEOUT_MS, saying what it was
// doing and what was still open, even with logging off (test servers run silent).
describe('a graceful shutdown that hangs', () => {
  it('exits with 1 and names its stage and the resources still pending', async () => {
    const platform = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    // A request whose headers never end keeps its connection busy: the HTTP close waits for it.
    const script = `
      import net from 'node:net';
      import { startTestServer } from ${JSON.stringify(platform)};
      const server = await startTestServer([], { RUNPLANE_SHUTDOWN_TIMEOUT_MS: '1000' });
      const socket = net.connect(server.port, '127.0.0.1');
      socket.on('error', () => {});
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write('GET /health HTTP/1.1\\r\\nhost: x\\r\\n');
      await new Promise((resolve) => setTimeout(resolve, 200)); // (the request's first bytes in)
      await server.stop();
      console.log('stopped without waiting');
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(output).toContain(
      'graceful shutdown took longer than 1000 ms while closing HTTP, bus handlers and services',
    );
    expect(output).toMatch(/pending: \{.*"TCPSocketWrap":\d/);
    expect(output).not.toContain('stopped without waiting');
    expect(code).toBe(1);
  }, 60_000);
});
