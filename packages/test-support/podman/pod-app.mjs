// A Pod's program for the docker provider's tests (the test image runs it with `node`). HTTP on
// $PORT (8080):
//   GET /              {"hello": "runplane", "pod": $RUNPOD_POD_ID}
//   GET /count         counts in $COUNT_DIR/count (/workspace): shows what a volume keeps
//   GET /exit?code=N   answers, then exits with code N
//   GET /env?name=X    {"X": value or null}
// Prints one line on stdout and one on stderr when it listens; SIGTERM ends it with code 0 unless
// IGNORE_SIGTERM=1 (then only the engine's SIGKILL after the grace does).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const port = Number(process.env.PORT || 8080);
const countFile = path.join(process.env.COUNT_DIR || '/workspace', 'count');

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://pod');
  const send = (body) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(body));
  };
  if (url.pathname === '/count') {
    let count = 0;
    try {
      count = Number(fs.readFileSync(countFile, 'utf8')) || 0;
    } catch {
      /* first time */
    }
    count += 1;
    fs.mkdirSync(path.dirname(countFile), { recursive: true });
    fs.writeFileSync(countFile, String(count));
    return send({ count });
  }
  if (url.pathname === '/exit') {
    const code = Number(url.searchParams.get('code') ?? 0);
    console.log(`pod-app exiting with ${code}`);
    return res.end('bye', () => process.exit(code));
  }
  if (url.pathname === '/env') {
    const name = url.searchParams.get('name');
    return send({ [name]: process.env[name] ?? null });
  }
  send({ hello: 'runplane', pod: process.env.RUNPOD_POD_ID ?? null });
});
server.listen(port, () => {
  console.log(`pod-app listening on ${port}`);
  console.error('pod-app stderr line');
});
process.on('SIGTERM', () => {
  console.log('pod-app got SIGTERM');
  if (process.env.IGNORE_SIGTERM !== '1') process.exit(0);
});
