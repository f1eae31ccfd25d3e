// Makes sure a Redis answers on 127.0.0.1:6379 for the BullMQ comparison: if none does, installs
// redis-server from Debian when it is missing and starts it on loopback only, without persistence.
// A Redis started here is shut down again by the returned stop().
import { execFileSync, spawnSync } from 'node:child_process';
import net from 'node:net';
import { sleep } from './measure.mjs';

export const REDIS = { host: '127.0.0.1', port: 6379 };

function ping() {
  return new Promise((resolve) => {
    const socket = net.connect(REDIS.port, REDIS.host);
    let answer = '';
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => {
      answer += d;
      if (answer.includes('\r\n')) {
        socket.destroy();
        resolve(answer.startsWith('+PONG'));
      }
    });
  });
}

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

export async function ensureRedis(log) {
  if (await ping()) return { started: false, stop: async () => {} };
  if (!has('redis-server')) {
    log(
      'Redis is not installed: installing it from Debian (apt-get update && apt-get install -y redis-server)',
    );
    execFileSync(
      'sh',
      [
        '-c',
        'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server',
      ],
      { stdio: 'inherit' },
    );
    await sleep(500);
    if (await ping()) return { started: false, stop: async () => {} }; // the package started its service
  }
  log(
    `no Redis answers on ${REDIS.host}:${REDIS.port}: starting redis-server on loopback (no persistence)`,
  );
  execFileSync(
    'redis-server',
    [
      '--bind',
      REDIS.host,
      '--port',
      String(REDIS.port),
      '--daemonize',
      'yes',
      '--save',
      '',
      '--appendonly',
      'no',
    ],
    { stdio: 'inherit' },
  );
  for (let i = 0; i < 50 && !(await ping()); i++) await sleep(100);
  if (!(await ping())) throw new Error('redis-server did not start');
  return {
    started: true,
    stop: async () => {
      spawnSync('redis-cli', ['-h', REDIS.host, '-p', String(REDIS.port), 'shutdown', 'nosave'], {
        stdio: 'ignore',
      });
    },
  };
}
