// Preloaded (NODE_OPTIONS=--require) into every Node process of a benchmarked server when
// `--profile-dir` is given: Node 20 refuses --cpu-prof in NODE_OPTIONS, and the cluster's services
// are started by scripts/cluster-up.mjs, not by us. SIGUSR2 starts a CPU profile (so start-up is
// left out: the benchmark signals the phase it measures); it is written to
// RUNPLANE_BENCH_PROFILE_DIR when the process exits (the in-thread inspector session answers
// synchronously, so this works inside the 'exit' handler).
const fs = require('node:fs');
const path = require('node:path');
const { Session } = require('node:inspector');

const dir = process.env.RUNPLANE_BENCH_PROFILE_DIR;
if (dir) {
  let session;
  process.on('SIGUSR2', () => {
    if (session) return;
    session = new Session();
    session.connect();
    session.post('Profiler.enable');
    session.post('Profiler.setSamplingInterval', { interval: 1000 });
    session.post('Profiler.start');
  });
  process.on('exit', () => {
    session?.post('Profiler.stop', (err, result) => {
      if (err) return;
      const args = process.argv
        .slice(1)
        .map((a) => path.basename(a))
        .join('_')
        .replace(/[^\w.-]+/g, '_')
        .slice(0, 80);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(
        path.join(dir, `${args}-${process.pid}.cpuprofile`),
        JSON.stringify(result.profile),
      );
    });
  });
}
