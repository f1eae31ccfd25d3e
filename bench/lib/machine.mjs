// What the results were measured on: the machine, its load, and the versions of everything involved.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { benchRoot } from './runplane.mjs';

export function machine() {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: round1(os.totalmem() / 2 ** 30),
    platform: `${os.type()} ${os.release()}`,
    loadAverage: loadAverage(),
  };
}

let ticksPerSecond;

/**
 * A process's name (`comm`) and its CPU time so far in seconds (user + system, all its threads),
 * from /proc/<pid>/stat; throws when the process has gone.
 */
export function processCpu(pid) {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The name is in parentheses and may itself hold spaces or parentheses: fields follow the last.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return {
    comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
    seconds: (Number(fields[11]) + Number(fields[12])) / ticksPerSecond,
  };
}

/** 1, 5 and 15 minute load averages (runnable processes; 2 means both cores busy). */
export const loadAverage = () => os.loadavg().map(round1);

const round1 = (x) => Math.round(x * 10) / 10;

function packageVersion(name) {
  try {
    return JSON.parse(
      fs.readFileSync(path.join(benchRoot, 'node_modules', name, 'package.json'), 'utf8'),
    ).version;
  } catch {
    return undefined;
  }
}

function run(cmd, args) {
  try {
    return execFileSync(cmd, args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

/** What a local server answers on connect (NATS: INFO {json}) or to `write`, once `until` matches. */
function ask(port, write, until) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.on('error', () => resolve(undefined));
    socket.on('connect', () => {
      if (write) socket.write(write);
    });
    socket.on('data', (d) => {
      text += d;
      if (until.test(text)) {
        socket.destroy();
        resolve(text);
      }
    });
  });
}

export async function versions() {
  const pgBase = process.env.RUNPLANE_LOCAL_PG ?? 'postgresql://postgres@127.0.0.1:5432';
  const nats = await ask(4222, undefined, /\r\n/);
  const redis = await ask(6379, 'INFO server\r\n', /redis_version:\S+\r\n/);
  return {
    runplane: JSON.parse(fs.readFileSync(path.join(benchRoot, 'package.json'), 'utf8')).version,
    runplaneCommit: run('git', ['-C', benchRoot, 'rev-parse', '--short', 'HEAD']),
    node: process.version,
    postgresql: run('psql', [`${pgBase}/postgres`, '-Atc', 'SHOW server_version']),
    nats: nats?.match(/"version":"([^"]+)"/)?.[1],
    redis: redis?.match(/redis_version:(\S+)/)?.[1],
    bullmq: packageVersion('bullmq'),
    ioredis: packageVersion('ioredis'),
    pgBoss: packageVersion('pg-boss'),
    autocannon: packageVersion('autocannon'),
  };
}
