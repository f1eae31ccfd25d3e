#!/usr/bin/env node
// Packs the packages users install, after `npm run build`:
//   @runplane/contracts  (the typed client, DTOs and bus contracts)  npm pack as it is
//   @runplane/worker-sdk (write workers in JavaScript)                npm pack as it is
//   runplane             (the CLI and the server)                     with the workspace packages it
//     runs (@runplane/platform, the six services...) bundled inside, so its one tarball installs
//     on its own: their third-party dependencies become the CLI's own (one version each).
//
//   node scripts/pack.mjs [--out <dir>]      (default: ./packed)
//
// Prints the tarballs' paths, one per line. Publishing is `npm publish <tarball>`.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outArg = process.argv.indexOf('--out');
const OUT = path.resolve(outArg > 0 ? process.argv[outArg + 1] : path.join(ROOT, 'packed'));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const npm = (args, cwd = ROOT) =>
  execFileSync(NPM, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));

/** Workspace packages by name: their directory and package.json. */
function workspaces() {
  const found = new Map();
  for (const pattern of readJson(path.join(ROOT, 'package.json')).workspaces) {
    const base = path.join(ROOT, pattern.replace(/\/\*$/, ''));
    const dirs = pattern.endsWith('/*')
      ? fs.readdirSync(base).map((d) => path.join(base, d))
      : [base];
    for (const dir of dirs) {
      const file = path.join(dir, 'package.json');
      if (fs.existsSync(file)) found.set(readJson(file).name, { dir, pkg: readJson(file) });
    }
  }
  return found;
}

/** `npm pack` of one workspace package into OUT; returns the tarball's path. */
function packAsIs(dir) {
  const [result] = JSON.parse(npm(['pack', '--json', '--pack-destination', OUT], dir));
  return path.join(OUT, result.filename);
}

/** The files `npm pack` would put in each package's tarball (its `files`, package.json, README), by name. */
function publishedFiles(dirs) {
  const results = JSON.parse(
    npm(['pack', '--dry-run', '--json', ...dirs.flatMap((d) => ['-w', path.relative(ROOT, d)])]),
  );
  return new Map(
    results.map((r) => [
      r.name,
      r.files.map((f) => f.path).filter((p) => !p.endsWith('.tsbuildinfo')),
    ]),
  );
}

/** The CLI with every workspace package it needs bundled, its third-party dependencies hoisted. */
function packCli(all) {
  const cli = all.get('runplane');
  const bundled = new Set();
  const dependencies = {};
  const visit = (name, from) => {
    for (const [dep, version] of Object.entries(all.get(name).pkg.dependencies ?? {})) {
      if (all.has(dep)) {
        if (!bundled.has(dep)) {
          bundled.add(dep);
          visit(dep, dep);
        }
      } else if (dependencies[dep] && dependencies[dep] !== version) {
        throw new Error(`${dep}: ${from} wants ${version}, another package ${dependencies[dep]}`);
      } else {
        dependencies[dep] = version;
      }
    }
  };
  visit('runplane', 'runplane');

  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'runplane-pack-'));
  try {
    const files = publishedFiles([cli.dir, ...[...bundled].map((name) => all.get(name).dir)]);
    const copy = (name, to) => {
      for (const file of files.get(name)) {
        fs.mkdirSync(path.dirname(path.join(to, file)), { recursive: true });
        fs.copyFileSync(path.join(all.get(name).dir, file), path.join(to, file));
      }
    };
    copy('runplane', stage);
    for (const name of bundled) copy(name, path.join(stage, 'node_modules', name));
    const pkg = readJson(path.join(stage, 'package.json'));
    delete pkg.private;
    delete pkg.devDependencies;
    delete pkg.scripts;
    pkg.dependencies = {
      ...Object.fromEntries(Object.entries(dependencies).sort(([a], [b]) => a.localeCompare(b))),
      ...Object.fromEntries([...bundled].sort().map((n) => [n, all.get(n).pkg.version])),
    };
    pkg.bundleDependencies = [...bundled].sort();
    fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
    return packAsIs(stage);
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

const all = workspaces();
for (const name of ['@runplane/contracts', '@runplane/worker-sdk', 'runplane']) {
  if (!fs.existsSync(path.join(all.get(name).dir, 'dist')))
    throw new Error(`${name} is not built: run npm run build first`);
}
fs.mkdirSync(OUT, { recursive: true });
const tarballs = [
  packAsIs(all.get('@runplane/contracts').dir),
  packAsIs(all.get('@runplane/worker-sdk').dir),
  packCli(all),
];
for (const t of tarballs) console.log(t);
